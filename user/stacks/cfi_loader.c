/* cfi_loader.c - opens, compiles and publishes the unwind rows BPF asks for (cfi_loader.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <gelf.h>

#include "lib/clock.h"
#include "lib/devino_map.h"
#include "lib/foreign_file.h"
#include "lib/grow.h"
#include "user/proc/kdev.h"
#include "user/proc/mapped_file.h"
#include "user/proc/mmap_path.h"
#include "user/proc/procmaps.h"
#include "user/stacks/cfi.h"
#include "user/stacks/cfi_cache.h"
#include "user/stacks/cfi_loader.h"
#include "user/stacks/vdso.h"

/* A file this small is compiled at once by the reader (well under a millisecond; a Go program
 * whose pc tables are this small, a few milliseconds): a new program's own binary gets its rows
 * before its first stacks are many, whatever the worker is busy with. */
#define NOW_BYTES (1ull << 20)

/* The CPU time the reader gives such a compile: a real one takes 60-80 ms a MiB of CFI, so a
 * file that is not done by then is a crafted one (user/stacks/cfi.h), which the worker then
 * compiles within the file's own budget, away from the rings. */
#define READER_NS (30ull * 1000 * 1000)

/* The worker's nice value while no stack waits for it: background work, behind the traced
 * programs. While one does, it takes the nice value of the thread that waits (the ring reader,
 * at -10): a record held for rows holds every later one, and at nice 10 beside two CPU hogs a
 * core the worker got 2% of a CPU, so a recording's end waited seconds for it (a stop 7.7 s
 * late under bench/load.sh's load). */
#define WORKER_NICE 10
/* How often a file whose open was late (lib/file_worker.h) is asked for again: walks meet it
 * far more often, and each open of a slow filesystem's file may wait for it a little. Walks
 * take frame pointers there meanwhile. */
#define LATE_RETRY_NS (100ull * 1000 * 1000)

/* How long the end waits for rows still to be stored in the cache (a write and an fsync each,
 * milliseconds): a short recording stores what it compiled, a stop is not held up by a slow
 * disk. */
#define STORE_AT_END_NS (500ull * 1000 * 1000)

/* What a file is to the loader (the values of the `files` map). */
enum file_state {
	FILE_QUEUED = 1,	/* opened, being compiled or waiting for the worker */
	FILE_DONE,		/* published, with rows or without */
};

/* A file opened while its process ran, to be compiled when the reader has time. */
struct queued {
	struct lx_file_key key;
	uint64_t size;		/* smaller files first: a new program's own binary is small */
	int fd;
	bool urgent;		/* before any other: a stack waits for it (cfi_loader__rows) */
};

/* Rows compiled and published, to be stored in the cache by the worker: they stay in the row
 * array for the loader's life. */
struct store {
	struct cfi_cache_key key;
	uint32_t first, n;
};

/* The reader opens files and compiles small ones itself; a worker thread compiles the queued
 * ones, so that a large library (hundreds of milliseconds) never holds the reader up. lock
 * guards everything below it: both threads allocate rows, publish, count. */
struct cfi_loader {
	struct cfi_loader_opts o;
	char proc_root[256];
	pthread_t worker;
	pid_t worker_tid;		/* set by the worker as it starts; 0 before */
	bool started, stop;
	bool hurried;			/* the worker runs at a waiter's nice value (hurry) */
	bool urgent_now;		/* the worker compiles an urgent file */
	atomic_bool cancel;		/* stop the compile under way: the recording is over */
	pthread_mutex_t lock;
	pthread_cond_t more;		/* the queue got a file, or stop was set */
	struct devino_map *files;	/* (dev, ino) -> enum file_state */
	struct devino_map *published;	/* (dev, ino) -> first << 32 | n, once FILE_DONE */
	struct devino_map *late;	/* (dev, ino) -> when to ask again, for a late open */
	struct queued *queue;
	size_t nqueue, queue_cap;
	struct store *stores;
	size_t nstores, stores_cap;
	uint64_t stop_ns;		/* when stop was set */
	uint32_t next;		/* first free row */
	struct cfi_loader_stats st;
};

static void *work(void *arg);

struct cfi_loader *cfi_loader__new(const struct cfi_loader_opts *opts)
{
	struct cfi_loader *l;

	if (!opts || opts->sz < sizeof(*opts) || !opts->maps.rows || !opts->maps.gen) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->o = *opts;
	l->files = devino_map__new();
	l->published = devino_map__new();
	l->late = devino_map__new();
	if (!l->files || !l->published || !l->late) {
		devino_map__free(l->files);
		devino_map__free(l->published);
		devino_map__free(l->late);
		free(l);
		return NULL;
	}
	snprintf(l->proc_root, sizeof(l->proc_root), "%s", opts->proc_root ? opts->proc_root : "/proc");
	elf_version(EV_CURRENT);
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->more, NULL);
	errno = pthread_create(&l->worker, NULL, work, l);
	if (errno) {
		cfi_loader__free(l);
		return NULL;
	}
	l->started = true;
	return l;
}

/* The file mapped at [start, end) of w's process, or at path (if not NULL) when the process
 * is gone, if it is still the file (dev, ino) (user/proc/mapped_file.h), and its size. */
static int open_mapped(const struct cfi_loader *l, const struct lx_cfi_want *w, const char *path,
		       uint64_t *size)
{
	const struct mapped_file f = { l->proc_root, (pid_t)w->pid, w->start, w->end, path,
				       kdev__to_dev(w->dev), w->ino };
	struct stat st;
	int fd;

	*size = 0;
	if (w->ino == LX_VDSO_INO && !w->dev)
		return vdso__open();
	fd = mapped_file__open(&f, NULL);
	if (fd >= 0 && !fstat(fd, &st))
		*size = (uint64_t)st.st_size;
	return fd;
}

/* Publishes the file's rows (n may be 0) and makes walks that fell back for lack of them
 * walk again. With l->lock held. */
static int publish(struct cfi_loader *l, const struct lx_file_key *key, uint32_t first, uint32_t n)
{
	struct lx_file_rows v = { .first = first, .n = n };
	uint64_t *state, *rows;
	bool added;

	if (bpf_map_update_elem(l->o.maps.files_fd, key, &v, BPF_ANY))
		return -errno;
	(*l->o.maps.gen)++;
	state = devino_map__get(l->files, key->dev, key->ino);
	rows = devino_map__put(l->published, key->dev, key->ino, &added);
	if (rows)
		*rows = (uint64_t)first << 32 | n;
	/* Without room for the daemon's view the file stays queued there: its late walks give
	 * up waiting, BPF's have the rows. */
	if (state && rows)
		*state = FILE_DONE;
	return 0;
}

/* Hands published rows to the worker to store (ENOMEM: they are not stored). With l->lock
 * held. */
static void to_store(struct cfi_loader *l, const struct cfi_cache_key *key, uint32_t first,
		     uint32_t n)
{
	if (grow_array((void **)&l->stores, &l->stores_cap, l->nstores + 1, sizeof(*l->stores),
		       16))
		return;
	l->stores[l->nstores++] = (struct store){ *key, first, n };
	pthread_cond_signal(&l->more);
}

/* Compiles the rows of the file q holds open (without the lock: the long part) within max_ns
 * of CPU time (0: the file's own budget) and publishes them (with it), then closes the file.
 * A compile out of time is published without rows, unless handoff: the file, still open, is
 * then for the caller to queue (-ETIME). */
static int load(struct cfi_loader *l, const struct queued *q, uint64_t max_ns, bool handoff)
{
	uint64_t t0 = now_ns();
	struct cfi_table t = { 0 };
	struct cfi_limits lim = { .cancel = &l->cancel, .max_ns = max_ns };
	struct cfi_cache_key key;
	bool keep, keyed, settled = false, cached = false, store;
	Elf *elf;
	int err;

	pthread_mutex_lock(&l->lock);
	lim.max_rows = l->o.maps.rows_max - l->next;
	pthread_mutex_unlock(&l->lock);
	keyed = l->o.cache && cfi_cache__key(q->fd, kdev__to_dev(q->key.dev), q->key.ino, &key,
					     &settled);
	if (keyed && cfi_cache__get(l->o.cache, &key, &t) == 1) {
		cached = true;
		err = t.n ? 0 : -ENOENT;
	} else {
		elf = elf_begin(q->fd, ELF_C_READ_MMAP, NULL);
		err = elf ? cfi__compile(elf, &lim, &t, NULL) : -EINVAL;
		if (elf)
			elf_end(elf);
	}
	/* Stored: what any later recording of this build would compile from the file, which did
	 * not change while it was read. Not an answer that depends on this recording (its room,
	 * its budget, a cancel). */
	store = keyed && settled && !cached && (!err || err == -ENOENT) &&
		cfi_cache__same(q->fd, &key);
	keep = err == -ETIME && handoff;
	if (!keep)
		close(q->fd);
	pthread_mutex_lock(&l->lock);
	l->st.compile_ns += now_ns() - t0;
	if (keep) {
		pthread_mutex_unlock(&l->lock);
		return err;
	}
	if (err == -ENOMEM || err == -ECANCELED) {
		/* Not published: the next walk that meets the file asks again (none will after a
		 * cancel: the recording is over). */
		devino_map__del(l->files, q->key.dev, q->key.ino);
	} else if (err == -EFBIG || (!err && t.n > l->o.maps.rows_max - l->next) ||
		   (!err && t.n && l->o.maps.map_rows &&
		    l->o.maps.map_rows(l->o.maps.map_ctx, l->next + (uint32_t)t.n))) {
		/* -EFBIG: more rows than there was room for when the compile began. Or no room
		 * could be mapped for them. */
		l->st.files_full++;
		err = publish(l, &q->key, LX_ROWS_UNLOADED, 0);
	} else if (err == -ETIME) {
		l->st.files_costly++;
		err = publish(l, &q->key, LX_ROWS_UNLOADED, 0);
	} else if (err || !t.n) {
		l->st.files_empty++;
		l->st.files_cached += cached;
		err = publish(l, &q->key, 0, 0);
		if (!err && store)
			to_store(l, &key, 0, 0);
	} else {
		memcpy(&l->o.maps.rows[l->next], t.rows, t.n * sizeof(*t.rows));
		err = publish(l, &q->key, l->next, (uint32_t)t.n);
		if (!err) {
			if (store)
				to_store(l, &key, l->next, (uint32_t)t.n);
			l->next += (uint32_t)t.n;
			l->st.rows = l->next;
			l->st.files++;
			l->st.files_cached += cached;
		}
	}
	pthread_mutex_unlock(&l->lock);
	cfi_table__release(&t);
	return err;
}

/* A stack waits for the worker: it runs at the waiting thread's nice value until no queued file
 * is urgent (relax). With l->lock held. */
static void hurry(struct cfi_loader *l)
{
	int nice;

	if (l->hurried || !l->worker_tid)
		return;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (errno || nice >= WORKER_NICE)
		return;
	if (!setpriority(PRIO_PROCESS, (id_t)l->worker_tid, nice))
		l->hurried = true;
}

/* Back to the background once no stack waits for a queued file. With l->lock held, on the
 * worker. */
static void relax(struct cfi_loader *l)
{
	for (size_t i = 0; i < l->nqueue; i++)
		if (l->queue[i].urgent)
			return;
	if (l->hurried && !setpriority(PRIO_PROCESS, (id_t)l->worker_tid, WORKER_NICE))
		l->hurried = false;
}

/* The worker: compiles queued files, smallest first, until told to stop. A map that refuses
 * a file's entry loses that file's rows, nothing else: the worker goes on. */
static void *work(void *arg)
{
	struct cfi_loader *l = arg;
	int err;

	/* Background work, behind the traced programs (the ring reader, at nice -10, answers what
	 * cannot wait), but not starved by them as at SCHED_IDLE on a busy machine: stacks wait
	 * for these rows. A thread's nice value is its own on Linux. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), WORKER_NICE);

	pthread_mutex_lock(&l->lock);
	l->worker_tid = gettid();
	for (;;) {
		size_t best = 0;
		struct queued q;

		while (!l->stop && !l->nqueue && !l->nstores)
			pthread_cond_wait(&l->more, &l->lock);
		/* Stores after compiles: a stack may wait for a compile, none for a store. */
		if (l->nstores && (l->stop ? now_ns() - l->stop_ns < STORE_AT_END_NS : !l->nqueue)) {
			struct store st = l->stores[--l->nstores];

			pthread_mutex_unlock(&l->lock);
			cfi_cache__put(l->o.cache, &st.key, &l->o.maps.rows[st.first], st.n);
			pthread_mutex_lock(&l->lock);
			continue;
		}
		if (l->stop)
			break;
		for (size_t i = 1; i < l->nqueue; i++)
			if (l->queue[i].urgent > l->queue[best].urgent ||
			    (l->queue[i].urgent == l->queue[best].urgent &&
			     l->queue[i].size < l->queue[best].size))
				best = i;
		q = l->queue[best];
		l->queue[best] = l->queue[--l->nqueue];
		l->urgent_now = q.urgent;
		pthread_mutex_unlock(&l->lock);
		err = load(l, &q, 0, false);
		pthread_mutex_lock(&l->lock);
		l->urgent_now = false;
		l->st.files_failed += !!err;
		relax(l);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Queues q's file for the worker, or forgets it (ENOMEM: a walk that meets it asks again).
 * With l->lock held. */
static int to_worker(struct cfi_loader *l, const struct queued *q)
{
	if (grow_array((void **)&l->queue, &l->queue_cap, l->nqueue + 1, sizeof(*l->queue), 16)) {
		devino_map__del(l->files, q->key.dev, q->key.ino);
		close(q->fd);
		return -ENOMEM;
	}
	l->queue[l->nqueue++] = *q;
	pthread_cond_signal(&l->more);
	return 0;
}

/* Opens w's file now, while its process may still run; compiles a small one at once, queues a
 * large one for the worker, or forgets it (small_only: a mapping no stack needed yet; a walk
 * that meets it asks). Found through w's process or at path. */
static int enqueue(struct cfi_loader *l, const struct lx_cfi_want *w, const char *path,
		   bool small_only)
{
	struct lx_file_key key = { .ino = w->ino, .dev = w->dev };
	struct queued q = { .key = key };
	uint64_t *state;
	bool added, at_once;
	int err;

	uint64_t *late, now = now_ns(), ask_at = 0;

	pthread_mutex_lock(&l->lock);
	state = devino_map__get(l->files, w->dev, w->ino);
	late = devino_map__get(l->late, w->dev, w->ino);
	if (late)
		ask_at = *late;
	if (late && now >= ask_at)
		devino_map__del(l->late, w->dev, w->ino);
	pthread_mutex_unlock(&l->lock);
	if (state)
		return 0;
	if (now < ask_at)
		return -ETIMEDOUT;
	q.fd = open_mapped(l, w, path, &q.size);
	/* Counted by what its compile reads (a Go program's pc tables), but queued for the worker
	 * by its size: a toolchain's large Go programs, whose compiles are cheap, after libc. */
	at_once = q.fd >= 0 && cfi__work_bytes(q.fd, q.size) <= NOW_BYTES;
	if (q.fd >= 0 && small_only && !at_once) {
		close(q.fd);
		return 0;
	}
	pthread_mutex_lock(&l->lock);
	if (foreign_file__refused(q.fd)) {
		/* Not a file to read (lib/foreign_file.h): no rows, for good. */
		l->st.files_empty++;
		state = devino_map__put(l->files, w->dev, w->ino, &added);
		q.fd = state ? publish(l, &key, 0, 0) : -ENOMEM;
		pthread_mutex_unlock(&l->lock);
		return q.fd;
	}
	if (q.fd < 0) {
		/* Gone, replaced, or late (its filesystem slow or stalled: lib/file_worker.h): the
		 * next walk that meets the file asks again. */
		l->st.files_retry++;
		late = q.fd == -ETIMEDOUT ? devino_map__put(l->late, w->dev, w->ino, &added) : NULL;
		if (late)
			*late = now + LATE_RETRY_NS;
		pthread_mutex_unlock(&l->lock);
		bpf_map_delete_elem(l->o.maps.wanted_fd, &key);
		return q.fd == -ETIMEDOUT ? q.fd : 0;
	}
	state = devino_map__put(l->files, w->dev, w->ino, &added);
	if (!state) {
		pthread_mutex_unlock(&l->lock);
		close(q.fd);
		return -ENOMEM;
	}
	*state = FILE_QUEUED;
	if (at_once) {
		pthread_mutex_unlock(&l->lock);
		err = load(l, &q, READER_NS, true);
		if (err != -ETIME)
			return err;
		pthread_mutex_lock(&l->lock);
	}
	err = to_worker(l, &q);
	pthread_mutex_unlock(&l->lock);
	return err;
}

/* Wants w's file (at path when not NULL) now, ahead of other files, the worker at the caller's
 * nice value: queued (or compiled at once when small), then marked urgent. */
static int want_urgent(struct cfi_loader *l, const struct lx_cfi_want *w, const char *path)
{
	const struct lx_cfi_row *rows;
	uint32_t n;
	int err = enqueue(l, w, path, false);

	if (!err)
		(void)cfi_loader__rows(l, w->dev, w->ino, &rows, &n);
	return err;
}

int cfi_loader__mapped(struct cfi_loader *l, const struct lx_mmap *m, bool urgent)
{
	struct lx_cfi_want w = { .start = m->start, .end = m->end, .ino = m->ino, .pid = m->pid,
				 .dev = m->dev };
	char path[PATH_MAX];
	const char *at;

	if (!m->ino)
		return 0;
	at = m->ino == LX_VDSO_INO || mmap_path__get(m, path, sizeof(path)) ? NULL : path;
	return urgent ? want_urgent(l, &w, at) : enqueue(l, &w, at, true);
}

int cfi_loader__want(struct cfi_loader *l, const struct lx_cfi_want *w)
{
	return enqueue(l, w, NULL, false);
}

int cfi_loader__want_file(struct cfi_loader *l, const struct lx_cfi_want *w, const char *path)
{
	return enqueue(l, w, *path == '/' ? path : NULL, false);
}

int cfi_loader__rows(struct cfi_loader *l, uint32_t dev, uint64_t ino,
		     const struct lx_cfi_row **rows, uint32_t *n)
{
	uint64_t *state, *pub;
	int ret = -ENOENT;

	pthread_mutex_lock(&l->lock);
	state = devino_map__get(l->files, dev, ino);
	pub = devino_map__get(l->published, dev, ino);
	if (state && *state == FILE_DONE && pub && *pub >> 32 == LX_ROWS_UNLOADED) {
		ret = 2;
	} else if (state && *state == FILE_DONE && pub) {
		*rows = &l->o.maps.rows[*pub >> 32];
		*n = (uint32_t)*pub;
		ret = 1;
	} else if (state) {
		for (size_t i = 0; i < l->nqueue; i++)
			if (l->queue[i].key.dev == dev && l->queue[i].key.ino == ino)
				l->queue[i].urgent = true;
		hurry(l);
		ret = 0;
	}
	pthread_mutex_unlock(&l->lock);
	return ret;
}

int cfi_loader__want_process(struct cfi_loader *l, pid_t pid)
{
	struct procmaps_entry e;
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct lx_cfi_want w;

		if (!procmaps__parse_exec(line, &e) || !e.ino || e.name[0] != '/')
			continue;
		w = (struct lx_cfi_want){ .start = e.start, .end = e.end, .ino = e.ino,
					  .pid = (uint32_t)pid, .dev = kdev__from_dev(e.dev) };
		(void)want_urgent(l, &w, e.name);
	}
	free(line);
	fclose(f);
	return 0;
}

/* Whether an urgent file is queued or being compiled. With l->lock held. */
static bool urgent_left(const struct cfi_loader *l)
{
	for (size_t i = 0; i < l->nqueue; i++)
		if (l->queue[i].urgent)
			return true;
	return l->urgent_now;
}

bool cfi_loader__wait_urgent(struct cfi_loader *l, uint64_t timeout_ns)
{
	uint64_t end = now_ns() + timeout_ns;
	bool left;

	for (;;) {
		pthread_mutex_lock(&l->lock);
		left = urgent_left(l);
		pthread_mutex_unlock(&l->lock);
		if (!left || now_ns() >= end)
			return !left;
		usleep(2000);
	}
}

void cfi_loader__stats(struct cfi_loader *l, struct cfi_loader_stats *out)
{
	pthread_mutex_lock(&l->lock);
	*out = l->st;
	out->queued = l->nqueue;
	pthread_mutex_unlock(&l->lock);
}

void cfi_loader__free(struct cfi_loader *l)
{
	if (!l)
		return;
	if (l->started) {
		pthread_mutex_lock(&l->lock);
		l->stop = true;
		l->stop_ns = now_ns();
		atomic_store(&l->cancel, true);
		pthread_cond_signal(&l->more);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->worker, NULL);
	}
	for (size_t i = 0; i < l->nqueue; i++)
		close(l->queue[i].fd);
	free(l->queue);
	free(l->stores);
	devino_map__free(l->late);
	devino_map__free(l->files);
	devino_map__free(l->published);
	pthread_cond_destroy(&l->more);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
