/* reader.c - the go1.23 decoder's front (reader.h): a generation read whole and checked
 * (reader_gen.c), then its events handed out in file order, batch by batch, then its CPU
 * samples; and the reader's life (docs/format.md §18.9). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/go123/reader_core.h"
#include "format/go123/state.h"
#include "lib/u64map.h"

int go123_reader__next_generation(struct go123_reader *r)
{
	uint8_t hdr[GO123_HEADER_LEN];
	ssize_t n;
	int ret;

	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (!r->started) {
		r->started = true;
		n = go123_reader_take(r, hdr, sizeof(hdr));
		if (n < 0)
			return (int)n;
		if (!go123_reader__is_header(hdr, (size_t)n))
			return go123_reader_fail(r, -EINVAL, 0,
					       "not a go1.23 execution trace (bad header)");
	}
	ret = go123_reader_read_generation(r);
	if (ret <= 0)
		r->open = false;
	return ret;
}

int go123_reader__next(struct go123_reader *r, struct go123_event *e)
{
	int ret;

	for (;;) {
		if (r->err)
			return r->err;
		if (!r->open) {
			if ((ret = go123_reader__next_generation(r)) <= 0)
				return ret;
			continue;
		}
		while (r->bi < r->nb && r->boff == r->b[r->bi].len) {
			r->bi++;
			r->boff = 0;
		}
		if (r->bi < r->nb) {
			const struct batch *b = &r->b[r->bi];
			uint64_t dt;
			size_t n = go123_reader_decode(r, b, r->boff, e, &dt);

			if (!n)
				return r->err;	/* checked already: cannot happen */
			if (!r->boff)
				r->last = b->base;
			r->last += dt;
			r->boff += n;
			e->ts = r->last;
			e->gen = r->gen;
			e->m = b->m;
			return 1;
		}
		if (r->si < r->nsmp) {
			const struct sample *s = &r->smp[r->si++];

			*e = (struct go123_event){ .gen = r->gen, .ts = s->args[0], .off = s->off,
						 .m = s->args[1], .type = GO123_EV_CPU_SAMPLE,
						 .nargs = 5 };
			memcpy(e->args, s->args, sizeof(s->args));
			return 1;
		}
		r->open = false;
	}
}

uint64_t go123_reader__generation(const struct go123_reader *r)
{
	return r->gen;
}

uint64_t go123_reader__gen_start(const struct go123_reader *r)
{
	return r->gen_start;
}

uint64_t go123_reader__gen_end(const struct go123_reader *r)
{
	return r->gen_end;
}

uint64_t go123_reader__gen_events(const struct go123_reader *r)
{
	return r->gen_events;
}

void go123_reader__gen_split(const struct go123_reader *r, uint64_t *batches, uint64_t *events)
{
	*batches = r->nbatches;
	*events = r->gen_timed;
}

uint64_t go123_reader__generations(const struct go123_reader *r)
{
	return r->ngens;
}

const char *go123_reader__error(const struct go123_reader *r)
{
	return r->err ? r->msg : "";
}

bool go123_reader__is_header(const uint8_t *p, size_t len)
{
	return len >= GO123_HEADER_LEN && (!memcmp(p, "go 1.22 trace\0\0\0", GO123_HEADER_LEN) ||
					 !memcmp(p, "go 1.23 trace\0\0\0", GO123_HEADER_LEN));
}

struct go123_reader *go123_reader__new(const struct go123_reader_opts *o)
{
	struct go123_reader *r;

	if (!o || o->sz < sizeof(*o) || o->fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = o->fd;
	r->limit = o->limit;
	r->budget = o->gen_budget ? o->gen_budget : GO123_READER_BUDGET;
	r->started = o->header_read;
	r->pos = !o->header_read ? 0 : o->start ? o->start : GO123_HEADER_LEN;
	r->in = malloc(IN_SIZE);
	r->spbuf = malloc(GO123_MAX_BATCH);
	r->strs = u64map__new();
	r->stks = u64map__new();
	r->pcs = u64map__new();
	r->state = go123_state__new(0);
	if (!r->in || !r->spbuf || !r->strs || !r->stks || !r->pcs || !r->state) {
		go123_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void go123_reader__free(struct go123_reader *r)
{
	if (!r)
		return;
	free(r->in);
	free(r->spbuf);
	free(r->g);
	free(r->b);
	free(r->str);
	free(r->fr);
	free(r->smp);
	free(r->sb);
	go123_state__free(r->state);
	u64map__free(r->strs);
	u64map__free(r->stks);
	u64map__free(r->pcs);
	free(r);
}
