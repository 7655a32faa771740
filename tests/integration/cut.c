/* cut.c - `lxtrace cut` on a recording: the window is a trace both Go parsers and both viewers
 * open, holding exactly the recording's events of the window (for each goroutine, the same
 * number of each event type, with the same leaf frames and messages), with the workload's
 * threads created in its init phase. */
#include <sys/stat.h>

#include "tests/integration/itest.h"

TestSuite(cut, .fini = itest_fini, .timeout = 300);

Test(cut, a_window_of_a_recording)
{
	const char *argv[] = { NULL, "cut", NULL, "--from", "0.8", "--to", "1800ms", "-o", NULL,
			       NULL };
	char out[64], why[4096], *sout = NULL, *serr = NULL, **a, **b;
	struct gt_trace *cut = NULL;
	uint64_t first, from, to;
	size_t na, nb, created = 0;
	struct stat src_st, cut_st;
	pid_t pid;
	int rc;

	itest_record(NULL, "stress", (const char *[]){ "2500", "2", "4", NULL }, 60);
	pid = workload__pid(it.wl);
	rc = record__tmpfile(out, sizeof(out), ".trace");
	cr_assert_eq(rc, 0, "temp file: %s", strerror(-rc));
	argv[0] = record__build_path("lxtrace");	/* static storage: after the workload's */
	argv[2] = recorder__path(it.rec);
	argv[8] = out;
	rc = run_capture(argv, 120, &sout, &serr);
	cr_assert_eq(rc, 0, "lxtrace cut: exit %d: %s", rc, serr ? serr : "");
	cr_log_info("%s", sout);
	cr_assert(goparse_both_ok(out, why, sizeof(why)), "%s", why);
	cr_assert(goparse_views_ok(out, why, sizeof(why)), "%s", why);
	cr_assert_eq(gt_trace__load(out, &cut, why, sizeof(why)), 0, "%s", why);

	/* lxtrace's ticks are nanoseconds: the window in ticks, from the recording's start. */
	first = gt_trace__events(it.trace)[0].ts;
	from = first + 800000000ull;
	to = first + 1800000000ull;
	a = tq_window_lines(it.trace, from, to, &na);
	b = tq_window_lines(cut, from, to, &nb);
	cr_assert_gt(na, 1000, "only %zu events in the window", na);
	cr_assert_eq(na, nb, "%zu events in the recording's window, %zu in the cut", na, nb);
	for (size_t i = 0; i < na; i++)
		cr_assert_str_eq(a[i], b[i], "event %zu of the window", i);
	/* The workload, alive at 0.8 s, is created before the window (from its process's
	 * threads, goid = tid). */
	for (size_t i = 0; i < gt_trace__nevents(cut); i++) {
		const struct gt_event *e = &gt_trace__events(cut)[i];

		if (e->ts < from && e->type == GT_EV_GO_CREATE && (uint32_t)e->args[0] == (uint32_t)pid)
			created++;
	}
	cr_expect_eq(created, 1, "the workload's main thread is created %zu times before the "
		     "window", created);
	cr_assert_eq(stat(recorder__path(it.rec), &src_st), 0);
	cr_assert_eq(stat(out, &cut_st), 0);
	cr_expect_lt(cut_st.st_size, src_st.st_size, "the cut is not smaller than the recording");
	tq_free_lines(a, na);
	tq_free_lines(b, nb);
	free(sout);
	free(serr);
	gt_trace__free(cut);
	unlink(out);
}
