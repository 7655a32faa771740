/* maps_proc.c - a process's code mappings read from /proc for a kernel without the VMA
 * iterator, by a thread of their own (maps_proc.h).
 *
 * The thread owns the requests and what it reported of each process; the reader thread
 * shares with it only the execs it hands over and the records it takes back, under one lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/unwind.h"
#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/capture/maps_proc.h"
#include "user/proc/kdev.h"
#include "user/proc/procmaps.h"

/* Not the kernel's: an exec's read, whose image is a snapshot. */
#define WANT_SNAPSHOT (1u << 31)
/* Processes whose mappings are kept to report only new ones. Nothing says when a process is
 * gone (an exit record names a thread), so past this many one is forgotten, which costs its
 * next answer a report of every mapping (the consumers take a repeat as it is). */
#define KNOWN_MAX 8192
/* User addresses end here (x86_64); the vsyscall page above is in no process's tree. */
#define USER_END (1ull << 47)
/* How long the thread waits before it looks at the stop flag again. */
#define WAIT_MS 100

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
	/* The thread's own. */
	struct ring_buffer *rb;
	struct pending *pend;
	size_t npend, cap_pend;
	struct u64map *pend_of;		/* pid -> index in pend */
	struct known *known;
	size_t nknown, cap_known;
	size_t evict;			/* the next to forget when known is full */
	struct u64map *known_of;	/* pid -> index in known */
	struct lx_pmaps table;		/* built here before it replaces the process's */
	int err;			/* the first error of a table update */
	/* Shared with the reader, under lock. */
	pthread_mutex_t lock;
	struct lx_exec *execs;		/* handed over, not taken yet */
	size_t nexecs, cap_execs;
	struct lx_mmap *out;		/* answered, not flushed yet */
	size_t nout, cap_out;
	struct maps_proc_stats st;
	/* The oldest ask of each stage not flushed yet (UINT64_MAX: none): handed over (execs),
	 * read from the ring or taken (pend), answered into out. */
	uint64_t execs_open, pend_open, out_open;
	/* The ring's consumer and producer positions, mapped read-only: asks not read yet. */
	const unsigned long *cons_pos, *prod_pos;
	/* The thread. */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	int wake_fd;			/* an eventfd: execs handed over, or stop */
	int epoll_fd;
};

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

/* ring_buffer callback: one ask. */
static int on_want(void *ctx, void *data, size_t size)
{
	struct maps_proc *mp = ctx;
	const struct lx_maps_want *w = data;

	if (size < sizeof(*w))
		return 0;
	/* Before libbpf moves the ring's consumer on: the ask is always in one count or the
	 * other (maps_proc__oldest_open). */
	pthread_mutex_lock(&mp->lock);
	mp->st.asked++;
	if (w->h.ts < mp->pend_open)
		mp->pend_open = w->h.ts;
	pthread_mutex_unlock(&mp->lock);
	return keep(mp, &w->h, w->pid, w->mm, w->flags);
}

/* Process pid is gone: what was reported of it is forgotten. */
static void forget(struct maps_proc *mp, uint32_t pid)
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
		forget(mp, mp->known[mp->evict++ % mp->nknown].pid);
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

/* Queues the report of mapping m (path as /proc names it) for the reader. */
static int report(struct maps_proc *mp, const struct pending *p, const struct lx_map *m,
		  const char *path, uint32_t flags)
{
	struct lx_mmap *r;
	int err = 0;

	pthread_mutex_lock(&mp->lock);
	if (grow_array((void **)&mp->out, &mp->cap_out, mp->nout + 1, sizeof(*mp->out), 16)) {
		err = -ENOMEM;
		goto out;
	}
	r = &mp->out[mp->nout++];
	memset(r, 0, sizeof(*r));
	r->h = p->h;
	r->h.type = LX_REC_MMAP;
	r->h.flags = 0;
	r->start = m->start;
	r->end = m->end;
	r->pgoff = (uint64_t)m->pgoff << 12;
	r->ino = m->ino;
	r->dev = m->dev;
	r->pid = p->pid;
	r->flags = flags;
	if (m->ino && m->ino != LX_VDSO_INO)
		encode_path(path, r->path);
	mp->st.reported++;
out:
	pthread_mutex_unlock(&mp->lock);
	return err;
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
	if (t->n)	/* a process gone to a zombie has none, and maybe no array */
		memcpy(t->m, k->m, t->n * sizeof(t->m[0]));
	/* A full map (more processes than PROC_TABLES) leaves this one's walks without a table:
	 * counted, as the kernel-side builds count theirs. */
	if (bpf_map_update_elem(mp->o.tables_fd, &key, t, BPF_ANY)) {
		pthread_mutex_lock(&mp->lock);
		mp->st.tables_full++;
		pthread_mutex_unlock(&mp->lock);
		return 0;
	}
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
		pthread_mutex_lock(&mp->lock);
		mp->st.gone++;
		pthread_mutex_unlock(&mp->lock);
		forget(mp, p->pid);
		return 0;
	}
	while (!err && getline(&line, &lcap, f) > 0) {
		struct procmaps_entry e;
		struct lx_map m;

		nvmas++;
		if (!procmaps__parse_exec(line, &e) || e.end > USER_END)
			continue;
		m = (struct lx_map){ e.start, e.end, e.ino, kdev__from_dev(e.dev),
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
	/* A process that has exited keeps its /proc directory until it is reaped, with no
	 * mapping left: its stacks since the ask can no longer be walked. */
	pthread_mutex_lock(&mp->lock);
	if (nvmas)
		mp->st.answered++;
	else
		mp->st.gone++;
	pthread_mutex_unlock(&mp->lock);
	if (!err)
		err = publish(mp, p, &cur, nvmas);
	if (!err)
		err = know(mp, p->pid, &cur);
	if (err)
		free(cur.m);
	return err;
}

/* Answers every request kept: one read of /proc/PID/maps per process. */
static int answer_all(struct maps_proc *mp)
{
	int err = 0;

	for (size_t i = 0; i < mp->npend && !err; i++)
		err = answer(mp, &mp->pend[i]);
	mp->npend = 0;
	u64map__clear(mp->pend_of);
	/* Every ask read so far is answered: what it found waits in out. */
	pthread_mutex_lock(&mp->lock);
	if (mp->pend_open < mp->out_open)
		mp->out_open = mp->pend_open;
	mp->pend_open = UINT64_MAX;
	pthread_mutex_unlock(&mp->lock);
	return err;
}

/* The execs the reader handed over, as requests. */
static int take_execs(struct maps_proc *mp)
{
	uint64_t n;
	int err = 0;

	if (read(mp->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&mp->lock);
	for (size_t i = 0; i < mp->nexecs && !err; i++)
		err = keep(mp, &mp->execs[i].h, mp->execs[i].pid, 0,
			   LX_MAPS_WANT_NEW | WANT_SNAPSHOT);
	mp->nexecs = 0;
	if (mp->execs_open < mp->pend_open)
		mp->pend_open = mp->execs_open;
	mp->execs_open = UINT64_MAX;
	pthread_mutex_unlock(&mp->lock);
	return err;
}

static void *run(void *arg)
{
	struct maps_proc *mp = arg;
	struct epoll_event ev[2];
	int err = 0;

	while (!atomic_load(&mp->stop) && !err) {
		if (epoll_wait(mp->epoll_fd, ev, 2, WAIT_MS) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		if (mp->rb && ring_buffer__consume(mp->rb) < 0)
			err = -EIO;
		if (!err)
			err = take_execs(mp);
		if (!err)
			err = answer_all(mp);
	}
	/* Only a table that could not be written (out of memory): said by the next flush. */
	pthread_mutex_lock(&mp->lock);
	mp->err = err;
	pthread_mutex_unlock(&mp->lock);
	return NULL;
}

/* The ring's positions, as libbpf maps them for its consumer (the consumer's page first, the
 * producer's next), read-only here: libbpf 1.1 has no call that tells what a ring holds. */
static int map_positions(struct maps_proc *mp, int ring_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *cons = mmap(NULL, page, PROT_READ, MAP_SHARED, ring_fd, 0);
	void *prod = mmap(NULL, page, PROT_READ, MAP_SHARED, ring_fd, page);

	if (cons != MAP_FAILED)
		mp->cons_pos = cons;
	if (prod != MAP_FAILED)
		mp->prod_pos = prod;
	return mp->cons_pos && mp->prod_pos ? 0 : -1;
}

struct maps_proc *maps_proc__new(const struct maps_proc_opts *o)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct maps_proc *mp;
	int err;

	if (!o || o->sz < sizeof(*o) || !o->emit || !o->proc_root) {
		errno = EINVAL;
		return NULL;
	}
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return NULL;
	mp->o = *o;
	mp->wake_fd = mp->epoll_fd = -1;
	mp->execs_open = mp->pend_open = mp->out_open = UINT64_MAX;
	pthread_mutex_init(&mp->lock, NULL);
	mp->pend_of = u64map__new();
	mp->known_of = u64map__new();
	mp->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	mp->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!mp->pend_of || !mp->known_of || mp->wake_fd < 0 || mp->epoll_fd < 0 ||
	    epoll_ctl(mp->epoll_fd, EPOLL_CTL_ADD, mp->wake_fd, &ev))
		goto fail;
	if (o->ring_fd >= 0) {
		mp->rb = ring_buffer__new(o->ring_fd, on_want, mp, NULL);
		if (!mp->rb || epoll_ctl(mp->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(mp->rb),
					 &ev) || map_positions(mp, o->ring_fd))
			goto fail;
	}
	err = pthread_create(&mp->thread, NULL, run, mp);
	if (err) {
		errno = err;
		goto fail;
	}
	mp->started = true;
	return mp;
fail:
	err = errno ? errno : ENOMEM;
	maps_proc__free(mp);
	errno = err;
	return NULL;
}

int maps_proc__exec(struct maps_proc *mp, const struct lx_exec *e)
{
	uint64_t one = 1;
	int err = 0;

	pthread_mutex_lock(&mp->lock);
	if (grow_array((void **)&mp->execs, &mp->cap_execs, mp->nexecs + 1, sizeof(*mp->execs), 16))
		err = -ENOMEM;
	else
		mp->execs[mp->nexecs++] = *e;
	if (!err && e->h.ts < mp->execs_open)
		mp->execs_open = e->h.ts;
	mp->st.asked += !err;
	pthread_mutex_unlock(&mp->lock);
	if (!err && write(mp->wake_fd, &one, sizeof(one)) < 0)
		err = -errno;
	return err;
}

int maps_proc__flush(struct maps_proc *mp)
{
	struct lx_mmap *out;
	size_t n, cap;
	int err;

	pthread_mutex_lock(&mp->lock);
	out = mp->out;
	n = mp->nout;
	cap = mp->cap_out;
	mp->out = NULL;
	mp->nout = mp->cap_out = 0;
	mp->out_open = UINT64_MAX;
	err = mp->err;
	pthread_mutex_unlock(&mp->lock);
	for (size_t i = 0; i < n && !err; i++)
		err = mp->o.emit(mp->o.ctx, out[i].h.cpu, &out[i], sizeof(out[i]));
	/* The buffer goes back for the next answers, unless some came meanwhile. */
	pthread_mutex_lock(&mp->lock);
	if (!mp->out) {
		mp->out = out;
		mp->cap_out = cap;
		out = NULL;
	}
	pthread_mutex_unlock(&mp->lock);
	free(out);
	return err;
}

uint64_t maps_proc__oldest_open(struct maps_proc *mp, bool *unread)
{
	uint64_t oldest;

	/* The ring first: an ask read from it after this is in pend_open below. */
	*unread = mp->prod_pos && __atomic_load_n(mp->prod_pos, __ATOMIC_ACQUIRE) !=
				  __atomic_load_n(mp->cons_pos, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&mp->lock);
	oldest = mp->execs_open < mp->pend_open ? mp->execs_open : mp->pend_open;
	if (mp->out_open < oldest)
		oldest = mp->out_open;
	pthread_mutex_unlock(&mp->lock);
	return oldest;
}

void maps_proc__stats(struct maps_proc *mp, struct maps_proc_stats *out)
{
	pthread_mutex_lock(&mp->lock);
	*out = mp->st;
	pthread_mutex_unlock(&mp->lock);
}

void maps_proc__free(struct maps_proc *mp)
{
	uint64_t one = 1;

	if (!mp)
		return;
	if (mp->started) {
		atomic_store(&mp->stop, true);
		if (write(mp->wake_fd, &one, sizeof(one)) < 0)
			perror("lxtrace: capture: waking the maps thread");
		pthread_join(mp->thread, NULL);
	}
	ring_buffer__free(mp->rb);
	if (mp->cons_pos)
		munmap((void *)mp->cons_pos, sysconf(_SC_PAGESIZE));
	if (mp->prod_pos)
		munmap((void *)mp->prod_pos, sysconf(_SC_PAGESIZE));
	if (mp->epoll_fd >= 0)
		close(mp->epoll_fd);
	if (mp->wake_fd >= 0)
		close(mp->wake_fd);
	for (size_t i = 0; i < mp->nknown; i++)
		free(mp->known[i].m);
	free(mp->known);
	free(mp->pend);
	free(mp->execs);
	free(mp->out);
	u64map__free(mp->pend_of);
	u64map__free(mp->known_of);
	pthread_mutex_destroy(&mp->lock);
	free(mp);
}
