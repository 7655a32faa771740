/* test_golden.c - the model's output, byte for byte, for two fixed record streams: a real one
 * recorded from the workloads (tests/streams/workloads.*, made by tests/streams/capture.c) and
 * a generated one (a seeded simulation with every kind of record, stacks, losses and damage).
 * The golden traces (tests/streams/workloads.trace, generated*.trace) were written by the code
 * before a refactor and must stay the same after it: a change of behaviour shows as a changed
 * byte.
 *
 * Nothing depends on the machine: the /proc the model reads is a fake one built from the
 * fixture (kernel addresses resolve against its kallsyms, user addresses of processes it does
 * not have read "[unknown] 0x..."), and the stream's times start at 1 ms, before any clock the
 * model compares them with.
 *
 * A behaviour change that is meant: LXTRACE_GOLDEN_UPDATE=1 writes the golden files anew; the
 * commit then says why every byte changed. On a mismatch the new trace is kept in /tmp, to
 * compare with `lxtrace dump` of both.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go123/reader.h"
#include "format/go123/writer.h"
#include "user/report/report.h"
#include "tests/lib/goparse.h"
#include "tests/lib/stream.h"
#include "tests/unit/test_model_util.h"
#include "user/capture/merge.h"

#define STREAMS LXTRACE_SRCDIR "/tests/streams/"

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		size_t n = fread(buf + *len, 1, cap - *len, f);

		if (!n)
			break;
		*len += n;
	}
	fclose(f);
	return buf;
}

static void write_all(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "we");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *buf = read_all(from, &len);

	cr_assert_not_null(buf, "%s: %s", from, strerror(errno));
	write_all(to, buf, len);
	free(buf);
}

static void proc_statm(const char *root, uint32_t pid, unsigned long long pages)
{
	char path[512], text[64];

	snprintf(path, sizeof(path), "%s/%u/statm", root, pid);
	snprintf(text, sizeof(text), "%llu %llu 0 0 0 0 0\n", pages * 2, pages);
	write_all(path, text, strlen(text));
}

/* Replays s through a model writing to a temp file (*t), with call stacks on, as the stream
 * has them, and the syscall mode and heap counter given; in the go1.23 format when go123. */
static void replay_as(struct mt *t, const struct stream *s, const char *proc,
		      enum model_syscalls syscalls, bool rss, bool go123)
{
	struct model_opts mo = {
		.sz = sizeof(mo), .ncpus = s->ncpus, .syscalls = syscalls,
		.proc_root = proc, .rss = rss, .stacks = true,
	};
	int err;

	memset(t, 0, sizeof(*t));
	strcpy(t->path, "/tmp/lxtrace-golden-XXXXXX");
	t->fd = mkstemp(t->path);
	cr_assert_geq(t->fd, 0);
	if (go123) {
		t->w2 = go123_writer__new(&(struct go123_writer_opts){
			.sz = sizeof(struct go123_writer_opts), .fd = t->fd, .nprocs = s->ncpus + 1,
			.frequency = 1000000000 });
		cr_assert_not_null(t->w2);
		mo.writer2 = t->w2;
	} else {
		t->w = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts),
								.fd = t->fd, .nprocs = s->ncpus + 1,
								.frequency = 1000000000 });
		cr_assert_not_null(t->w);
		mo.writer = t->w;
	}
	t->m = model__new(&mo);
	cr_assert_not_null(t->m);
	cr_assert_eq(model__start(t->m, s->start), 0);
	for (size_t i = 0; i < s->n; i++) {
		const struct stream_entry *e = &s->v[i];

		if (e->rec) {
			model__peek(t->m, e->rec, e->size);
			err = model__record(t->m, e->rec, e->size);
		} else {
			err = model__lost(t->m, e->cpu, e->ts, e->lost);
		}
		cr_assert_eq(err, 0, "entry %zu: %s", i, strerror(-err));
	}
	if (!go123) {
		mt_finish(t, s->end);
		return;
	}
	err = model__finish(t->m, s->end);
	cr_assert_eq(err, 0, "model__finish: %s", strerror(-err));
	model__stats(t->m, &t->st);
}

static void replay(struct mt *t, const struct stream *s, const char *proc,
		   enum model_syscalls syscalls, bool rss)
{
	replay_as(t, s, proc, syscalls, rss, false);
}

/* The file t wrote must equal the golden file name (or becomes it, when updating). */
static void compare_golden(struct mt *t, const char *name)
{
	char golden[4096];
	size_t got_len, want_len;
	char *got, *want;
	bool same;

	snprintf(golden, sizeof(golden), STREAMS "%s", name);
	got = read_all(t->path, &got_len);
	cr_assert_not_null(got);
	if (getenv("LXTRACE_GOLDEN_UPDATE")) {
		write_all(golden, got, got_len);
		fprintf(stderr, "golden: wrote %s (%zu bytes)\n", golden, got_len);
		free(got);
		mt_close(t, false);
		return;
	}
	want = read_all(golden, &want_len);
	cr_assert_not_null(want, "%s: %s", golden, strerror(errno));
	same = got_len == want_len && !memcmp(got, want, got_len);
	if (!same) {
		size_t at = 0;

		while (at < got_len && at < want_len && got[at] == want[at])
			at++;
		cr_expect_fail("%s: %zu bytes written, %zu in the golden file, first difference at "
			       "offset %zu; the new trace is kept for `lxtrace dump`", name, got_len,
			       want_len, at);
	}
	free(got);
	free(want);
	mt_close(t, !same);
}

static size_t count_records(const struct stream *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].rec != NULL;
	return n;
}

/* ---- the recorded stream ---------------------------------------------------------------- */

/* A fake /proc with the fixture's threads, their resident memory and its kallsyms. */
static char *fixture_proc(const char *prefix)
{
	char path[4096], dst[4096], comm[64], state;
	unsigned pid, tid;
	unsigned long long pages;
	int syscall;
	char *root = mt_proc_new();
	FILE *f;

	snprintf(path, sizeof(path), STREAMS "%s.proc", prefix);
	f = fopen(path, "re");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fscanf(f, "%u %u %c %d %llu %63s", &pid, &tid, &state, &syscall, &pages, comm) == 6) {
		mt_proc_thread(root, pid, tid, comm, state, syscall);
		if (pid == tid)
			proc_statm(root, pid, pages);
	}
	fclose(f);
	snprintf(path, sizeof(path), STREAMS "%s.kallsyms", prefix);
	snprintf(dst, sizeof(dst), "%s/kallsyms", root);
	copy_file(path, dst);
	return root;
}

Test(golden, recorded_workloads, .timeout = 120)
{
	struct stream s;
	struct mt t;
	char *proc = fixture_proc("workloads");
	int err = stream__load(&s, STREAMS "workloads.stream");

	cr_assert_eq(err, 0, "workloads.stream: %s", strerror(-err));
	/* As the recorder ran: a target, every syscall. */
	replay(&t, &s, proc, MODEL_SYSCALLS_ALL, true);
	cr_expect_eq(t.st.records, count_records(&s));
	cr_expect_gt(t.st.stack_lookups, 0);
	compare_golden(&t, "workloads.trace");
	stream__free(&s);
	mt_proc_free(proc);
}

/* ---- the recorded stream, cut per CPU and merged again ------------------------------------- */

#define READ_PERIOD_NS 4000000ull	/* capture's POLL_MS */
#define STALE_NS 2000000ull		/* capture's STALE_NS */

/* What one CPU's ring held: the records of that CPU, its syscall entries packed into chunks as
 * the BPF side sends them (when full, or before the CPU's next record), each readable from
 * the time it was written. */
struct piece {
	const void *data;	/* a record of the stream, or a chunk in chunks[] */
	size_t size;
	uint64_t avail;
};

struct ring_sim {
	struct piece *v;
	size_t n, cap, next;
};

static void ring_push(struct ring_sim *r, const void *data, size_t size, uint64_t avail)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		cr_assert_not_null(r->v);
	}
	r->v[r->n++] = (struct piece){ data, size, avail };
}

/* Packs the pending syscall entries of a CPU into a chunk readable at avail. */
static void flush_chunk(struct ring_sim *r, struct lx_syscalls **chunk, uint64_t avail)
{
	if (!*chunk)
		return;
	ring_push(r, *chunk, offsetof(struct lx_syscalls, e) + (*chunk)->n * sizeof((*chunk)->e[0]),
		  avail);
	*chunk = NULL;
}

static int collect_record(void *ctx, const struct lx_rec *r, size_t size)
{
	return stream__add_record(ctx, r, size);
}

static int collect_lost(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	return stream__add_lost(ctx, cpu, ts, n);
}

/* s cut into per-CPU rings, read every READ_PERIOD_NS by a simulated reader into the merge
 * engine, delivered up to its watermark each round, into *out. */
static void merge_from_cpus(const struct stream *s, struct stream *out)
{
	struct ring_sim *rings = calloc(s->ncpus, sizeof(*rings));
	struct lx_syscalls **chunk = calloc(s->ncpus, sizeof(*chunk));
	struct lx_syscalls *chunks = calloc(s->n, sizeof(*chunks));
	size_t nchunks = 0, left = 0;
	struct merge *mg;
	uint64_t now;

	cr_assert(rings && chunk && chunks);
	*out = (struct stream){ .ncpus = s->ncpus, .start = s->start, .end = s->end };
	for (size_t i = 0; i < s->n; i++) {
		const struct stream_entry *e = &s->v[i];
		uint32_t cpu = e->rec ? e->rec->cpu : e->cpu;
		struct ring_sim *r = &rings[cpu];

		cr_assert(e->rec, "the fixture has no losses; test_merge.c covers them");
		if (e->rec->type == LX_REC_SYSCALL) {
			const struct lx_syscall *sc = (const void *)e->rec;
			struct lx_syscalls *ch = chunk[cpu];

			if (!ch) {
				ch = chunk[cpu] = &chunks[nchunks++];
				ch->h = (struct lx_rec){ .ts = sc->h.ts, .cpu = (uint16_t)cpu,
							 .type = LX_REC_SYSCALLS };
			}
			ch->e[ch->n++] = (struct lx_sysent){
				.dt = (uint32_t)(sc->h.ts - ch->h.ts),
				.tid_nr = sc->h.tid << LX_SYSENT_NR_BITS |
					  (sc->nr < 0 ? LX_SYSENT_NR_NONE : (uint32_t)sc->nr),
			};
			if (ch->n == LX_SYSCALLS_MAX)
				flush_chunk(r, &chunk[cpu], sc->h.ts);
			continue;
		}
		flush_chunk(r, &chunk[cpu], e->rec->ts);
		ring_push(r, e->rec, e->size, e->rec->ts);
	}
	for (uint32_t cpu = 0; cpu < s->ncpus; cpu++) {
		if (chunk[cpu])
			flush_chunk(&rings[cpu], &chunk[cpu],
				    chunk[cpu]->h.ts + chunk[cpu]->e[chunk[cpu]->n - 1].dt + STALE_NS);
		left += rings[cpu].n;
	}

	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = s->ncpus,
					      .on_record = collect_record, .on_lost = collect_lost,
					      .ctx = out });
	cr_assert_not_null(mg);
	/* The first read comes a window after the start, as the clock is then past it. */
	for (now = s->start + MERGE_WINDOW_NS; left; now += READ_PERIOD_NS) {
		for (uint32_t cpu = 0; cpu < s->ncpus; cpu++) {
			struct ring_sim *r = &rings[cpu];

			for (; r->next < r->n && r->v[r->next].avail <= now; r->next++, left--)
				cr_assert_eq(merge__add(mg, cpu, r->v[r->next].data, r->v[r->next].size), 0);
		}
		cr_assert_eq(merge__deliver(mg, merge__watermark(mg, now)), 0);
	}
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	merge__free(mg);
	for (uint32_t cpu = 0; cpu < s->ncpus; cpu++)
		free(rings[cpu].v);
	free(rings);
	free(chunk);
	free(chunks);
}

Test(golden, recorded_workloads_through_merge, .timeout = 120)
{
	struct stream s, merged;
	struct mt t;
	char *proc = fixture_proc("workloads");
	int err = stream__load(&s, STREAMS "workloads.stream");

	cr_assert_eq(err, 0, "workloads.stream: %s", strerror(-err));
	merge_from_cpus(&s, &merged);
	cr_assert_eq(merged.n, s.n);
	for (size_t i = 0; i < s.n; i++)
		cr_assert(merged.v[i].size == s.v[i].size &&
			  !memcmp(merged.v[i].rec, s.v[i].rec, s.v[i].size),
			  "entry %zu differs after the merge", i);
	replay(&t, &merged, proc, MODEL_SYSCALLS_ALL, true);
	compare_golden(&t, "workloads.trace");
	stream__free(&merged);
	stream__free(&s);
	mt_proc_free(proc);
}

/* ---- the generated stream --------------------------------------------------------------- */

#define G_NCPU 3
#define G_MAXT 24
#define G_BASE 5000		/* tid of slot i: G_BASE + i */
#define G_STEPS 6000

enum g_state { G_FREE, G_RUNNABLE, G_RUNNING, G_SLEEPING };

/* A small kernel: threads of a few processes on G_NCPU CPUs that run, block, wake each other,
 * fork threads and processes, exec (a non-leader too), exit, make syscalls, grow their memory
 * and annotate, sampled as they run, with stacks on what the recorder stacks. Its stream is
 * then damaged: records dropped, repeated, swapped and corrupted, losses reported. */
struct gen {
	uint64_t rng, ts;
	struct stream *s;
	enum g_state st[G_MAXT];
	uint32_t pid[G_MAXT];		/* tgid of the slot's thread */
	bool exiting[G_MAXT];
	int on[G_NCPU];			/* slot running on each CPU, -1: idle */
	const uint64_t *ksyms;		/* kernel text addresses of the fixture's kallsyms */
	size_t nksyms;
	union {
		struct lx_rec h;
		uint64_t words[64 + (sizeof(struct lx_user_log) + sizeof(struct lx_stack)) / 8 +
			       LX_STACK_KERN_MAX + LX_STACK_USER_MAX];
	} buf;
};

/* splitmix64: the same numbers on every libc. */
static uint64_t g_next(struct gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned g_rand(struct gen *g, unsigned n)
{
	return (unsigned)(g_next(g) % n);
}

static uint32_t g_tid(int slot)
{
	return G_BASE + (uint32_t)slot;
}

/* A fresh record of `size` bytes in g->buf, stamped with the next time. */
static void *g_rec(struct gen *g, uint8_t type, uint16_t cpu, uint32_t tid, size_t size)
{
	memset(&g->buf, 0, size);
	g->ts += 1 + g_rand(g, 40);
	g->buf.h = (struct lx_rec){ .ts = g->ts, .tid = tid, .cpu = cpu, .type = type };
	return &g->buf;
}

/* Appends a stack after the record of `size` bytes in g->buf; returns the new size. Kernel
 * frames come from the fixture's symbols (some past every symbol: unknown), user frames from
 * a small pool so that stacks repeat; now and then one too deep for Go's limits. */
static size_t g_stack(struct gen *g, size_t size, uint32_t tid, bool kern, bool user)
{
	struct lx_stack *st = (void *)((char *)&g->buf + size);
	unsigned nk = kern ? 1 + g_rand(g, 6) : 0, nu = user ? g_rand(g, 8) : 0;

	if (user && !g_rand(g, 40))
		nu = LX_STACK_USER_MAX;
	*st = (struct lx_stack){ .tid = tid, .nkern = (uint16_t)nk, .nuser = (uint16_t)nu };
	for (unsigned i = 0; i < nk; i++)
		st->pc[i] = g_rand(g, 10) ? g->ksyms[g_rand(g, (unsigned)g->nksyms)] + g_rand(g, 64)
					  : 0xffffffffff000000ull + g_rand(g, 4096);
	for (unsigned i = 0; i < nu; i++)
		st->pc[nk + i] = 0x401000 + 0x40 * (uint64_t)g_rand(g, 12) + (i ? 5 : 0);
	return size + sizeof(*st) + (nk + nu) * sizeof(st->pc[0]);
}

static void g_add(struct gen *g, size_t size)
{
	cr_assert_eq(stream__add_record(g->s, &g->buf.h, size), 0);
}

static const int16_t g_block_nrs[] = { 202 /* futex */, 0 /* read */, 35 /* nanosleep */,
				       232 /* epoll_wait */, 61 /* wait4 */, -1, 7 /* poll */,
				       230 /* clock_nanosleep */, 45 /* recvfrom */ };

static void g_switch(struct gen *g, uint16_t c, int prev, int next, uint8_t state, int16_t nr)
{
	struct lx_switch *sw = g_rec(g, LX_REC_SWITCH, c, prev >= 0 ? g_tid(prev) : 0, sizeof(*sw));
	size_t size = sizeof(*sw);

	sw->next_tid = next >= 0 ? g_tid(next) : 0;
	sw->prev_state = state;
	sw->prev_syscall = nr;
	if (prev >= 0 && g_rand(g, 3))
		size = g_stack(g, size, g_tid(prev), g_rand(g, 2), true);
	g_add(g, size);
}

static void g_wakeup(struct gen *g, uint8_t type, uint16_t c, int slot, int waker)
{
	struct lx_wakeup *w = g_rec(g, type, c, g_tid(slot), sizeof(*w));
	size_t size = sizeof(*w);

	w->target_cpu = c;
	if (waker >= 0 && g_rand(g, 2))
		size = g_stack(g, size, g_tid(waker), true, g_rand(g, 2));
	g_add(g, size);
}

static void g_sample(struct gen *g, uint16_t c, int slot)
{
	struct lx_sample *sm = g_rec(g, LX_REC_SAMPLE, c, slot >= 0 ? g_tid(slot) : 0, sizeof(*sm));

	sm->pid = slot >= 0 ? g->pid[slot] : 0;
	sm->syscall = (int16_t)(g_rand(g, 3) ? -1 : 39 /* getpid */);
	g_add(g, g_stack(g, sizeof(*sm), slot >= 0 ? g_tid(slot) : 0, true, slot >= 0));
}

static const char *const g_names[] = { "parse", "render", "io", "", "a-name-long-enough-to-be-cut" };

static void g_user(struct gen *g, uint16_t c, int slot)
{
	uint8_t type = (uint8_t)(LX_REC_TASK_BEGIN + g_rand(g, 5));
	size_t size = type == LX_REC_LOG ? sizeof(struct lx_user_log) : sizeof(struct lx_user);
	struct lx_user_log *l = g_rec(g, type, c, g_tid(slot), size);

	l->u.pid = g->pid[slot];
	l->u.task = g_rand(g, 5);
	l->u.parent = g_rand(g, 3);
	if (!g_rand(g, 50))
		l->u.task = 1ull << 50;		/* out of range */
	if (type != LX_REC_TASK_END)
		snprintf(l->u.name, sizeof(l->u.name), "%s", g_names[g_rand(g, 5)]);
	if (!g_rand(g, 8))
		l->u.flags = (uint8_t)(1 + g_rand(g, 15));
	if (type == LX_REC_LOG)
		snprintf(l->msg, sizeof(l->msg), "message %u", g_rand(g, 100));
	g_add(g, size);
}

static void g_step(struct gen *g)
{
	uint16_t c = (uint16_t)g_rand(g, G_NCPU);
	int cur = g->on[c], r = (int)g_rand(g, 100);

	if (cur < 0) {
		/* Idle: run a runnable thread, take an interrupt that wakes one, or a sample. */
		int pick = (int)g_rand(g, G_MAXT);

		if (r < 8) {
			g_sample(g, c, -1);
			return;
		}
		for (int k = 0; k < G_MAXT; k++, pick = (pick + 1) % G_MAXT)
			if (g->st[pick] == G_RUNNABLE || (r < 30 && g->st[pick] == G_SLEEPING))
				break;
		if (g->st[pick] == G_SLEEPING) {
			g_wakeup(g, LX_REC_WAKEUP, c, pick, -1);
			g->st[pick] = G_RUNNABLE;
		} else if (g->st[pick] == G_RUNNABLE) {
			g_switch(g, c, -1, pick, LX_PREV_RUNNABLE, -1);
			g->st[pick] = G_RUNNING;
			g->on[c] = pick;
		}
		return;
	}
	if (g->exiting[cur]) {
		g_switch(g, c, cur, -1, LX_PREV_DEAD, -1);
		g->exiting[cur] = false;
		g->st[cur] = G_FREE;
		g->on[c] = -1;
	} else if (r < 22) {
		/* Blocks; sometimes woken before its switch-out record. */
		int16_t nr = g_block_nrs[g_rand(g, sizeof(g_block_nrs) / sizeof(g_block_nrs[0]))];
		bool early = !g_rand(g, 5);

		if (early)
			g_wakeup(g, LX_REC_WAKEUP, (uint16_t)((c + 1) % G_NCPU), cur, -1);
		g_switch(g, c, cur, -1, nr == 0 ? LX_PREV_DISK : LX_PREV_SLEEP, nr);
		g->st[cur] = early ? G_RUNNABLE : G_SLEEPING;
		g->on[c] = -1;
	} else if (r < 32) {
		g_switch(g, c, cur, -1, LX_PREV_RUNNABLE, g_rand(g, 3) ? -1 : 24 /* sched_yield */);
		g->st[cur] = G_RUNNABLE;
		g->on[c] = -1;
	} else if (r < 42) {
		int w = (int)g_rand(g, G_MAXT);

		if (g->st[w] == G_SLEEPING) {
			g_wakeup(g, LX_REC_WAKEUP, c, w, cur);
			g->st[w] = G_RUNNABLE;
		}
	} else if (r < 52) {
		struct lx_syscall *sc = g_rec(g, LX_REC_SYSCALL, c, g_tid(cur), sizeof(*sc));

		sc->nr = g_block_nrs[g_rand(g, 8)];
		g_add(g, sizeof(*sc));
	} else if (r < 58) {
		int k = (int)g_rand(g, G_MAXT);

		if (g->st[k] == G_FREE) {
			struct lx_fork *f = g_rec(g, LX_REC_FORK, c, g_tid(k), sizeof(*f));
			size_t size = sizeof(*f);

			/* Now and then by a parent never seen, or by the idle task. */
			f->parent_tid = g_rand(g, 10) ? g_tid(cur) : g_rand(g, 2) ? 0 : G_BASE + G_MAXT;
			/* A new process now and then, else a thread of the parent's. */
			g->pid[k] = g_rand(g, 4) ? g->pid[cur] : g_tid(k);
			f->child_pid = g->pid[k];
			if (g_rand(g, 2))
				size = g_stack(g, size, g_tid(cur), g_rand(g, 2), true);
			g_add(g, size);
			g_wakeup(g, LX_REC_WAKEUP_NEW, c, k, -1);
			g->st[k] = G_RUNNABLE;
		}
	} else if (r < 61) {
		struct lx_exec *e = g_rec(g, LX_REC_EXEC, c, g_tid(cur), sizeof(*e));
		int leader = (int)(g->pid[cur] - G_BASE);

		e->pid = g->pid[cur];
		snprintf(e->comm, sizeof(e->comm), "prog%u", g_rand(g, 3));
		if (leader != cur && leader >= 0 && leader < G_MAXT && g->st[leader] != G_RUNNING) {
			/* A non-leader execs: it takes the leader's tid, its own vanishes. */
			e->h.tid = g_tid(leader);
			e->old_tid = g_tid(cur);
			g->pid[leader] = g->pid[cur];
			g->st[leader] = G_RUNNING;
			g->exiting[leader] = false;
			g->st[cur] = G_FREE;
			g->on[c] = leader;
		}
		g_add(g, sizeof(*e));
	} else if (r < 64) {
		int live = 0;

		for (int i = 0; i < G_MAXT; i++)
			live += g->st[i] != G_FREE;
		if (live > 4) {
			g_rec(g, LX_REC_EXIT, c, g_tid(cur), sizeof(struct lx_rec));
			g_add(g, sizeof(struct lx_rec));
			g->exiting[cur] = true;
		}
	} else if (r < 72) {
		g_sample(g, c, cur);
	} else if (r < 76) {
		struct lx_rss *rs = g_rec(g, LX_REC_RSS, c, g_tid(cur), sizeof(*rs));

		rs->pid = g->pid[cur];
		rs->pages = g_rand(g, 8) ? 100 + g_rand(g, 5000) : 0;
		g_add(g, sizeof(*rs));
	} else if (r < 86) {
		g_user(g, c, cur);
	}
}

/* Damages the stream in place: drops, repeats, swaps, corrupts, and reports losses. */
static void g_damage(struct gen *g, struct stream *in, struct stream *out)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct stream_entry *e = &in->v[i];
		unsigned r = g_rand(g, 1000);

		memcpy(&g->buf, e->rec, e->size);
		if (r < 15) {
			if (r < 8)
				cr_assert_eq(stream__add_lost(out, e->rec->cpu, e->rec->ts, 1 + r), 0);
			continue;
		}
		if (r < 25 && i + 1 < in->n) {
			cr_assert_eq(stream__add_record(out, in->v[i + 1].rec, in->v[i + 1].size), 0);
		} else if (r < 35) {
			switch (g_rand(g, 7)) {
			case 0:
				g->buf.h.cpu = (uint16_t)(G_NCPU + g_rand(g, 2));
				break;
			case 1:
				g->buf.h.tid = 1u << 23;
				break;
			case 2:
				g->buf.h.type = (uint8_t)g_rand(g, 20);
				break;
			case 3:
				g->buf.h.ts -= 500;	/* older than what was written */
				break;
			case 4:
				g->buf.h.tid = G_BASE + G_MAXT + g_rand(g, 4);	/* never created */
				break;
			case 5:
				g->buf.h.tid = 0;	/* the idle task */
				break;
			default:
				cr_assert_eq(stream__add_record(out, &g->buf.h, e->size > 8 ? e->size - 8 : e->size), 0);
				continue;
			}
		}
		cr_assert_eq(stream__add_record(out, &g->buf.h, e->size), 0);
		if (r >= 990)
			cr_assert_eq(stream__add_record(out, &g->buf.h, e->size), 0);
	}
	out->ncpus = G_NCPU;
}

/* Kernel text addresses of a kallsyms file. */
static uint64_t *ksyms_of(const char *path, size_t *n)
{
	uint64_t *v = NULL;
	unsigned long long a;
	size_t cap = 0;
	char line[512];
	FILE *f = fopen(path, "re");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	*n = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx", &a) == 1) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 256;
				v = realloc(v, cap * sizeof(*v));
				cr_assert_not_null(v);
			}
			v[(*n)++] = a;
		}
	fclose(f);
	cr_assert_gt(*n, 0);
	return v;
}

/* The generated stream, damaged, in *damaged; its fake /proc in *proc_out. */
static void generated(struct stream *damaged, char **proc_out)
{
	struct stream clean = { 0 };
	struct gen g = { .rng = 11, .ts = 2000000, .s = &clean };
	char dst[4096], *proc = mt_proc_new();

	g.ksyms = ksyms_of(STREAMS "workloads.kallsyms", &g.nksyms);
	snprintf(dst, sizeof(dst), "%s/kallsyms", proc);
	copy_file(STREAMS "workloads.kallsyms", dst);
	for (int c = 0; c < G_NCPU; c++)
		g.on[c] = -1;
	/* Alive at start: two processes, threads running, sleeping, in a syscall. */
	for (int i = 0; i < 8; i++) {
		static const char states[] = "RSDS";
		char st = states[i % 4];

		g.pid[i] = i < 5 ? G_BASE : G_BASE + 5;
		g.st[i] = st == 'R' ? G_RUNNABLE : G_SLEEPING;
		mt_proc_thread(proc, g.pid[i], g_tid(i), i < 5 ? "server" : "worker", st,
			       st == 'S' ? 202 : st == 'D' ? 0 : -1);
	}
	proc_statm(proc, G_BASE, 1000);
	proc_statm(proc, G_BASE + 5, 300);
	for (int i = 0; i < G_STEPS; i++)
		g_step(&g);
	*damaged = (struct stream){ 0 };
	g_damage(&g, &clean, damaged);
	damaged->start = 1000000;
	damaged->end = g.ts + 1000;
	stream__free(&clean);
	free((void *)g.ksyms);
	*proc_out = proc;
}

Test(golden, generated_stream, .timeout = 120)
{
	struct stream damaged;
	char *proc;
	struct mt t;

	generated(&damaged, &proc);
	replay(&t, &damaged, proc, MODEL_SYSCALLS_ALL, true);
	cr_expect_gt(t.st.stack_lookups, 0);
	cr_expect_gt(t.st.lost, 0);
	cr_expect_gt(t.st.repairs[MODEL_REPAIR_BAD_RECORD], 0);
	compare_golden(&t, "generated.trace");
	/* The whole machine's options, without syscalls: their records and the rss ones are
	 * ignored, blocking syscalls show as plain blocks. */
	replay(&t, &damaged, proc, MODEL_SYSCALLS_NONE, false);
	compare_golden(&t, "generated-nosys.trace");
	stream__free(&damaged);
	mt_proc_free(proc);
}

/* ---- both formats from the same streams ------------------------------------------------- */

/* What Go 1.23's parser says of a thread (by tid: a goroutine id's low 32 bits) that both
 * formats can say: the times it got a CPU, was woken, entered a syscall; its CPU samples, its
 * user tasks, regions and logs. One sorted value per event: tid << 8 | kind. */
enum said { SAID_RUN, SAID_WAKE, SAID_SYSCALL, SAID_SAMPLE, SAID_USER, SAID_LOG };

struct said_list {
	uint64_t *v;
	size_t n, cap;
	unsigned kinds;		/* 1 << enum said: those kept */
};

static void said_add(struct said_list *l, uint64_t g, enum said k)
{
	if (!(l->kinds & 1u << k))
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		cr_assert_not_null(l->v);
	}
	l->v[l->n++] = (g & 0xffffffffull) << 8 | k;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Runs on the housekeeping P (hk) are the init phase's and repairs, written differently by
 * each format, and lxtrace's own goroutine runs for different reasons in each: neither is a
 * thread's. */
static void said_of(const char *path, uint32_t hk, unsigned kinds, struct said_list *l)
{
	struct goparse_result r;
	char *text = NULL, line[4096];
	const char *at;

	cr_assert_eq(goparse_123_text(path, 1, &r, &text), 0);
	cr_assert(r.ok, "go 1.23 -d=1 %s: %s", path, r.error);
	*l = (struct said_list){ .kinds = kinds };
	for (at = text; *at;) {
		const char *nl = strchr(at, '\n');
		size_t n = nl ? (size_t)(nl - at) : strlen(at);
		long long mm, p, g;
		unsigned long long id;
		char kind[64];
		const char *tr, *res;

		snprintf(line, sizeof(line), "%.*s", (int)n, at);
		at += n + (nl != NULL);
		if (sscanf(line, "M=%lld P=%lld G=%lld %63s", &mm, &p, &g, kind) != 4)
			continue;
		if (!strcmp(kind, "StackSample")) {
			said_add(l, (uint64_t)g, SAID_SAMPLE);
		} else if (!strcmp(kind, "Log")) {
			said_add(l, (uint64_t)g, SAID_LOG);
		} else if (!strncmp(kind, "Task", 4) || !strncmp(kind, "Region", 6)) {
			said_add(l, (uint64_t)g, SAID_USER);
		} else if (!strcmp(kind, "StateTransition") &&
			   (res = strstr(line, "Resource=Goroutine(")) &&
			   sscanf(res, "Resource=Goroutine(%llu)", &id) == 1 && id != 0xffffffffull &&
			   (tr = strrchr(line, ' '))) {
			if (strstr(tr, "->Running") && p != hk)
				said_add(l, id, SAID_RUN);
			else if (!strcmp(tr, " Waiting->Runnable"))
				said_add(l, id, SAID_WAKE);
			else if (!strcmp(tr, " Running->Syscall"))
				said_add(l, id, SAID_SYSCALL);
		}
	}
	free(text);
	qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
}

/* Every kind; with --syscalls=all not the runs and syscalls: a syscall entry with no exit is
 * an instant syscall in the go1.23 format (a run back from it), and the block that follows it
 * a second one, where 1.19's converter makes them one. */
#define SAID_ALL 0x3fu
#define SAID_NOT_SYSCALLS (SAID_ALL & ~(1u << SAID_RUN | 1u << SAID_SYSCALL))

/* s replayed into both formats: the go1.23 file passes 1.23's parser and says what the 1.19
 * file says of the kinds given, event for event (as 1.23 reads each). */
static void both_formats(const struct stream *s, const char *proc, enum model_syscalls mode,
			 bool rss)
{
	unsigned kinds = mode == MODEL_SYSCALLS_ALL ? SAID_NOT_SYSCALLS : SAID_ALL;
	struct said_list a, b;
	struct mt t1, t2;
	size_t i;

	replay_as(&t1, s, proc, mode, rss, false);
	replay_as(&t2, s, proc, mode, rss, true);
	cr_assert_eq(t1.st.records, t2.st.records);
	for (i = 0; i < MODEL_REPAIR_COUNT; i++)
		cr_expect_eq(t1.st.repairs[i], t2.st.repairs[i], "repair %s", model__repair_name(i));
	said_of(t1.path, s->ncpus, kinds, &a);
	said_of(t2.path, s->ncpus, kinds, &b);
	cr_expect_gt(a.n, 0);
	for (i = 0; i < a.n && i < b.n && a.v[i] == b.v[i]; i++)
		;
	cr_expect(i == a.n && i == b.n,
		  "go1.19 file: %zu events, go1.23 file: %zu; first difference: thread %llu kind %d "
		  "(go1.19) / thread %llu kind %d (go1.23)", a.n, b.n,
		  i < a.n ? (unsigned long long)(a.v[i] >> 8) : 0ull, i < a.n ? (int)(a.v[i] & 0xff) : -1,
		  i < b.n ? (unsigned long long)(b.v[i] >> 8) : 0ull, i < b.n ? (int)(b.v[i] & 0xff) : -1);
	free(a.v);
	free(b.v);
	mt_close(&t1, false);
	mt_close(&t2, false);
}

Test(golden_go123, recorded_workloads, .timeout = 240)
{
	struct stream s;
	char *proc = fixture_proc("workloads");
	int err = stream__load(&s, STREAMS "workloads.stream");

	cr_assert_eq(err, 0, "workloads.stream: %s", strerror(-err));
	both_formats(&s, proc, MODEL_SYSCALLS_BLOCKING, true);
	both_formats(&s, proc, MODEL_SYSCALLS_NONE, false);
	both_formats(&s, proc, MODEL_SYSCALLS_ALL, true);
	stream__free(&s);
	mt_proc_free(proc);
}

Test(golden_go123, generated_stream, .timeout = 240)
{
	struct stream damaged;
	char *proc;

	generated(&damaged, &proc);
	both_formats(&damaged, proc, MODEL_SYSCALLS_BLOCKING, true);
	both_formats(&damaged, proc, MODEL_SYSCALLS_NONE, false);
	both_formats(&damaged, proc, MODEL_SYSCALLS_ALL, true);
	stream__free(&damaged);
	mt_proc_free(proc);
}

/* The reader's split of a go1.23 file (format/go123/reader.h), generation by generation; its
 * last return: 0 at the end, or the error with its message in err. */
static int reader_split(int fd, uint64_t *batches, uint64_t *events, char *err, size_t errlen)
{
	struct go123_reader *r = go123_reader__new(&(struct go123_reader_opts){
		.sz = sizeof(struct go123_reader_opts), .fd = fd });
	uint64_t b, e;
	int ret;

	cr_assert(r);
	*batches = *events = 0;
	while ((ret = go123_reader__next_generation(r)) == 1) {
		go123_reader__gen_split(r, &b, &e);
		*batches += b;
		*events += e;
	}
	snprintf(err, errlen, "%s", go123_reader__error(r));
	go123_reader__free(r);
	return ret;
}

/* The reader splits a go1.23 file into as many batches and events as Go 1.23's -d=2; the
 * file cut inside a batch is refused with its offset. */
Test(golden_go123, dump_splits_what_go_splits, .timeout = 240)
{
	struct goparse_result r;
	struct stream s;
	char *proc, *text = NULL, err[256];
	uint64_t go_events = 0, go_batches = 0, events = 0, batches = 0;
	struct mt t;
	off_t size;
	int fd;

	generated(&s, &proc);
	replay_as(&t, &s, proc, MODEL_SYSCALLS_ALL, true, true);
	cr_assert_eq(goparse_123_text(t.path, 2, &r, &text), 0);
	cr_assert(r.ok, "go 1.23 -d=2: %s", r.error);
	for (const char *p = text; (p = strstr(p, " dt=")); p++)
		go_events++;
	for (const char *p = text; (p = strstr(p, "EventBatch ")); p++)
		go_batches++;
	fd = open(t.path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(reader_split(fd, &batches, &events, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(events, go_events);
	cr_expect_eq(batches, go_batches);
	cr_expect_gt(events, 1000);
	/* Cut in the middle: the last batch is short, and as Go does, the reader first finds
	 * that batch's generation without its Frequency (written last) if it was the first. */
	size = lseek(fd, 0, SEEK_END);
	cr_assert_eq(ftruncate(t.fd, size / 2), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	cr_assert_eq(reader_split(fd, &batches, &events, err, sizeof(err)), -EINVAL);
	cr_expect(!strncmp(err, "offset ", 7) && (strstr(err, "cut short") ||
						  strstr(err, "has no Frequency")), "%s", err);
	close(fd);
	free(text);
	mt_close(&t, false);
	stream__free(&s);
	mt_proc_free(proc);
}

/* The report's sections of the file at path, as text after its first line (the name). */
static char *report_of(const char *path, unsigned sections)
{
	struct report_opts o = { .sections = sections, .top = 20, .hist = true,
				 .filter = { .to_ns = UINT64_MAX } };
	char *text = NULL, *body, err[256];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int fd = open(path, O_RDONLY);

	cr_assert(out && fd >= 0);
	cr_assert_eq(report__file(fd, "x.trace", &o, out, err, sizeof(err)), 0, "%s", err);
	close(fd);
	fclose(out);
	body = strdup(strchr(text, '\n') ? strchr(text, '\n') + 1 : text);
	free(text);
	cr_assert(body);
	return body;
}

/* The recorded workloads replayed into both formats: the go1.23 file's report is the 1.19
 * file's (docs/report.md, "go1.23 files"), the scheduler's waits after a sleep inside a
 * syscall aside, which the format does not have. */
Test(golden_go123, report_reads_both_formats_alike, .timeout = 240)
{
	const unsigned sections = REPORT_OFFCPU | REPORT_SYSCALLS | REPORT_CPU | REPORT_TRIGGERS;
	struct stream s;
	char *proc = fixture_proc("workloads"), *a, *b;
	int err = stream__load(&s, STREAMS "workloads.stream");
	struct mt t1, t2;

	cr_assert_eq(err, 0, "workloads.stream: %s", strerror(-err));
	replay_as(&t1, &s, proc, MODEL_SYSCALLS_BLOCKING, true, false);
	replay_as(&t2, &s, proc, MODEL_SYSCALLS_BLOCKING, true, true);
	a = report_of(t1.path, sections);
	b = report_of(t2.path, sections);
	cr_expect_str_eq(b, a, "go1.23\n%s\ngo1.19\n%s", b, a);
	free(a);
	free(b);
	mt_close(&t1, false);
	mt_close(&t2, false);
	stream__free(&s);
	mt_proc_free(proc);
}
