/* test_format_cut.c - windows of generated traces, written as traces of their own, pass both Go
 * parsers and both viewers, and hold exactly the source's events of the window: the same
 * goroutine, type and stack for each. Also the flight recorder's way: the state built from
 * batches kept in memory, the window cut from the batches that follow. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/go119/cut.h"
#include "format/go119/writer.h"
#include "tests/lib/goparse.h"
#include "tests/lib/tquery.h"
#include "tests/unit/test_format_sim.h"

static char path[64];

static void cleanup(void)
{
	if (path[0] && !getenv("LXTRACE_TEST_KEEP"))
		unlink(path);
	path[0] = '\0';
}

TestSuite(format_cut, .fini = cleanup, .timeout = 600);

static int sim_fd(const struct sim_opts *o)
{
	struct sim_result res;
	int fd = sim_memfd();

	cr_assert_geq(fd, 0);
	cr_assert_eq(sim_write(fd, o, &res), 0);
	return fd;
}

static int out_file(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/lxtrace-test-cut-%d.trace", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	return fd;
}

static struct gt_trace *load_fd(int fd)
{
	struct gt_trace *t;
	char err[256];
	size_t len;
	uint8_t *buf = sim_slurp_fd(fd, &len);

	cr_assert(buf);
	cr_assert_eq(gt_trace__parse(buf, len, &t, err, sizeof(err)), 0, "%s", err);
	free(buf);
	return t;
}

/* Cuts [from_ns, to_ns) of the trace in src; checks the output. */
static void check_window(int src, uint64_t from_ns, uint64_t to_ns, const char *what)
{
	struct gt_trace *in, *out;
	struct gt_cut_stats st;
	struct gt_cut_window win;
	uint64_t from, to;
	size_t na, nb;
	char err[512], why[1200], **a, **b;
	int fd = out_file();

	cr_assert_eq(gt_cut__file(src, fd, from_ns, to_ns, &st, &win, err, sizeof(err)), 0,
		     "%s: %s", what, err);
	from = win.from;
	to = win.to;
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s: %s", what, why);
	cr_assert(goparse_views_ok(path, why, sizeof(why)), "%s: %s", what, why);
	in = load_fd(src);
	out = load_fd(fd);
	close(fd);
	a = tq_window_lines(in, from, to, &na);
	b = tq_window_lines(out, from, to, &nb);
	cr_assert_eq(na, st.window_events, "%s", what);
	cr_assert_eq(na, nb, "%s: %zu events in the window, %zu in the cut", what, na, nb);
	for (size_t i = 0; i < na; i++)
		cr_assert_str_eq(a[i], b[i], "%s: event %zu", what, i);
	/* Nothing else happens inside the window; the init phase is before it. */
	cr_expect_eq(gt_trace__nevents(out), st.init_events + st.window_events + st.closing_events);
	cr_expect_lt(gt_trace__events(out)[0].ts, from + !st.init_events);
	tq_free_lines(a, na);
	tq_free_lines(b, nb);
	gt_trace__free(in);
	gt_trace__free(out);
}

Test(format_cut, windows_of_generated_traces)
{
	for (unsigned seed = 1; seed <= 4; seed++) {
		struct sim_opts o = { .ncpu = 1 + seed % 3, .nthreads = 6 + 4 * seed, .steps = 3000,
				      .seed = 30 + seed, .batch_size = seed % 2 ? 256 : 0,
				      .gc = seed % 2 == 0 };
		int src = sim_fd(&o);
		struct gt_trace *t = load_fd(src);
		uint64_t span = gt_trace__events(t)[gt_trace__nevents(t) - 1].ts -
				gt_trace__events(t)[0].ts;
		char what[64];

		gt_trace__free(t);
		/* Ticks are ns here (frequency 1e9). */
		for (unsigned k = 0; k < 4; k++) {
			uint64_t from = span * (k * 3 + 1) / 13, to = from + span / (k + 3);

			snprintf(what, sizeof(what), "seed %u, window %u", seed, k);
			check_window(src, from, to, what);
		}
		check_window(src, 0, span / 5, "from the start");
		check_window(src, span / 2, UINT64_MAX, "to the end");
		close(src);
	}
}

Test(format_cut, empty_window_is_refused)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 5, .steps = 300, .seed = 3 };
	int src = sim_fd(&o), fd = out_file();
	char err[512];

	cr_expect_eq(gt_cut__file(src, fd, 5000000000ull, UINT64_MAX, NULL, NULL, err,
				  sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "window is empty"), "%s", err);
	close(src);
	close(fd);
}

/* The flight recorder's way: a tracker fed the batches that left the window, cloned, the clone
 * fed what of the window's batches is still before the window's start, then the cut. */
Test(format_cut, window_of_batches_in_memory)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 10, .steps = 3000, .seed = 8, .batch_size = 300 };
	int src = sim_fd(&o), fd = out_file();
	size_t len, offs[2048], n, k;
	uint8_t *buf = sim_slurp_fd(src, &len);
	struct gt_state *evicted = gt_state__new(), *start;
	struct gt_state_stats st;
	struct gt_cut_stats cs;
	struct gt_cut *c = NULL;
	char err[512], why[1200];
	uint64_t from, last = 0;

	n = sim_batch_offsets(buf, len, offs, 2048);
	cr_assert_gt(n, 40);
	k = n / 2;
	for (size_t i = 0; i < k; i++)
		cr_assert_eq(gt_state__feed(evicted, buf + offs[i], offs[i + 1] - offs[i]), 0);
	gt_state__stats(evicted, &st);
	from = st.last_ts + 1;
	start = gt_state__clone(evicted);
	cr_assert(start);
	/* Two readers over the kept batches, each on top of the evicted batches' dictionary. */
	for (int pass = 0; pass < 2; pass++) {
		struct gt_reader *r = gt_reader__new(&(struct gt_reader_opts){
			.sz = sizeof(struct gt_reader_opts), .fd = -1, .headerless = true,
			.parent = gt_state__dict(evicted) });
		struct gt_event e;
		int ret;

		cr_assert(r);
		/* The kept batches continue what the evicted ones left running on each P. */
		for (size_t i = 0; i < gt_state__nprocs(evicted); i++)
			cr_assert_eq(gt_reader__set_running(r, gt_state__procs(evicted)[i].id,
							    gt_state__procs(evicted)[i].g), 0);
		if (pass == 1) {
			c = gt_cut__new(&(struct gt_cut_opts){ .sz = sizeof(struct gt_cut_opts),
				.fd = fd, .nprocs = o.ncpu + 1, .frequency = 1000000000, .from = from,
				.start = start, .dict = gt_state__dict(evicted) }, err, sizeof(err));
			cr_assert(c, "%s", err);
		}
		gt_reader__feed(r, buf + offs[k], len - offs[k]);
		while ((ret = gt_reader__next(r, &e)) == 1) {
			if (pass == 0 && e.ts < from)
				cr_assert_eq(gt_state__event(start, &e), 0, "%s", gt_state__problem(start));
			if (e.ts > last)
				last = e.ts;
			if (pass == 1 && e.ts >= from)
				cr_assert_eq(gt_cut__event(c, &e, gt_reader__dict(r)), 0, "%s",
					     gt_cut__error(c));
		}
		cr_assert_eq(ret, 0, "%s", gt_reader__error(r));
		gt_reader__free(r);
	}
	cr_assert_eq(gt_cut__finish(c, last + 1), 0, "%s", gt_cut__error(c));
	gt_cut__stats(c, &cs);
	cr_expect_gt(cs.window_events, 1000);
	cr_expect_gt(cs.goroutines, 0);
	gt_cut__free(c);
	close(fd);
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s", why);
	cr_assert(goparse_views_ok(path, why, sizeof(why)), "%s", why);
	gt_state__free(start);
	gt_state__free(evicted);
	free(buf);
	close(src);
}

static void put(struct gt_writer *w, uint32_t p, uint64_t ts, enum gt_type t, uint64_t a0,
		uint64_t a1, uint64_t a2, uint64_t a3)
{
	const uint64_t args[4] = { a0, a1, a2, a3 };

	cr_assert_eq(gt_writer__event(w, p, ts, t, args, gt_nvalues(t)), 0, "%s at %llu",
		     gt_specs[t].name, (unsigned long long)ts);
}

/* Open tasks, regions of a running and of a waiting goroutine, a goroutine in a syscall entry
 * and one with a label at the window's start: the init phase writes what the format allows,
 * and both viewers (their task and region pages too) take it. */
Test(format_cut, open_tasks_and_regions_at_the_start)
{
	int src = sim_memfd(), fd = out_file();
	struct gt_writer *w = gt_writer__new(&(struct gt_writer_opts){
		.sz = sizeof(struct gt_writer_opts), .fd = src, .nprocs = 3, .frequency = 1000000000 });
	struct gt_frame f[2] = { { 0x1000, "main.work", "/a.go", 3 }, { 0x2000, "g-one", "[tid 1]", 1 } };
	struct gt_cut_stats st;
	char err[512], why[1200];
	uint64_t stk, name, task, region, label;

	cr_assert(w);
	stk = gt_writer__stack(w, 2, f, 2);
	name = gt_writer__stack(w, 2, f + 1, 1);
	task = gt_writer__string(w, 2, "request");
	region = gt_writer__string(w, 2, "parse");
	label = gt_writer__string(w, 2, "GC (idle)");
	/* Init phase on P 2: g1..g4, then the CPUs. */
	put(w, 2, 1000, GT_EV_GO_CREATE, 1, name, 0, 0);
	put(w, 2, 1001, GT_EV_PROC_START, 2, 0, 0, 0);
	for (uint64_t g = 2; g <= 4; g++)
		put(w, 2, 1000 + g, GT_EV_GO_CREATE, g, name, 0, 0);
	put(w, 2, 1010, GT_EV_GOMAXPROCS, 2, 0, 0, 0);
	put(w, 0, 2000, GT_EV_PROC_START, 0, 0, 0, 0);
	put(w, 1, 2000, GT_EV_PROC_START, 1, 0, 0, 0);
	/* g1 on P0: a task, two regions, blocks inside them; g2 runs with a region and a label;
	 * g3 enters a syscall on P1 and blocks there after the window starts. */
	put(w, 0, 2001, GT_EV_GO_START, 1, 1, 0, 0);
	put(w, 0, 2002, GT_EV_USER_TASK_CREATE, 7, 0, task, stk);
	put(w, 0, 2003, GT_EV_USER_REGION, 7, 0, region, stk);
	put(w, 0, 2004, GT_EV_USER_REGION, 7, 0, region, stk);
	put(w, 0, 2005, GT_EV_GO_BLOCK_NET, stk, 0, 0, 0);
	put(w, 0, 2006, GT_EV_GO_START_LABEL, 2, 1, label, 0);
	put(w, 0, 2007, GT_EV_USER_REGION, 0, 0, region, stk);
	put(w, 1, 2008, GT_EV_GO_START, 3, 1, 0, 0);
	put(w, 1, 2009, GT_EV_GO_SYSCALL, stk, 0, 0, 0);
	/* The window starts at 3000 (2000 ns after the first event). */
	put(w, 1, 3001, GT_EV_GO_SYSBLOCK, 0, 0, 0, 0);
	put(w, 1, 3002, GT_EV_PROC_STOP, 0, 0, 0, 0);
	put(w, 1, 3003, GT_EV_PROC_START, 1, 0, 0, 0);
	put(w, 0, 3004, GT_EV_USER_REGION, 0, 1, region, stk);
	put(w, 0, 3005, GT_EV_GO_UNBLOCK, 1, 2, stk, 0);
	put(w, 0, 3006, GT_EV_GO_PREEMPT, stk, 0, 0, 0);
	put(w, 0, 3007, GT_EV_GO_START, 1, 3, 0, 0);
	put(w, 0, 3008, GT_EV_USER_REGION, 7, 1, region, stk);
	put(w, 0, 3009, GT_EV_USER_REGION, 7, 1, region, stk);
	put(w, 0, 3010, GT_EV_USER_TASK_END, 7, stk, 0, 0);
	put(w, 0, 3011, GT_EV_GO_END, 0, 0, 0, 0);
	put(w, 2, 3012, GT_EV_GO_SYSEXIT, 3, 2, 0, 0);
	put(w, 0, 3013, GT_EV_GO_START, 3, 3, 0, 0);
	put(w, 0, 3014, GT_EV_GO_END, 0, 0, 0, 0);
	put(w, 0, 3015, GT_EV_PROC_STOP, 0, 0, 0, 0);
	put(w, 1, 3015, GT_EV_PROC_STOP, 0, 0, 0, 0);
	cr_assert_eq(gt_writer__flush(w), 0);
	gt_writer__free(w);

	cr_assert_eq(gt_cut__file(src, fd, 2000, UINT64_MAX, &st, NULL, err, sizeof(err)), 0, "%s",
		     err);
	close(fd);
	cr_expect_eq(st.goroutines, 4);
	cr_expect_eq(st.running, 2);
	cr_expect_eq(st.waiting, 1, "g1, blocked in the network: GoWaiting");
	cr_expect_eq(st.tasks, 1);
	cr_expect_eq(st.regions, 1, "g2's region");
	cr_expect_eq(st.left_out, 2, "g1's regions: it is blocked");
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s", why);
	cr_assert(goparse_views_ok(path, why, sizeof(why)), "%s", why);
	close(src);
}
