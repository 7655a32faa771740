/* test_format_state.c - the state tracker follows generated traces in file order without a
 * problem, agrees at every point with a replay in time order (what cut relies on), reports
 * transitions the parsers refuse with their offset, and events their merge by time would
 * misplace, and digests batches fed from memory. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/go119/state.h"
#include "tests/unit/test_format_sim.h"

static uint8_t *sim_file(const struct sim_opts *o, size_t *len)
{
	struct sim_result res;
	int fd = sim_memfd();
	uint8_t *buf;

	cr_assert_geq(fd, 0);
	cr_assert_eq(sim_write(fd, o, &res), 0);
	buf = sim_slurp_fd(fd, len);
	cr_assert(buf);
	close(fd);
	return buf;
}

/* Feeds buf's events in file order, those before `before` only, into a new state. */
static struct gt_state *replay(const uint8_t *buf, size_t len, uint64_t before)
{
	struct gt_reader *r = gt_reader__new(&(struct gt_reader_opts){
		.sz = sizeof(struct gt_reader_opts), .fd = -1 });
	struct gt_state *s = gt_state__new();
	struct gt_state_stats st;

	cr_assert(r && s);
	gt_reader__feed(r, buf, len);
	cr_assert_eq(gt_state__replay(s, r, before), 0, "%s", gt_reader__error(r));
	gt_state__stats(s, &st);
	cr_assert_eq(st.problems, 0, "%s", gt_state__problem(s));
	gt_reader__free(r);
	return s;
}

/* The same from a time-sorted whole trace. */
static struct gt_state *replay_sorted(const struct gt_trace *t, uint64_t before)
{
	struct gt_state *s = gt_state__new();

	for (size_t i = 0; i < gt_trace__nevents(t) && gt_trace__events(t)[i].ts < before; i++)
		cr_assert_eq(gt_state__event(s, &gt_trace__events(t)[i]), 0, "%s",
			     gt_state__problem(s));
	return s;
}

static void expect_same(const struct gt_state *a, const struct gt_state *b, uint64_t at)
{
	const struct gt_gstat *ga = gt_state__goroutines(a);
	const struct gt_pstat *pa = gt_state__procs(a);

	cr_assert_eq(gt_state__ngoroutines(a), gt_state__ngoroutines(b), "at %llu",
		     (unsigned long long)at);
	for (size_t i = 0; i < gt_state__ngoroutines(a); i++) {
		const struct gt_gstat *gb = gt_state__goroutine(b, ga[i].id);

		cr_assert(gb, "g %llu at %llu", (unsigned long long)ga[i].id, (unsigned long long)at);
		cr_expect_eq(ga[i].state, gb->state, "g %llu at %llu", (unsigned long long)ga[i].id,
			     (unsigned long long)at);
		cr_expect_eq(ga[i].seq, gb->seq);
		cr_expect_eq(ga[i].p, gb->p);
		cr_expect_eq(ga[i].nregions, gb->nregions);
		cr_expect_eq(ga[i].syscall, gb->syscall);
	}
	cr_assert_eq(gt_state__nprocs(a), gt_state__nprocs(b));
	for (size_t i = 0; i < gt_state__nprocs(a); i++) {
		const struct gt_pstat *pb = gt_state__proc(b, pa[i].id);

		cr_assert(pb);
		cr_expect_eq(pa[i].started, pb->started, "p %lld at %llu", (long long)pa[i].id,
			     (unsigned long long)at);
		cr_expect_eq(pa[i].g, pb->g);
		cr_expect_eq(pa[i].sweep, pb->sweep);
	}
	cr_expect_eq(gt_state__ntasks(a), gt_state__ntasks(b));
	cr_expect_eq(gt_state__gc(a)->gc, gt_state__gc(b)->gc);
	cr_expect_eq(gt_state__gc(a)->stw, gt_state__gc(b)->stw);
}

Test(format_state, generated_traces_in_file_order)
{
	for (unsigned seed = 1; seed <= 6; seed++) {
		struct sim_opts o = { .ncpu = 1 + seed % 4, .nthreads = 5 + 3 * seed, .steps = 4000,
				      .seed = seed, .batch_size = seed % 2 ? 160 : 0, .gc = seed % 3 == 0 };
		struct gt_state_stats st;
		size_t len;
		uint8_t *buf = sim_file(&o, &len);
		struct gt_state *s = replay(buf, len, UINT64_MAX);

		gt_state__stats(s, &st);
		cr_expect_eq(st.problems, 0);
		cr_expect_gt(st.events, 1000);
		/* The generator ends every run and stops every P. */
		for (size_t i = 0; i < gt_state__ngoroutines(s); i++)
			cr_expect_neq(gt_state__goroutines(s)[i].state, GT_GS_RUNNING);
		for (size_t i = 0; i < gt_state__nprocs(s); i++)
			cr_expect(!gt_state__procs(s)[i].started && !gt_state__procs(s)[i].g);
		cr_expect(!gt_state__gc(s)->gc && gt_state__gc(s)->init_done);
		cr_expect_eq(st.max_p, (int64_t)o.ncpu);
		gt_state__free(s);
		free(buf);
	}
}

/* What cut does: the state at T from the events before T in file order is the state at T. */
Test(format_state, file_order_agrees_with_time_order_at_every_point)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 12, .steps = 3000, .seed = 9,
			      .batch_size = 200, .gc = true };
	struct gt_trace *t;
	char err[256];
	size_t len;
	uint8_t *buf = sim_file(&o, &len);
	uint64_t first, last;

	cr_assert_eq(gt_trace__parse(buf, len, &t, err, sizeof(err)), 0, "%s", err);
	first = gt_trace__events(t)[0].ts;
	last = gt_trace__events(t)[gt_trace__nevents(t) - 1].ts;
	for (unsigned k = 0; k <= 40; k++) {
		uint64_t at = first + (last - first) * k / 40 + k % 3;
		struct gt_state *a = replay(buf, len, at), *b = replay_sorted(t, at);

		expect_same(a, b, at);
		gt_state__free(a);
		gt_state__free(b);
	}
	gt_trace__free(t);
	free(buf);
}

static struct gt_event ev(uint64_t off, int64_t p, uint64_t g, enum gt_type t, uint64_t a0,
			  uint64_t a1, uint64_t a2)
{
	return (struct gt_event){ .ts = 100 + off, .off = off, .p = p, .g = g, .type = (uint8_t)t,
				  .nargs = (uint8_t)gt_nvalues(t), .args = { a0, a1, a2 } };
}

/* After g5 and g6 created on P0, P0 started and g5 started there, the n events of es: the last
 * is refused with a problem naming want, those before it are taken. */
static void expect_refused(const struct gt_event *es, size_t n, const char *want)
{
	const struct gt_event good[] = {
		ev(1, 0, 0, GT_EV_GO_CREATE, 5, 0, 0),
		ev(2, 0, 0, GT_EV_GO_CREATE, 6, 0, 0),
		ev(3, 0, 0, GT_EV_PROC_START, 0, 0, 0),
		ev(4, 0, 5, GT_EV_GO_START, 5, 1, 0),
	};
	struct gt_state *s = gt_state__new();

	for (size_t j = 0; j < sizeof(good) / sizeof(good[0]); j++)
		cr_assert_eq(gt_state__event(s, &good[j]), 0, "%s", gt_state__problem(s));
	for (size_t j = 0; j + 1 < n; j++)
		cr_assert_eq(gt_state__event(s, &es[j]), 0, "%s: %s", want, gt_state__problem(s));
	cr_expect_eq(gt_state__event(s, &es[n - 1]), -EPROTO, "%s accepted", want);
	cr_expect(strstr(gt_state__problem(s), want), "'%s', want '%s'", gt_state__problem(s), want);
	cr_expect(!strncmp(gt_state__problem(s), "offset ", 7));
	gt_state__free(s);
}

Test(format_state, transitions_the_parsers_refuse_are_reported)
{
	static const struct {
		struct gt_event e;
		const char *want;
	} bad[] = {
		{ { .off = 60, .p = 0, .g = 5, .type = GT_EV_GO_START, .nargs = 2, .args = { 5, 2 } },
		  "offset 60: GoStart: g 5 is not runnable" },
		{ { .off = 61, .p = 0, .type = GT_EV_PROC_STOP }, "p 0 runs g 5" },
		{ { .off = 62, .p = 1, .g = 5, .type = GT_EV_GO_BLOCK, .nargs = 1 },
		  "p 1 does not run g 5" },
		{ { .off = 63, .p = 0, .g = 5, .type = GT_EV_GO_UNBLOCK, .nargs = 3, .args = { 6, 2 } },
		  "g 6 is not waiting" },
		{ { .off = 64, .p = 0, .g = 5, .type = GT_EV_GO_CREATE, .nargs = 3, .args = { 6 } },
		  "g 6 exists" },
		{ { .off = 65, .p = 0, .type = GT_EV_GC_DONE }, "no GC is running" },
		{ { .off = 66, .p = 2, .type = GT_EV_GO_END }, "no goroutine runs on p 2" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(&bad[i].e, 1, bad[i].want);
}

/* e at time ts. */
static struct gt_event at(struct gt_event e, uint64_t ts)
{
	e.ts = ts;
	return e;
}

/* What the parsers' merge by time cannot place, and what they refuse whatever the order: the
 * last event of each sequence is reported. */
Test(format_state, orders_the_parsers_merge_refuses_are_reported)
{
	static const struct gt_event sample9 = { .ts = 105, .off = 70, .p = 0, .g = 9,
		.type = GT_EV_CPU_SAMPLE, .nargs = 4, .args = { 105, 0, 9, 0 } };
	static const struct gt_event sample6 = { .ts = 101, .off = 71, .p = 0, .g = 6,
		.type = GT_EV_CPU_SAMPLE, .nargs = 4, .args = { 101, 0, 6, 0 } };
	const struct {
		struct gt_event e[3];
		size_t n;
		const char *want;
	} bad[] = {
		{ { at(ev(60, 1, 6, GT_EV_GO_START, 6, 1, 0), 101) }, 1,
		  "offset 60: GoStart: time stamps out of order" },
		{ { ev(61, 0, 5, GT_EV_GO_END, 0, 0, 0), ev(62, 0, 0, GT_EV_GO_CREATE, 5, 0, 0) }, 2,
		  "g 5 existed" },
		{ { sample9, ev(63, 1, 0, GT_EV_GO_CREATE, 9, 0, 0) }, 2, "named by a CPUSample" },
		{ { sample6 }, 1, "g 6 is created after it" },
		{ { ev(64, 0, 0, GT_EV_GC_START, 0, 0, 0), at(ev(65, 1, 0, GT_EV_GC_DONE, 0, 0, 0), 164) },
		  2, "the GC's previous event" },
		{ { ev(66, 0, 0, GT_EV_GC_STW_START, 2, 0, 0) }, 1, "unknown kind 2" },
		{ { ev(67, 0, 5, GT_EV_FUTILE_WAKEUP, 0, 0, 0) }, 1, "Go 1.23 refuses it" },
		{ { ev(68, 0, 5, GT_EV_GO_START_LOCAL, 6, 0, 0) }, 1, "no sequence number: lxtrace cannot" },
		{ { ev(69, 0, 5, GT_EV_GO_SYSBLOCK, 0, 0, 0), ev(70, 1, 5, GT_EV_GO_SYSEXIT, 5, 2, 400) },
		  2, "real time 400 outside g 5's syscall" },
		{ { ev(71, 0, 5, GT_EV_USER_TASK_CREATE, 1, 0, 0), at(ev(72, 1, 5, GT_EV_USER_TASK_END, 1,
		    0, 0), 171) }, 2, "task 1 created at 171" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(bad[i].e, bad[i].n, bad[i].want);
}

static int apply(struct gt_state *s, struct gt_event e)
{
	return gt_state__event(s, &e);
}

Test(format_state, regions_tasks_and_syscalls)
{
	const struct gt_event es[] = {
		ev(1, 1, 0, GT_EV_GO_CREATE, 7, 0, 0),
		ev(2, 1, 0, GT_EV_PROC_START, 1, 0, 0),
		ev(3, 1, 7, GT_EV_GO_START, 7, 1, 0),
		{ .ts = 104, .off = 4, .p = 1, .g = 7, .type = GT_EV_USER_TASK_CREATE, .nargs = 4,
		  .args = { 3, 0, 11, 0 } },
		{ .ts = 105, .off = 5, .p = 1, .g = 7, .type = GT_EV_USER_REGION, .nargs = 4,
		  .args = { 3, 0, 12, 0 } },
		{ .ts = 106, .off = 6, .p = 1, .g = 7, .type = GT_EV_USER_REGION, .nargs = 4,
		  .args = { 3, 0, 13, 0 } },
		ev(7, 1, 7, GT_EV_GO_SYSCALL, 9, 0, 0),
	};
	struct gt_state *s = gt_state__new();
	const struct gt_gstat *g;

	for (size_t i = 0; i < sizeof(es) / sizeof(es[0]); i++)
		cr_assert_eq(gt_state__event(s, &es[i]), 0, "%s", gt_state__problem(s));
	g = gt_state__goroutine(s, 7);
	cr_assert(g);
	cr_expect_eq(g->state, GT_GS_RUNNING);
	cr_expect_eq(g->p, 1);
	cr_expect(g->syscall);
	cr_expect_eq(g->stk, 9);
	cr_assert_eq(g->nregions, 2);
	cr_expect_eq(g->regions[0].name, 12);
	cr_expect_eq(g->regions[1].name, 13);
	cr_assert_eq(gt_state__ntasks(s), 1);
	cr_expect_eq(gt_state__tasks(s)[0].name, 11);
	cr_expect_eq(gt_state__tasks(s)[0].g, 7);

	/* The syscall blocks; the region is ended wrongly (not the innermost); the goroutine ends. */
	cr_expect_eq(apply(s, ev(8, 1, 7, GT_EV_GO_SYSBLOCK, 0, 0, 0)), 0);
	g = gt_state__goroutine(s, 7);
	cr_expect_eq(g->state, GT_GS_SYSCALL);
	cr_expect_eq(g->why, GT_EV_GO_SYSBLOCK);
	cr_expect_eq(gt_state__proc(s, 1)->g, 0);
	cr_expect_eq(apply(s, ev(9, 0, 7, GT_EV_GO_SYSEXIT, 7, 2, 0)), 0);
	cr_expect_eq(gt_state__goroutine(s, 7)->seq, 3);
	cr_expect_eq(apply(s, ev(10, 1, 7, GT_EV_GO_START, 7, 3, 0)), 0);
	cr_expect_eq(apply(s, (struct gt_event){ .ts = 111, .off = 11, .p = 1, .g = 7,
			.type = GT_EV_USER_REGION, .nargs = 4, .args = { 3, 1, 12, 0 } }), -EPROTO);
	cr_expect_eq(apply(s, ev(12, 1, 7, GT_EV_GO_END, 0, 0, 0)), 0);
	cr_expect_null(gt_state__goroutine(s, 7));
	cr_expect_eq(gt_state__ngoroutines(s), 0);
	gt_state__free(s);
}

/* The flight recorder's way: batches fed from memory, one at a time. */
Test(format_state, batches_fed_from_memory)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 8, .steps = 2000, .seed = 4, .batch_size = 300 };
	size_t len, offs[2048], n;
	uint8_t *buf = sim_file(&o, &len);
	struct gt_state *whole = replay(buf, len, UINT64_MAX), *fed = gt_state__new();
	struct gt_state_stats a, b;

	n = sim_batch_offsets(buf, len, offs, 2048);
	cr_assert_gt(n, 20);
	for (size_t i = 0; i < n; i++) {
		size_t end = i + 1 < n ? offs[i + 1] : len;

		cr_assert_eq(gt_state__feed(fed, buf + offs[i], end - offs[i]), 0, "batch %zu: %s", i,
			     gt_state__problem(fed));
	}
	expect_same(whole, fed, UINT64_MAX);
	gt_state__stats(whole, &a);
	gt_state__stats(fed, &b);
	cr_expect_eq(a.events, b.events);
	cr_expect_eq(a.last_ts, b.last_ts);
	cr_assert(gt_state__dict(fed));
	cr_expect_gt(gt_dict__max_stack_id(gt_state__dict(fed)), 10);
	/* A batch cut in the middle of a record is refused with its offset. */
	cr_expect_eq(gt_state__feed(fed, buf + offs[1], 7), -EINVAL);
	cr_expect(strstr(gt_state__problem(fed), "offset "), "%s", gt_state__problem(fed));
	gt_state__free(whole);
	gt_state__free(fed);
	free(buf);
}

/* Forgetting every id the writer gave keeps exactly what the state still refers to: the
 * stacks of goroutines, tasks and regions, their names and labels, and the strings those
 * stacks name. */
Test(format_state, forgets_all_but_what_it_refers_to)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 8, .steps = 2000, .seed = 4, .batch_size = 300,
			      .stacks = 1000 };
	size_t len, offs[2048], n;
	uint8_t *buf = sim_file(&o, &len);
	struct gt_state *s = gt_state__new();
	const struct gt_dict *d;
	uint64_t nstr, nstk, *ids, before;

	n = sim_batch_offsets(buf, len, offs, 2048);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(gt_state__feed(s, buf + offs[i], (i + 1 < n ? offs[i + 1] : len) - offs[i]),
			     0);
	d = gt_state__dict(s);
	nstr = gt_dict__max_string_id(d);
	nstk = gt_dict__max_stack_id(d);
	before = gt_dict__bytes(d);
	/* Every id from 1 up names a string and, as far as there are stacks, a stack. */
	ids = calloc(nstr > nstk ? nstr : nstk, sizeof(*ids));
	cr_assert(ids);
	for (uint64_t i = 0; i < (nstr > nstk ? nstr : nstk); i++)
		ids[i] = i + 1;
	cr_assert_eq(gt_state__forget(s, ids, nstr, ids, nstk), 0);
	cr_expect_lt(gt_dict__bytes(d) * 2, before, "%llu of %llu bytes kept",
		     (unsigned long long)gt_dict__bytes(d), (unsigned long long)before);
	for (size_t i = 0; i < gt_state__ngoroutines(s); i++) {
		const struct gt_gstat *g = &gt_state__goroutines(s)[i];
		const uint64_t stks[] = { g->stk, g->name_stk };

		for (size_t k = 0; k < 2; k++) {
			const struct gt_stack *st = stks[k] ? gt_dict__stack(d, stks[k]) : NULL;

			cr_expect(!stks[k] || st, "goroutine %llu's stack %llu was forgotten",
				  (unsigned long long)g->id, (unsigned long long)stks[k]);
			for (size_t f = 0; st && f < st->n; f++)
				cr_expect(!st->frames[f].func_id ||
					  gt_dict__string(d, st->frames[f].func_id),
					  "a string of stack %llu was forgotten",
					  (unsigned long long)stks[k]);
		}
		cr_expect(!g->label || gt_dict__string(d, g->label));
		for (size_t k = 0; k < g->nregions; k++)
			cr_expect(gt_dict__string(d, g->regions[k].name));
	}
	for (size_t i = 0; i < gt_state__ntasks(s); i++)
		cr_expect(!gt_state__tasks(s)[i].name ||
			  gt_dict__string(d, gt_state__tasks(s)[i].name));
	free(ids);
	gt_state__free(s);
	free(buf);
}
