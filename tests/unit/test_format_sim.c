/* test_format_sim.c - drives gt_writer with a random scheduler that keeps the Go parsers'
 * state machine (docs/format.md): threads created in an init phase, then started, preempted,
 * blocked every way, woken by running threads and by idle CPUs, syscalls that block and that
 * do not, user tasks, regions and logs, CPU samples, CPUs going idle, threads exiting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go119/close.h"
#include "format/varint.h"
#include "format/go119/writer.h"
#include "tests/unit/test_format_sim.h"

enum gstate { G_DEAD, G_RUNNABLE, G_RUNNING, G_WAITING, G_SYSCALL, G_GONE };

struct g {
	uint64_t id, seq;
	enum gstate st;
	uint32_t p;		/* when running */
	uint64_t name_stk;
};

struct sim {
	struct gt_writer *w;
	const struct sim_opts *o;
	struct sim_result *res;
	struct g *gs;
	size_t ng, gcap;
	uint64_t *cur;		/* G running per P, index into gs + 1 */
	bool *started;
	uint64_t now;
	unsigned rng;
	uint64_t next_task, gc_seq;
	bool gc_on;
	bool *sweep_on;
	int err;
};

static unsigned rnd(struct sim *s, unsigned n)
{
	s->rng = s->rng * 1103515245u + 12345u;
	return (s->rng >> 8) % n;
}

static void ev(struct sim *s, uint32_t p, enum gt_type t, const uint64_t *a, unsigned n)
{
	int err;

	if (s->err)
		return;
	err = gt_writer__event(s->w, p, s->now, t, a, n);
	if (err) {
		fprintf(stderr, "sim: %s on P %u at %llu: %s\n", gt_specs[t].name, p,
			(unsigned long long)s->now, strerror(-err));
		s->err = err;
		return;
	}
	s->res->counts[t]++;
	s->res->events++;
}

static void tick(struct sim *s, unsigned min)
{
	s->now += min + rnd(s, 1500);
}

static const char *const funcs[] = {
	"main.main", "main.worker", "runtimex.readLoop", "net.(*conn).Read", "sync.(*Mutex).Lock",
	"os.(*File).Write", "syscall.Syscall", "main.handle", "io.Copy", "main.compute",
};

/* One of 24 stacks (or o->stacks), defined (on P p) when the writer does not know it. */
static uint64_t stack(struct sim *s, uint32_t p)
{
	unsigned k = rnd(s, s->o->stacks ? s->o->stacks : 24), n = 1 + k % 4;
	char names[4][32];
	struct gt_frame f[4];
	uint64_t id;

	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "main.f%u_%u", k, i);
		f[i] = (struct gt_frame){ 0x400000 + 0x100 * k + 0x10 * i,
					  s->o->stacks ? names[i] : funcs[(k + i) % 10],
					  i % 2 ? "/src/main.go" : "/src/lib.go", 10 + k + i };
	}
	id = gt_writer__stack(s->w, p, f, n);
	if (!id && !s->err)
		s->err = -errno;
	return id;
}

/* The identity stack naming a thread: fn = its comm, file = "[tid N]". */
static uint64_t name_stack(struct sim *s, uint32_t p, uint64_t g)
{
	char comm[32], file[32];
	struct gt_frame f;
	uint64_t id;

	snprintf(comm, sizeof(comm), "thread-%llu", (unsigned long long)(g % 7));
	snprintf(file, sizeof(file), "[tid %llu]", (unsigned long long)g);
	f = (struct gt_frame){ 0x7f0000000000ULL + g, comm, file, 1 };
	id = gt_writer__stack(s->w, p, &f, 1);
	if (!id && !s->err)
		s->err = -errno;
	return id;
}

static struct g *new_g(struct sim *s)
{
	struct g *g;

	if (s->ng == s->gcap) {
		s->gcap = s->gcap ? s->gcap * 2 : 64;
		s->gs = realloc(s->gs, s->gcap * sizeof(*s->gs));
	}
	g = &s->gs[s->ng++];
	memset(g, 0, sizeof(*g));
	g->id = 1000 + s->ng * 37;
	return g;
}

static void create(struct sim *s, uint32_t p, struct g *g)
{
	uint64_t a[3];

	g->name_stk = name_stack(s, p, g->id);
	a[0] = g->id;
	a[1] = g->name_stk;
	a[2] = s->cur[p] ? stack(s, p) : 0;
	ev(s, p, GT_EV_GO_CREATE, a, 3);
	g->st = G_RUNNABLE;
	g->seq = 1;
}

static struct g *pick(struct sim *s, enum gstate st)
{
	unsigned start;

	if (!s->ng)
		return NULL;
	start = rnd(s, (unsigned)s->ng);
	for (size_t i = 0; i < s->ng; i++) {
		struct g *g = &s->gs[(start + i) % s->ng];

		if (g->st == st)
			return g;
	}
	return NULL;
}

static void start(struct sim *s, uint32_t p, struct g *g)
{
	uint64_t a[3] = { g->id, g->seq++, 0 };

	if (rnd(s, 10) == 0) {
		a[2] = gt_writer__string(s->w, p, rnd(s, 2) ? "label-a" : "label-b");
		ev(s, p, GT_EV_GO_START_LABEL, a, 3);
	} else {
		ev(s, p, GT_EV_GO_START, a, 2);
	}
	g->st = G_RUNNING;
	g->p = p;
	s->cur[p] = (uint64_t)(g - s->gs) + 1;
}

static void stop(struct sim *s, uint32_t p, enum gt_type t, enum gstate st)
{
	struct g *g = &s->gs[s->cur[p] - 1];
	uint64_t a[1] = { stack(s, p) };

	ev(s, p, t, a, gt_nvalues(t));
	g->st = st;
	s->cur[p] = 0;
}

static void user_events(struct sim *s, uint32_t p)
{
	uint64_t task = ++s->next_task, name = gt_writer__string(s->w, p, "task/req");
	uint64_t region = gt_writer__string(s->w, p, "region/parse");
	uint64_t key = gt_writer__string(s->w, p, "log-key");
	uint64_t a[4] = { task, 0, name, stack(s, p) };
	int err;

	ev(s, p, GT_EV_USER_TASK_CREATE, a, 4);
	tick(s, 1);
	a[1] = 0, a[2] = region, a[3] = stack(s, p);
	ev(s, p, GT_EV_USER_REGION, a, 4);
	tick(s, 1);
	if (!s->err) {
		err = gt_writer__user_log(s->w, p, s->now, task, key, stack(s, p), "hello\nworld", 11);
		if (err)
			s->err = err;
		s->res->counts[GT_EV_USER_LOG]++;
		s->res->events++;
	}
	tick(s, 1);
	a[1] = 1, a[2] = region, a[3] = stack(s, p);
	ev(s, p, GT_EV_USER_REGION, a, 4);
	tick(s, 1);
	a[1] = stack(s, p);
	ev(s, p, GT_EV_USER_TASK_END, a, 2);
}

static void sample(struct sim *s, uint32_t p)
{
	uint64_t g = s->cur[p] ? s->gs[s->cur[p] - 1].id : 0;
	int err;

	if (s->err)
		return;
	err = gt_writer__cpu_sample(s->w, p, s->now, p, g, stack(s, p));
	if (err) {
		s->err = err;
		return;
	}
	s->res->counts[GT_EV_CPU_SAMPLE]++;
	s->res->events++;
}

static void gc_step(struct sim *s, uint32_t p)
{
	uint64_t a[2];

	switch (rnd(s, 4)) {
	case 0:
		a[0] = s->gc_on ? 0 : s->gc_seq, a[1] = stack(s, p);
		if (s->gc_on)
			ev(s, p, GT_EV_GC_DONE, a, 0);
		else
			ev(s, p, GT_EV_GC_START, a, 2), s->gc_seq++;
		s->gc_on = !s->gc_on;
		break;
	case 1:	/* Go 1.23 makes a stop-the-world a range of the goroutine running it; its
		 * viewer crashes on one that begins or ends while no goroutine runs. */
		a[0] = rnd(s, 2);
		ev(s, p, GT_EV_GC_STW_START, a, 1);
		tick(s, 1);
		ev(s, p, GT_EV_GC_STW_DONE, a, 0);
		break;
	case 2:
		a[0] = stack(s, p), a[1] = 4096;
		if (s->sweep_on[p]) {
			a[0] = 1 << 20;
			ev(s, p, GT_EV_GC_SWEEP_DONE, a, 2);
		} else {
			ev(s, p, GT_EV_GC_SWEEP_START, a, 1);
		}
		s->sweep_on[p] = !s->sweep_on[p];
		break;
	default:
		if (s->cur[p]) {
			a[0] = stack(s, p);
			ev(s, p, GT_EV_GC_MARK_ASSIST_START, a, 1);
			tick(s, 1);
			ev(s, p, GT_EV_GC_MARK_ASSIST_DONE, a, 0);
		}
	}
}

static const enum gt_type blocks[] = {
	GT_EV_GO_BLOCK, GT_EV_GO_BLOCK_SEND, GT_EV_GO_BLOCK_RECV, GT_EV_GO_BLOCK_SELECT,
	GT_EV_GO_BLOCK_SYNC, GT_EV_GO_BLOCK_COND, GT_EV_GO_BLOCK_NET, GT_EV_GO_SLEEP,
	GT_EV_GO_BLOCK_GC,
};

/* The running G on P p does something. */
static void running_step(struct sim *s, uint32_t p)
{
	struct g *g = &s->gs[s->cur[p] - 1], *h;
	uint64_t a[3];

	switch (rnd(s, 16)) {
	case 0:
	case 1:
		stop(s, p, GT_EV_GO_PREEMPT, G_RUNNABLE);
		break;
	case 2:
		stop(s, p, GT_EV_GO_SCHED, G_RUNNABLE);
		break;
	case 3:
	case 4:
	case 5:
		stop(s, p, blocks[rnd(s, sizeof(blocks) / sizeof(blocks[0]))], G_WAITING);
		break;
	case 6:		/* a syscall that does not block */
		a[0] = stack(s, p);
		ev(s, p, GT_EV_GO_SYSCALL, a, 1);
		break;
	case 7:		/* one that does */
		a[0] = stack(s, p);
		ev(s, p, GT_EV_GO_SYSCALL, a, 1);
		tick(s, 1);
		ev(s, p, GT_EV_GO_SYSBLOCK, a, 0);
		g->st = G_SYSCALL;
		s->cur[p] = 0;
		/* The P is handed off, as the runtime does; Go 1.23's viewer needs it to end the
		 * goroutine's slice when the syscall blocks. */
		tick(s, 1);
		ev(s, p, GT_EV_PROC_STOP, NULL, 0);
		tick(s, 1);
		ev(s, p, GT_EV_PROC_START, (uint64_t[]){ 5000 + p }, 1);
		break;
	case 8:
	case 9:
	case 10:
		h = pick(s, G_WAITING);
		if (!h)
			break;
		a[0] = h->id, a[1] = h->seq++, a[2] = stack(s, p);
		ev(s, p, GT_EV_GO_UNBLOCK, a, 3);
		h->st = G_RUNNABLE;
		break;
	case 11:
		if (s->ng < 400)
			create(s, p, new_g(s));
		break;
	case 12:
		if (rnd(s, 4))
			break;
		if (rnd(s, 3)) {
			ev(s, p, GT_EV_GO_END, NULL, 0);
		} else {
			a[0] = stack(s, p);
			ev(s, p, GT_EV_GO_STOP, a, 1);
		}
		g->st = G_GONE;
		s->cur[p] = 0;
		break;
	case 13:
		user_events(s, p);
		break;
	case 14:
		a[0] = 1000000 + rnd(s, 1 << 20);
		ev(s, p, rnd(s, 2) ? GT_EV_HEAP_ALLOC : GT_EV_HEAP_GOAL, a, 1);
		break;
	default:
		if (s->o->gc)
			gc_step(s, p);
		else
			sample(s, p);
	}
}

/* Something happens on P p, which runs nothing. */
static void idle_step(struct sim *s, uint32_t p)
{
	struct g *g;
	uint64_t a[3];

	if (!s->started[p]) {
		ev(s, p, GT_EV_PROC_START, (uint64_t[]){ 5000 + p }, 1);
		s->started[p] = true;
		return;
	}
	switch (rnd(s, 8)) {
	case 0:		/* a wakeup from interrupt context, by G0 */
		g = pick(s, G_WAITING);
		if (!g)
			break;
		a[0] = g->id, a[1] = g->seq++, a[2] = 0;
		ev(s, p, GT_EV_GO_UNBLOCK, a, 3);
		g->st = G_RUNNABLE;
		break;
	case 1:
		g = pick(s, G_SYSCALL);
		if (!g)
			break;
		a[0] = g->id, a[1] = g->seq++, a[2] = 0;
		ev(s, p, GT_EV_GO_SYSEXIT, a, 3);
		g->st = G_RUNNABLE;
		break;
	case 2:
		if (p != s->o->ncpu && !rnd(s, 3)) {
			ev(s, p, GT_EV_PROC_STOP, NULL, 0);
			s->started[p] = false;
		}
		break;
	case 3:
		sample(s, p);
		break;
	default:
		if (p == s->o->ncpu)	/* the housekeeping P never runs a G */
			break;
		g = pick(s, G_RUNNABLE);
		if (g)
			start(s, p, g);
	}
}

/* The init phase on the housekeeping P: threads that exist when tracing starts. */
static void init_phase(struct sim *s)
{
	uint32_t hk = s->o->ncpu;
	uint64_t a[2];

	create(s, hk, new_g(s));	/* strictly the earliest event */
	tick(s, 1);
	ev(s, hk, GT_EV_PROC_START, (uint64_t[]){ 4999 }, 1);
	s->started[hk] = true;
	for (unsigned i = 1; i < s->o->nthreads; i++) {
		struct g *g = new_g(s);

		tick(s, 1);
		create(s, hk, g);
		if (i % 3 == 1) {
			tick(s, 1);
			ev(s, hk, GT_EV_GO_WAITING, (uint64_t[]){ g->id }, 1);
			g->st = G_WAITING, g->seq = 2;
		} else if (i % 3 == 2) {
			tick(s, 1);
			ev(s, hk, GT_EV_GO_IN_SYSCALL, (uint64_t[]){ g->id }, 1);
			g->st = G_SYSCALL, g->seq = 2;
		}
	}
	tick(s, 1);
	a[0] = s->o->ncpu, a[1] = 0;
	ev(s, hk, GT_EV_GOMAXPROCS, a, 2);
	/* Hand the P off, as lxtrace's model does: Go 1.23's viewer remembers only the last
	 * GoInSyscall of a P and ends that syscall at the P's next ProcStop, whatever the
	 * goroutine did meanwhile (docs/format.md, "What the 1.23 viewer cannot take"). */
	tick(s, 1);
	ev(s, hk, GT_EV_PROC_STOP, NULL, 0);
	tick(s, 1);
	ev(s, hk, GT_EV_PROC_START, (uint64_t[]){ 4999 }, 1);
}

/* What the recorder does on a full disk: the file closed where it stops, with a note. */
static void seal(struct sim *s, int fd)
{
	struct gt_writer_pstate *ps = calloc(s->o->ncpu + 1, sizeof(*ps));
	struct gt_close_note note = { 999, s->o->ncpu, "sim", "sim.lost", "" };
	struct gt_writer_fstate fs;
	char msg[64];

	if (s->o->before_seal)
		s->o->before_seal();
	gt_writer__file_state(s->w, ps, &fs);
	s->res->lost = fs.lost;
	snprintf(msg, sizeof(msg), "%llu events not written", (unsigned long long)s->res->lost);
	note.msg = msg;
	s->res->seal_err = ps ? gt_close__seal(s->w, fd, s->o->ncpu + 1, &note) : -ENOMEM;
	free(ps);
}

int sim_write(int fd, const struct sim_opts *o, struct sim_result *out)
{
	struct gt_writer_opts wo = { .sz = sizeof(wo), .fd = fd, .nprocs = o->ncpu + 1,
				     .frequency = 1000000000, .batch_size = o->batch_size,
				     .table_budget = o->table_budget, .sink = o->sink,
				     .sink_ctx = o->sink_ctx, .forgot = o->forgot };
	struct sim s = { .o = o, .res = out, .now = 1000000, .rng = o->seed };
	int err;

	memset(out, 0, sizeof(*out));
	s.w = gt_writer__new(&wo);
	if (!s.w)
		return -errno;
	s.cur = calloc(o->ncpu + 1, sizeof(*s.cur));
	s.started = calloc(o->ncpu + 1, sizeof(*s.started));
	s.sweep_on = calloc(o->ncpu + 1, sizeof(*s.sweep_on));
	init_phase(&s);
	for (unsigned i = 0; i < o->steps && !s.err; i++) {
		uint32_t p = rnd(&s, o->ncpu + 1);

		tick(&s, i % 5 ? 1 : 0);
		if (s.cur[p])
			running_step(&s, p);
		else
			idle_step(&s, p);
	}
	/* The end: every running G preempted, every P stopped, pairs closed. */
	for (uint32_t p = 0; p <= o->ncpu && !s.err; p++) {
		tick(&s, 1);
		if (s.cur[p])
			stop(&s, p, GT_EV_GO_PREEMPT, G_RUNNABLE);
		if (s.sweep_on[p])
			ev(&s, p, GT_EV_GC_SWEEP_DONE, (uint64_t[]){ 1, 1 }, 2);
		if (s.started[p])
			ev(&s, p, GT_EV_PROC_STOP, NULL, 0);
	}
	if (s.gc_on)
		ev(&s, 0, GT_EV_GC_DONE, NULL, 0);
	err = s.err ? s.err : gt_writer__flush(s.w);
	if (err && err != -EINVAL && o->seal)
		seal(&s, fd);
	gt_writer__stats(s.w, &out->ws);
	gt_writer__free(s.w);
	free(s.gs);
	free(s.cur);
	free(s.started);
	free(s.sweep_on);
	return err;
}

size_t sim_batch_offsets(const uint8_t *buf, size_t len, size_t *offs, size_t max)
{
	const uint8_t *p = buf + GT_HEADER_LEN, *end = buf + len;
	size_t n = 0;
	uint64_t v = 0, l = 0;

	while (p < end) {
		uint8_t b = *p, type = b & 0x3f;
		unsigned k = b >> 6;

		if (type == GT_EV_BATCH && n < max)
			offs[n++] = (size_t)(p - buf);
		p++;
		if (type == GT_EV_STRING) {
			p += gt_varint_get(p, end, &v);
			p += gt_varint_get(p, end, &l);
			p += l;
			continue;
		}
		if (k < 3) {
			for (unsigned i = 0; i <= k; i++)
				p += gt_varint_get(p, end, &v);
			continue;
		}
		p += gt_varint_get(p, end, &l);
		p += l;
		if (type == GT_EV_USER_LOG) {
			p += gt_varint_get(p, end, &l);
			p += l;
		}
	}
	return n;
}

int sim_memfd(void)
{
	return memfd_create("lxtrace-test", MFD_CLOEXEC);
}

uint8_t *sim_slurp_fd(int fd, size_t *len)
{
	struct stat st;
	uint8_t *buf;

	if (fstat(fd, &st))
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return buf;
}
