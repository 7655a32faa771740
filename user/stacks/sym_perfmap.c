/* sym_perfmap.c - indexes one perf map file as it grows and looks names up in it. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "user/stacks/sym_perfmap.h"
#include "user/stacks/sym_search.h"

/* How many earlier-starting entries a lookup looks back over for one that still contains the
 * address; only overlapping (rewritten) regions need more than one. */
#define OVERLAP_SCAN 16
#define NAME_SHIFT 16	/* jit_sym.name: file offset << NAME_SHIFT | length */
#define MIN_CAP 1024

struct jit_sym {
	uint64_t start;
	uint32_t size;
	uint32_t seq;		/* line number: later lines win overlaps */
	uint64_t name;		/* where the name is in the file: offset << NAME_SHIFT | length */
};

struct sym_perfmap {
	struct sym_perfmap_env *env;
	char *path;
	uid_t uid;
	int fd;			/* -1 until opened */
	bool done;		/* refused, or read as far as allowed: not read again */
	uint64_t read_to;	/* where the next read starts: after the last whole line */
	struct jit_sym *syms;	/* [0, sorted) by (start, seq); the rest as read */
	size_t n, sorted, cap;
	uint32_t seq;
};

static int cmp_start(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Stops reading m for good, naming why once. */
static void give_up(struct sym_perfmap *m, int err)
{
	m->done = true;
	if (m->env->refused)
		foreign_log__note(m->env->refused, m->path, err);
}

static void drop_index(struct sym_perfmap *m)
{
	m->env->budget += m->cap * sizeof(*m->syms);
	free(m->syms);
	m->syms = NULL;
	m->n = m->sorted = m->cap = 0;
}

/* Room for one more entry, out of the env's budget; false when it is spent. */
static bool reserve(struct sym_perfmap *m)
{
	size_t ncap = m->cap ? m->cap + m->cap / 2 : MIN_CAP;
	uint64_t bytes;
	void *p;

	if (m->n < m->cap)
		return true;
	if ((ncap - m->cap) * sizeof(*m->syms) > m->env->budget)
		ncap = m->cap + m->env->budget / sizeof(*m->syms);
	if (ncap <= m->cap)
		return false;
	bytes = (ncap - m->cap) * sizeof(*m->syms);
	p = realloc(m->syms, ncap * sizeof(*m->syms));
	if (!p)
		return false;
	m->syms = p;
	m->cap = ncap;
	m->env->budget -= bytes;
	return true;
}

/* One of the line's two numbers, read as perf reads them (strtoull in base 16): blanks before
 * it, an optional '+' and "0x" or "0X", then hex digits, leading zeros any number of them. A
 * '-' (strtoull's negation: an address wrapped around, a size of most of the address space)
 * and a value past 64 bits name no code and are refused, as is a number without digits. The
 * character after the number, whatever it is, is the separator perf skips. false when there
 * is no number or no separator. */
static bool number(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s, *digits;
	uint64_t v = 0;

	while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
		p++;
	if (p < end && *p == '+')
		p++;
	if (end - p > 2 && p[0] == '0' && (p[1] | 0x20) == 'x' && isxdigit((unsigned char)p[2]))
		p += 2;
	for (digits = p; p < end && isxdigit((unsigned char)*p); p++) {
		unsigned d = *p <= '9' ? (unsigned)(*p - '0') : (unsigned)((*p | 0x20) - 'a' + 10);

		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (p == digits || p == end)
		return false;
	*s = p + 1;
	*out = v;
	return true;
}

/* One "START SIZE NAME" line into the index; other lines are skipped. As perf takes it, NAME
 * is the rest of the line after the one separator following SIZE, blanks and all. */
static int add_line(void *ctx, char *line, size_t len, uint64_t off)
{
	struct sym_perfmap *m = ctx;
	const char *p = line, *end = line + len;
	uint64_t start, size;
	size_t name_len;

	if (!number(&p, end, &start) || !number(&p, end, &size) || !size || size > UINT32_MAX)
		return 0;
	name_len = (size_t)(end - p);
	if (!name_len)
		return 0;
	if (!reserve(m))
		return -EFBIG;
	m->syms[m->n++] = (struct jit_sym){
		.start = start, .size = (uint32_t)size, .seq = m->seq++,
		.name = (off + (uint64_t)(p - line)) << NAME_SHIFT | name_len,
	};
	return 0;
}

/* Sorts the entries read last and merges them into the sorted ones. */
static int merge_tail(struct sym_perfmap *m)
{
	size_t nt = m->n - m->sorted, i = m->sorted, j = nt, k = m->n;
	struct jit_sym *tail;

	if (!nt)
		return 0;
	qsort(m->syms + m->sorted, nt, sizeof(*m->syms), cmp_start);
	if (!m->sorted || cmp_start(&m->syms[m->sorted - 1], &m->syms[m->sorted]) <= 0) {
		m->sorted = m->n;
		return 0;
	}
	tail = malloc(nt * sizeof(*tail));
	if (!tail)
		return -ENOMEM;
	memcpy(tail, m->syms + m->sorted, nt * sizeof(*tail));
	/* Backwards, so the sorted head is never overwritten before it is read. */
	while (j > 0) {
		if (i > 0 && cmp_start(&m->syms[i - 1], &tail[j - 1]) > 0)
			m->syms[--k] = m->syms[--i];
		else
			m->syms[--k] = tail[--j];
	}
	free(tail);
	m->sorted = m->n;
	return 0;
}

/* Opens the file on first use and reads what was appended since the last read. */
static void refresh(struct sym_perfmap *m)
{
	const struct foreign_rules rules = {
		.sz = sizeof(rules), .resolve = FOREIGN_RESOLVE_STRICT, .owner = m->uid,
		.single_link = true,
	};
	uint64_t limit;
	struct stat st;
	int err;

	if (m->done)
		return;
	if (m->fd < 0) {
		if (m->env->dirfd < 0)
			return;
		m->fd = foreign_file__open(m->env->dirfd, strrchr(m->path, '/') + 1, &rules, &st);
		if (m->fd == -ENOENT)
			return;	/* not written yet */
		if (m->fd < 0) {
			give_up(m, m->fd);
			return;
		}
	} else if (fstat(m->fd, &st)) {
		return;
	}
	if ((uint64_t)st.st_size < m->read_to) {
		/* Runtimes only append. A map that shrinks is being rewritten under us; reading it
		 * anew each time would let its writer make every lookup parse it all again. */
		drop_index(m);
		give_up(m, -ESTALE);
		return;
	}
	if ((uint64_t)st.st_size == m->read_to)
		return;
	limit = (uint64_t)st.st_size < SYM_PERFMAP_MAX_BYTES ? (uint64_t)st.st_size :
							       SYM_PERFMAP_MAX_BYTES;
	err = foreign_file__lines(m->fd, m->read_to, limit, SYM_PERFMAP_MAX_LINE, add_line, m,
				  &m->read_to);
	if (merge_tail(m) && m->n) {
		qsort(m->syms, m->n, sizeof(*m->syms), cmp_start);
		m->sorted = m->n;
	}
	if (!err && limit < (uint64_t)st.st_size)
		err = -EFBIG;
	if (err)
		give_up(m, err);
}

struct sym_perfmap *sym_perfmap__new(struct sym_perfmap_env *env, pid_t pid, uid_t uid)
{
	struct sym_perfmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->env = env;
	m->uid = uid;
	m->fd = -1;
	if (asprintf(&m->path, "%s/perf-%d.map", env->dir, (int)pid) < 0) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

const char *sym_perfmap__find(struct sym_perfmap *m, uint64_t addr)
{
	const struct jit_sym *best = NULL;
	size_t lo, len;

	refresh(m);
	lo = sym_search__upto(m->syms, m->sorted, sizeof(*m->syms), offsetof(struct jit_sym, start),
			      addr);
	for (size_t i = lo; i > 0 && lo - i < OVERLAP_SCAN; i--) {
		const struct jit_sym *s = &m->syms[i - 1];

		if (addr - s->start < s->size && (!best || s->seq > best->seq))
			best = s;
	}
	if (!best)
		return NULL;
	len = (size_t)(best->name & ((1u << NAME_SHIFT) - 1));
	if (pread(m->fd, m->env->name, len, (off_t)(best->name >> NAME_SHIFT)) != (ssize_t)len)
		return NULL;
	m->env->name[len] = '\0';
	return m->env->name;
}

bool sym_perfmap__given_up(const struct sym_perfmap *m)
{
	return m->done;
}

bool sym_perfmap__absent(const struct sym_perfmap *m)
{
	return m->fd < 0 && !m->done;
}

const char *sym_perfmap__path(const struct sym_perfmap *m)
{
	return m->path;
}

void sym_perfmap__free(struct sym_perfmap *m)
{
	if (!m)
		return;
	drop_index(m);
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	free(m);
}
