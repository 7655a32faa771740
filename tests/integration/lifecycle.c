/* lifecycle.c - every way a recording ends leaves a file both Go parsers accept and no BPF
 * program behind: SIGTERM, the -d duration, and even SIGKILL (what was written by then is a
 * prefix ending on a batch boundary, which the writer keeps valid). */
#include <sys/stat.h>

#include "tests/integration/itest.h"

TestSuite(lifecycle, .fini = itest_fini, .timeout = 120);

Test(lifecycle, sigterm_stops_cleanly)
{
	itest_start(NULL);
	itest_run("sleeper", (const char *[]){ "5", NULL }, 30);
	itest_stop(SIGTERM, 0);
	cr_assert(strstr(recorder__stderr(it.rec), "records lost:"), "no summary after SIGTERM:\n%s",
		  recorder__stderr(it.rec));
	itest_load();
}

Test(lifecycle, duration_ends_the_recording)
{
	const struct gt_event *ev;
	size_t n;
	double span;

	itest_start((const char *[]){ "-d", "1", NULL });
	itest_run("sleeper", (const char *[]){ "5", NULL }, 30);
	itest_stop(0, 0);
	itest_load();
	ev = gt_trace__events(it.trace);
	n = gt_trace__nevents(it.trace);
	cr_assert_gt(n, 1, "empty trace");
	span = tq_ns(it.trace, ev[0].ts, ev[n - 1].ts) / 1e9;
	cr_assert(span >= 0.9 && span <= 10, "a 1 s recording spans %.3f s", span);
}

Test(lifecycle, sigkill_leaves_a_parsable_prefix)
{
	struct stat st;

	itest_start(NULL);
	/* Enough load to fill many batches before the kill. */
	itest_run("stress", (const char *[]){ "1500", "2", "4", NULL }, 30);
	itest_stop(SIGKILL, 128 + SIGKILL);
	cr_assert_eq(stat(recorder__path(it.rec), &st), 0, "no trace file");
	cr_assert_gt(st.st_size, GT_HEADER_LEN, "nothing written but the header after 1.5 s of load");
	itest_load();
}
