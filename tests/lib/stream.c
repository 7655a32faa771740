/* stream.c - record streams on disk (stream.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/stream.h"

#define MAGIC "LXSTRM01"

struct header {
	char magic[8];
	uint32_t ncpus, pad;
	uint64_t start, end;
};

struct entry_head {
	uint32_t size, cpu;
};

struct lost_body {
	uint64_t ts, n;
};

static struct stream_entry *append(struct stream *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct stream_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	return &s->v[s->n++];
}

int stream__add_record(struct stream *s, const struct lx_rec *r, size_t size)
{
	struct stream_entry *e;
	void *copy;

	if (!size || size > UINT32_MAX)
		return -EINVAL;
	copy = malloc(size);
	e = copy ? append(s) : NULL;
	if (!e) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, r, size);
	e->rec = copy;
	e->size = size;
	return 0;
}

int stream__add_lost(struct stream *s, uint32_t cpu, uint64_t ts, uint64_t n)
{
	struct stream_entry *e = append(s);

	if (!e)
		return -ENOMEM;
	e->cpu = cpu;
	e->ts = ts;
	e->lost = n;
	return 0;
}

static size_t padded(size_t size)
{
	return (size + 7) & ~(size_t)7;
}

int stream__save(const struct stream *s, const char *path)
{
	struct header h = { .ncpus = s->ncpus, .start = s->start, .end = s->end };
	static const char zeros[8];
	FILE *f = fopen(path, "we");
	bool ok;

	if (!f)
		return -errno;
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	ok = fwrite(&h, sizeof(h), 1, f) == 1;
	for (size_t i = 0; i < s->n && ok; i++) {
		const struct stream_entry *e = &s->v[i];
		struct entry_head eh = { .size = (uint32_t)e->size, .cpu = e->cpu };

		ok = fwrite(&eh, sizeof(eh), 1, f) == 1;
		if (ok && e->rec) {
			ok = fwrite(e->rec, e->size, 1, f) == 1 &&
			     fwrite(zeros, padded(e->size) - e->size, 1, f) <= 1;
		} else if (ok) {
			struct lost_body lb = { .ts = e->ts, .n = e->lost };

			ok = fwrite(&lb, sizeof(lb), 1, f) == 1;
		}
	}
	if (fclose(f) || !ok)
		return -EIO;
	return 0;
}

int stream__load(struct stream *s, const char *path)
{
	struct header h;
	struct entry_head eh;
	FILE *f = fopen(path, "re");
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, MAGIC, sizeof(h.magic))) {
		fclose(f);
		return -EPROTO;
	}
	s->ncpus = h.ncpus;
	s->start = h.start;
	s->end = h.end;
	while (!err && fread(&eh, sizeof(eh), 1, f) == 1) {
		if (!eh.size) {
			struct lost_body lb;

			err = fread(&lb, sizeof(lb), 1, f) == 1 ? 0 : -EPROTO;
			if (!err)
				err = stream__add_lost(s, eh.cpu, lb.ts, lb.n);
			continue;
		}
		if (eh.size < sizeof(struct lx_rec) || eh.size > (1u << 20)) {
			err = -EPROTO;
			break;
		}
		void *rec = malloc(padded(eh.size));
		struct stream_entry *e = rec ? append(s) : NULL;

		if (!e) {
			free(rec);
			err = -ENOMEM;
			break;
		}
		/* Owned by the stream from here, even when the read fails. */
		e->rec = rec;
		e->size = eh.size;
		if (fread(rec, padded(eh.size), 1, f) != 1)
			err = -EPROTO;
	}
	if (!err && ferror(f))
		err = -EIO;
	fclose(f);
	if (err)
		stream__free(s);
	return err;
}

void stream__free(struct stream *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((void *)s->v[i].rec);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
