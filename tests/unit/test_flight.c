/* test_flight.c - the flight recorder from memory to file: a generated trace written through
 * the writer's sink into the window, its evicted batches read by the state tracker, and the
 * window written by a child process as a file that both Go parsers and both viewers take; the
 * budget held, the time limit, a window from the trace's start, one file at a time; file
 * names. A window of go1.23 generations: the latest within the span, the others counted,
 * written as a file Go 1.23 takes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "format/go123/writer.h"
#include "tests/lib/goparse.h"
#include "tests/unit/test_format_sim.h"
#include "user/flight/flight.h"

static char path[64];

static void cleanup(void)
{
	if (path[0] && !getenv("LXTRACE_TEST_KEEP"))
		unlink(path);
	path[0] = '\0';
}

TestSuite(flight, .fini = cleanup);

static struct flight *new_flight(size_t bytes, uint64_t span)
{
	struct flight *f = flight__new(&(struct flight_opts){
		.sz = sizeof(struct flight_opts), .span = span, .bytes = bytes, .nprocs = 4,
		.frequency = 1000000000 });

	cr_assert(f, "flight__new: %s", strerror(errno));
	return f;
}

/* A generated trace on 3 CPUs in small batches, through the flight recorder's sink. */
static void record(struct flight *f, unsigned steps, struct sim_result *res)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 12, .steps = steps, .seed = 5,
			      .batch_size = 300, .sink = flight__sink, .sink_ctx = f };

	cr_assert_eq(sim_write(-1, &o, res), 0);
}

/* Triggers now, writes the file to path. */
static void write_due(struct flight *f)
{
	char err[512];
	int fd, result;

	snprintf(path, sizeof(path), "/tmp/lxtrace-test-flight-%d.trace", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	flight__trigger(f, &(struct trigger_fired){ .ts = 0 });
	cr_assert(flight__due(f, 0));
	cr_assert_eq(flight__write_start(f, fd), 0);
	cr_assert(flight__writing(f));
	cr_assert_eq(flight__reap(f, true, &result, err, sizeof(err)), 1);
	cr_assert_eq(result, 0, "%s", err);
	cr_assert_not(flight__writing(f));
	close(fd);
}

/* Triggers now, writes the file; both Go parsers and Go 1.23's viewer must take it. */
static struct gt_trace *write_file(struct flight *f)
{
	struct gt_trace *t;
	char err[512], why[1200];

	write_due(f);
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s", why);
	cr_assert(goparse_views_ok(path, why, sizeof(why)), "%s", why);
	cr_assert_eq(gt_trace__load(path, &t, err, sizeof(err)), 0, "%s", err);
	return t;
}

/* A generated trace of steps through a flight recorder of budget bytes and limit span, then
 * its file: returned decoded, with the trace's counts and the flight's stats. */
static struct gt_trace *run(size_t bytes, uint64_t span, unsigned steps, struct sim_result *res,
			    struct flight_stats *st)
{
	struct flight *f = new_flight(bytes, span);
	struct gt_trace *t;

	record(f, steps, res);
	t = write_file(f);
	flight__stats(f, st);
	flight__free(f);
	return t;
}

static size_t count(const struct gt_trace *t, enum gt_type type)
{
	size_t n = 0;

	for (size_t i = 0; i < gt_trace__nevents(t); i++)
		n += gt_trace__events(t)[i].type == type;
	return n;
}

Test(flight, window_within_its_budget_is_a_trace_of_its_own)
{
	struct flight_stats st;
	struct sim_result res;
	struct gt_trace *t = run(64 * 1024, UINT64_MAX / 2, 20000, &res, &st);

	cr_expect_leq(st.window.peak_bytes, 64 * 1024);
	cr_expect_gt(st.window.evicted, 100, "the budget must have evicted batches");
	cr_expect_gt(st.evicted_events, 1000);
	/* The window begins after the tracker's last event; the goroutines running there are
	 * started one tick before it, by the init phase. */
	for (size_t i = 0; i < gt_trace__nevents(t); i++) {
		const struct gt_event *e = &gt_trace__events(t)[i];

		cr_expect(e->type != GT_EV_GO_START || e->ts + 1 >= st.last_from,
			  "a start at %llu, before the window (%llu)", (unsigned long long)e->ts,
			  (unsigned long long)st.last_from);
	}
	cr_expect_lt(count(t, GT_EV_GO_START), res.counts[GT_EV_GO_START]);
	cr_expect_eq(st.plan.files, 1);
	gt_trace__free(t);
}

Test(flight, window_from_the_start_holds_the_whole_trace)
{
	struct flight_stats st;
	struct sim_result res;
	struct gt_trace *t = run(4 * 1024 * 1024, UINT64_MAX / 2, 3000, &res, &st);

	cr_expect_eq(st.window.evicted, 0);
	cr_expect_eq(count(t, GT_EV_GO_START), res.counts[GT_EV_GO_START]);
	cr_expect_eq(count(t, GT_EV_GO_UNBLOCK), res.counts[GT_EV_GO_UNBLOCK]);
	gt_trace__free(t);
}

Test(flight, time_limit_keeps_the_last_ticks)
{
	/* The generated trace advances ~750 ticks a step: 20000 steps, ~15 M ticks; a batch of
	 * 300 bytes spans ~30000. */
	struct flight_stats st;
	struct sim_result res;
	struct gt_trace *t = run(4 * 1024 * 1024, 2000000, 20000, &res, &st);

	cr_expect_gt(st.window.evicted, 0);
	/* The limit, give or take the batches that straddle it. */
	cr_expect_lt(st.last_to - st.last_from, 2100000, "the file covers %llu ticks",
		     (unsigned long long)(st.last_to - st.last_from));
	cr_expect_gt(st.last_to - st.last_from, 1900000, "the file covers %llu ticks",
		     (unsigned long long)(st.last_to - st.last_from));
	gt_trace__free(t);
}

/* What the tracker keeps follows what the writer remembers: many distinct stacks over a small
 * table budget make the writer forget; the tracker forgets them too once the window has no
 * batch that may name them, and the file still defines every string and stack it uses. */
Test(flight, tracker_forgets_what_the_writer_forgot)
{
	struct flight_stats kept, forgot;
	struct sim_result res;
	struct gt_trace *t;

	for (int i = 0; i < 2; i++) {
		struct flight *f = new_flight(64 * 1024, UINT64_MAX / 2);
		struct sim_opts o = { .ncpu = 3, .nthreads = 12, .steps = 40000, .seed = 9,
				      .batch_size = 300, .stacks = 20000, .table_budget = 16384,
				      .sink = flight__sink, .sink_ctx = f,
				      .forgot = i ? flight__forgot : NULL };

		cr_assert_eq(sim_write(-1, &o, &res), 0);
		cr_assert_gt(res.ws.stacks_forgotten, 1000, "the writer must have forgotten stacks");
		if (i) {
			t = write_file(f);
			gt_trace__free(t);
		}
		flight__stats(f, i ? &forgot : &kept);
		flight__free(f);
	}
	cr_expect_lt(forgot.dict_bytes * 4, kept.dict_bytes, "kept %llu bytes, forgetting %llu",
		     (unsigned long long)kept.dict_bytes, (unsigned long long)forgot.dict_bytes);
}

/* One file at a time; freeing the flight waits for the one being written. */
Test(flight, one_file_at_a_time)
{
	struct flight *f = new_flight(64 * 1024, UINT64_MAX / 2);
	struct sim_result res;
	int fd;

	record(f, 5000, &res);
	snprintf(path, sizeof(path), "/tmp/lxtrace-test-flight-%d.trace", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	flight__trigger(f, &(struct trigger_fired){ .ts = 0 });
	cr_assert_eq(flight__write_start(f, fd), 0);
	cr_assert_eq(flight__write_start(f, fd), -EBUSY);
	flight__free(f);
	cr_assert_gt(lseek(fd, 0, SEEK_END), 0, "the file was written before the flight was freed");
	close(fd);
}

Test(flight, file_names_count_before_the_extension)
{
	static const struct {
		const char *base;
		unsigned n;
		const char *name;
	} cases[] = {
		{ "trace.out", 1, "trace-001.out" },
		{ "/tmp/run.d/trace", 2, "/tmp/run.d/trace-002" },
		{ "x.tar.gz", 3, "x.tar-003.gz" },
		{ ".hidden", 4, ".hidden-004" },
		{ "dir/.hidden", 5, "dir/.hidden-005" },
		{ "trace.out", 1234, "trace-1234.out" },
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		flight__file_name(cases[i].base, cases[i].n, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].name);
	}
}

Test(flight, refuses_a_budget_that_is_not_pages)
{
	errno = 0;
	cr_expect_null(flight__new(&(struct flight_opts){ .sz = sizeof(struct flight_opts),
							  .span = 1, .bytes = 1000, .nprocs = 1,
							  .frequency = 1 }));
	cr_expect_eq(errno, EINVAL);
}

/* Lines of text holding s. */
static unsigned lines_with(const char *text, const char *s)
{
	unsigned n = 0;

	for (const char *l = text; (l = strstr(l, s)); l += strlen(s))
		n++;
	return n;
}

/* A thread running and leaving CPU 0 every 1000 ticks for 200,000 ticks, in generations of
 * 10,000 through a window of 30,000: the file holds the last 4 or so, each ending at most
 * 30,000 before the last; the 16 or more before them are evicted, with their events, counted. */
Test(flight, generations_window_keeps_the_latest)
{
	struct flight *f = flight__new(&(struct flight_opts){
		.sz = sizeof(struct flight_opts), .span = 30000, .bytes = 1 << 20, .nprocs = 1,
		.frequency = 1000000000, .generations = true });
	struct go123_writer *w;
	struct go123_writer_stats ws;
	struct flight_stats st;
	struct goparse_result r;
	char *text = NULL;
	uint64_t ts = 1000;
	unsigned syncs;

	cr_assert(f, "flight__new: %s", strerror(errno));
	w = go123_writer__new(&(struct go123_writer_opts){ .sz = sizeof(struct go123_writer_opts),
			    .fd = -1, .nprocs = 1, .frequency = 1000000000, .gen_ticks = 10000,
			    .sink = flight__generation, .sink_ctx = f });
	cr_assert(w, "go123_writer__new: %s", strerror(errno));
	cr_assert_eq(go123_writer__thread_found(w, ts, 100, GO123_G_RUNNABLE, -1, NULL, NULL), 0);
	while (ts < 200000) {
		cr_assert_eq(go123_writer__run(w, ts += 500, 0, 100), 0);
		cr_assert_eq(go123_writer__leave(w, ts += 500, 100, GO123_PREEMPTED, NULL, NULL), 0);
	}
	cr_assert_eq(go123_writer__flush(w), 0);
	go123_writer__stats(w, &ws);
	write_due(f);
	flight__stats(f, &st);
	cr_assert_eq(goparse_123_text(path, 1, &r, &text), 0);
	cr_assert(r.ok, "go 1.23 -d=1: %s", r.error);
	syncs = lines_with(text, "Sync");
	free(text);
	cr_expect(syncs >= 3 && syncs <= 5, "%u generations in the file", syncs);
	cr_expect_eq(st.window.evicted + syncs, ws.generations, "%llu evicted + %u held of %llu",
		     (unsigned long long)st.window.evicted, syncs,
		     (unsigned long long)ws.generations);
	cr_expect_geq(st.window.evicted, 16);
	/* Each evicted generation had its 20 events, statuses aside. */
	cr_expect_geq(st.evicted_events, 20 * st.window.evicted);
	cr_expect_leq(st.last_to - st.last_from, 30000 + 10000 + 1);
	cr_expect_geq(st.last_to - st.last_from, 30000);
	cr_expect_eq(st.window.oversize, 0);
	go123_writer__free(w);
	flight__free(f);
}
