/* maps_proc.c - a process's code mappings read from /proc for a kernel without the VMA
 * iterator (maps_proc.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>

#include "bpf/unwind.h"
#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/capture/maps_proc.h"
#include "user/proc/procmaps.h"

/* Not the kernel's: an exec's read, whose image is a snapshot. */
#define WANT_SNAPSHOT (1u << 31)
/* Processes whose mappings are kept to report only new ones. Nothing says when a process is
 * gone (an exit record names a thread), so past this many one is forgotten, which costs its
 * next answer a report of every mapping (the consumers take a repeat as it is). */
#define KNOWN_MAX 8192
/* User addresses end here (x86_64); the vsyscall page above is in no process's tree. */
#define USER_END (1ull << 47)

/* A request not answered yet: the latest of its process's, stamped with the first of its
 * address space (the mappings it reports were made no later than that, or since). */
struct pending {
	struct lx_rec h;
	uint64_t mm;
	uint32_t pid;
	uint32_t flags;		/* enum lx_maps_want_flags, WANT_SNAPSHOT */
};

/* The code mappings reported of a process, to report only new ones. */
struct known {
	uint32_t pid;
	struct lx_map *m;
	size_t n, cap;
};

struct maps_proc {
	struct maps_proc_opts o;
	struct pending *pend;
	size_t npend, cap_pend;
	struct u64map *pend_of;		/* pid -> index in pend */
	struct known *known;
	size_t nknown, cap_known;
	size_t evict;			/* the next to forget when known is full */
	struct u64map *known_of;	/* pid -> index in known */
	struct lx_pmaps table;		/* built here before it replaces the process's */
	struct maps_proc_stats st;
};

struct maps_proc *maps_proc__new(const struct maps_proc_opts *o)
{
	struct maps_proc *mp;

	if (!o || o->sz < sizeof(*o) || !o->emit || !o->proc_root) {
		errno = EINVAL;
		return NULL;
	}
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return NULL;
	mp->o = *o;
	mp->pend_of = u64map__new();
	mp->known_of = u64map__new();
	if (!mp->pend_of || !mp->known_of) {
		maps_proc__free(mp);
		errno = ENOMEM;
		return NULL;
	}
	return mp;
}

static int keep(struct maps_proc *mp, const struct lx_rec *h, uint32_t pid, uint64_t mm,
		uint32_t flags)
{
	struct pending *p;
	uint64_t *slot;
	bool added;

	slot = u64map__put(mp->pend_of, pid, &added);
	if (!slot)
		return -ENOMEM;
	if (added) {
		if (grow_array((void **)&mp->pend, &mp->cap_pend, mp->npend + 1, sizeof(*mp->pend),
			       16)) {
			u64map__del(mp->pend_of, pid);
			return -ENOMEM;
		}
		*slot = mp->npend++;
		mp->pend[*slot] = (struct pending){ *h, mm, pid, flags };
		return 0;
	}
	p = &mp->pend[*slot];
	/* Another address space (an exec since): the earlier request is moot. */
	if (flags & LX_MAPS_WANT_NEW || p->mm != mm) {
		*p = (struct pending){ *h, mm, pid, flags | LX_MAPS_WANT_NEW };
		return 0;
	}
	/* The same one: the table only if every request was the scan's. */
	p->flags = ((p->flags | flags) & ~LX_MAPS_WANT_SCAN) | (p->flags & flags & LX_MAPS_WANT_SCAN);
	return 0;
}

int maps_proc__want(struct maps_proc *mp, const struct lx_maps_want *w)
{
	mp->st.asked++;
	return keep(mp, &w->h, w->pid, w->mm, w->flags);
}

int maps_proc__exec(struct maps_proc *mp, const struct lx_exec *e)
{
	mp->st.asked++;
	return keep(mp, &e->h, e->pid, 0, LX_MAPS_WANT_NEW | WANT_SNAPSHOT);
}

void maps_proc__gone(struct maps_proc *mp, uint32_t pid)
{
	uint64_t *slot = u64map__get(mp->known_of, pid), i;

	if (!slot)
		return;
	i = *slot;
	free(mp->known[i].m);
	u64map__del(mp->known_of, pid);
	if (i != --mp->nknown) {
		mp->known[i] = mp->known[mp->nknown];
		*u64map__get(mp->known_of, mp->known[i].pid) = i;
	}
}

/* Makes cur (taken) what is known of pid. */
static int know(struct maps_proc *mp, uint32_t pid, struct known *cur)
{
	uint64_t *slot;
	bool added;

	if (mp->nknown >= KNOWN_MAX && !u64map__get(mp->known_of, pid))
		maps_proc__gone(mp, mp->known[mp->evict++ % mp->nknown].pid);
	slot = u64map__put(mp->known_of, pid, &added);
	if (!slot)
		return -ENOMEM;
	if (added) {
		if (grow_array((void **)&mp->known, &mp->cap_known, mp->nknown + 1,
			       sizeof(*mp->known), 64)) {
			u64map__del(mp->known_of, pid);
			return -ENOMEM;
		}
		*slot = mp->nknown++;
	} else {
		free(mp->known[*slot].m);
	}
	cur->pid = pid;
	mp->known[*slot] = *cur;
	return 0;
}

static bool same_map(const struct lx_map *a, const struct lx_map *b)
{
	return a->start == b->start && a->end == b->end && a->ino == b->ino && a->dev == b->dev &&
	       a->pgoff == b->pgoff;
}

/* Whether old (sorted by start) holds m as it is. */
static bool reported(const struct known *old, const struct lx_map *m)
{
	size_t lo = 0, hi = old ? old->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (old->m[mid].start < m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return old && lo < old->n && same_map(&old->m[lo], m);
}

/* The path as the BPF side sends it (lxtrace.h, struct lx_mmap): the names leaf first, each
 * NUL-terminated, then the root's "/"; a path that does not fit keeps the names that do and
 * ends with an empty one, as a walk cut short. */
static void encode_path(const char *path, char out[LX_PATH_LEN])
{
	size_t off = 0, end = strlen(path);

	memset(out, 0, LX_PATH_LEN);
	if (path[0] != '/')
		return;
	while (end > 0) {
		size_t start = end, len;

		while (start > 0 && path[start - 1] != '/')
			start--;
		len = end - start;
		if (len && off + len + 1 >= LX_PATH_LEN - 2) {
			out[off] = '\0';
			return;
		}
		if (len) {
			memcpy(out + off, path + start, len);
			off += len + 1;
		}
		end = start ? start - 1 : 0;
	}
	out[off] = '/';
}

static int report(struct maps_proc *mp, const struct pending *p, const struct lx_map *m,
		  const char *path, uint32_t flags)
{
	struct lx_mmap r;

	memset(&r, 0, sizeof(r));
	r.h = p->h;
	r.h.type = LX_REC_MMAP;
	r.h.flags = 0;
	r.start = m->start;
	r.end = m->end;
	r.pgoff = (uint64_t)m->pgoff << 12;
	r.ino = m->ino;
	r.dev = m->dev;
	r.pid = p->pid;
	r.flags = flags;
	if (m->ino && m->ino != LX_VDSO_INO)
		encode_path(path, r.path);
	mp->st.reported++;
	return mp->o.emit(mp->o.ctx, r.h.cpu, &r, sizeof(r));
}

/* The table the unwinder reads, from the mappings now known; then its version moves, after
 * the table, as the BPF side's own changes do. */
static int publish(struct maps_proc *mp, const struct pending *p, const struct known *k,
		   uint64_t nvmas)
{
	struct lx_pmaps *t = &mp->table;
	uint32_t key = p->pid;

	if (mp->o.tables_fd < 0)
		return 0;
	memset(t, 0, sizeof(*t));
	t->mm = p->mm;
	t->nvmas = nvmas;
	t->n = k->n < LX_PMAPS_MAX ? k->n : LX_PMAPS_MAX;
	t->overflow = k->n - t->n;
	memcpy(t->m, k->m, t->n * sizeof(t->m[0]));
	if (bpf_map_update_elem(mp->o.tables_fd, &key, t, BPF_ANY))
		return -errno;
	__atomic_fetch_add(&mp->o.versions[key & (LX_PMAPS_VERS - 1)], 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* One process: its maps read, the new mappings reported, its table filled. */
static int answer(struct maps_proc *mp, const struct pending *p)
{
	bool tell = !(p->flags & LX_MAPS_WANT_SCAN), first = true;
	uint64_t *slot = u64map__get(mp->known_of, p->pid), nvmas = 0;
	const struct known *old = slot && !(p->flags & LX_MAPS_WANT_NEW) ? &mp->known[*slot] : NULL;
	struct known cur = { 0 };
	char path[64], *line = NULL;
	size_t lcap = 0;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", mp->o.proc_root, p->pid);
	f = fopen(path, "re");
	if (!f) {
		mp->st.gone++;
		maps_proc__gone(mp, p->pid);
		return 0;
	}
	mp->st.answered++;
	while (!err && getline(&line, &lcap, f) > 0) {
		struct procmaps_entry e;
		struct lx_map m;

		nvmas++;
		if (!procmaps__parse_exec(line, &e) || e.end > USER_END)
			continue;
		m = (struct lx_map){ e.start, e.end, e.ino, major(e.dev) << 20 | minor(e.dev),
				     (uint32_t)(e.pgoff >> 12) };
		if (!m.ino && !strcmp(e.name, "[vdso]")) {
			m.ino = LX_VDSO_INO;
			m.dev = 0;
		}
		err = grow_array((void **)&cur.m, &cur.cap, cur.n + 1, sizeof(*cur.m), 16);
		if (err)
			break;
		cur.m[cur.n++] = m;
		if (!tell || reported(old, &m))
			continue;
		err = report(mp, p, &m, e.name,
			     (first && (p->flags & LX_MAPS_WANT_NEW) ? LX_MMAP_NEW_IMAGE : 0) |
			     (p->flags & WANT_SNAPSHOT ? LX_MMAP_SNAPSHOT : 0));
		first = false;
	}
	free(line);
	fclose(f);
	if (!err)
		err = publish(mp, p, &cur, nvmas);
	if (!err)
		err = know(mp, p->pid, &cur);
	if (err)
		free(cur.m);
	return err;
}

int maps_proc__answer(struct maps_proc *mp)
{
	int err = 0;

	for (size_t i = 0; i < mp->npend && !err; i++)
		err = answer(mp, &mp->pend[i]);
	mp->npend = 0;
	u64map__clear(mp->pend_of);
	return err;
}

void maps_proc__stats(const struct maps_proc *mp, struct maps_proc_stats *out)
{
	*out = mp->st;
}

void maps_proc__free(struct maps_proc *mp)
{
	if (!mp)
		return;
	for (size_t i = 0; i < mp->nknown; i++)
		free(mp->known[i].m);
	free(mp->known);
	free(mp->pend);
	u64map__free(mp->pend_of);
	u64map__free(mp->known_of);
	free(mp);
}
