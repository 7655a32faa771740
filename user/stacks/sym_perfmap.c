/* sym_perfmap.c - parses, sorts and searches one perf map file, reloading it when it grows. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/grow.h"
#include "user/stacks/sym_perfmap.h"
#include "user/stacks/sym_search.h"

/* How many earlier-starting entries a lookup looks back over for one that still contains the
 * address; only overlapping (rewritten) regions need more than one. */
#define OVERLAP_SCAN 16

struct jit_sym {
	uint64_t start, size;
	uint32_t seq;		/* line number: later lines win overlaps */
	char *name;
};

struct sym_perfmap {
	char *path;
	struct jit_sym *syms;
	size_t n;
	off_t size;		/* of the file at the last read; -1 = never read */
	struct timespec mtime;
};

static void clear(struct sym_perfmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->syms[i].name);
	free(m->syms);
	m->syms = NULL;
	m->n = 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int load(struct sym_perfmap *m)
{
	FILE *f = fopen(m->path, "re");
	size_t cap = 0, lcap = 0;
	char *line = NULL;
	int err = 0;

	clear(m);
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (getline(&line, &lcap, f) > 0) {
		char *end, *p;
		uint64_t start, size;

		start = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		size = strtoull(end + 1, &p, 16);
		if (p == end + 1 || *p != ' ' || !size)
			continue;
		p++;
		p[strcspn(p, "\n")] = '\0';
		if (grow_array((void **)&m->syms, &cap, m->n + 1, sizeof(*m->syms), 256)) {
			err = -ENOMEM;
			break;
		}
		m->syms[m->n].name = strdup(p);
		if (!m->syms[m->n].name) {
			err = -ENOMEM;
			break;
		}
		m->syms[m->n].start = start;
		m->syms[m->n].size = size;
		m->syms[m->n].seq = (uint32_t)m->n;
		m->n++;
	}
	free(line);
	fclose(f);
	if (err)
		clear(m);
	else
		qsort(m->syms, m->n, sizeof(*m->syms), cmp_start);
	return err;
}

struct sym_perfmap *sym_perfmap__new(const char *path)
{
	struct sym_perfmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strdup(path);
	if (!m->path) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->size = -1;
	return m;
}

static bool changed(struct sym_perfmap *m)
{
	struct stat st;

	if (stat(m->path, &st))
		st.st_size = 0, st.st_mtim = (struct timespec){ 0 };
	if (st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec)
		return false;
	m->size = st.st_size;
	m->mtime = st.st_mtim;
	return true;
}

const char *sym_perfmap__find(struct sym_perfmap *m, uint64_t addr)
{
	const struct jit_sym *best = NULL;
	size_t lo;

	if (changed(m) && load(m))
		return NULL;
	lo = sym_search__upto(m->syms, m->n, sizeof(*m->syms), offsetof(struct jit_sym, start), addr);
	for (size_t i = lo; i > 0 && lo - i < OVERLAP_SCAN; i--) {
		const struct jit_sym *s = &m->syms[i - 1];

		if (addr - s->start < s->size && (!best || s->seq > best->seq))
			best = s;
	}
	return best ? best->name : NULL;
}

const char *sym_perfmap__path(const struct sym_perfmap *m)
{
	return m->path;
}

void sym_perfmap__free(struct sym_perfmap *m)
{
	if (!m)
		return;
	clear(m);
	free(m->path);
	free(m);
}
