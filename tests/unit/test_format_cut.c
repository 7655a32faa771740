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

#include "format/cut.h"
#include "tests/lib/goparse.h"
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

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per event in [from, to): goroutine, type, leaf function, UserLog message. Samples
 * carry no goroutine (a cut may name none when the goroutine is created later). Sorted. */
static char **keys(const struct gt_trace *t, uint64_t from, uint64_t to, size_t *n)
{
	const struct gt_event *ev = gt_trace__events(t);
	char **k = calloc(gt_trace__nevents(t) + 1, sizeof(*k));

	*n = 0;
	for (size_t i = 0; i < gt_trace__nevents(t); i++) {
		const struct gt_event *e = &ev[i];

		if (e->ts < from || e->ts >= to)
			continue;
		cr_assert(asprintf(&k[(*n)++], "g=%llu %s %s %.*s",
				   e->type == GT_EV_CPU_SAMPLE ? 0ull : (unsigned long long)e->g,
				   gt_specs[e->type].name,
				   e->stack && e->stack->n ? e->stack->frames[0].func : "-",
				   (int)e->msg_len, e->msg ? e->msg : "") > 0);
	}
	qsort(k, *n, sizeof(*k), by_str);
	return k;
}

static void free_keys(char **k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(k[i]);
	free(k);
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
	a = keys(in, from, to, &na);
	b = keys(out, from, to, &nb);
	cr_assert_eq(na, st.window_events, "%s", what);
	cr_assert_eq(na, nb, "%s: %zu events in the window, %zu in the cut", what, na, nb);
	for (size_t i = 0; i < na; i++)
		cr_assert_str_eq(a[i], b[i], "%s: event %zu", what, i);
	/* Nothing else happens inside the window; the init phase is before it. */
	cr_expect_eq(gt_trace__nevents(out), st.init_events + st.window_events + st.closing_events);
	cr_expect_lt(gt_trace__events(out)[0].ts, from + !st.init_events);
	free_keys(a, na);
	free_keys(b, nb);
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
	gt_cut__free(c);
	close(fd);
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s", why);
	cr_assert(goparse_views_ok(path, why, sizeof(why)), "%s", why);
	gt_state__free(start);
	gt_state__free(evicted);
	free(buf);
	close(src);
}
