/* loss.c - nothing is lost silently: with a ring buffer too small for the load and a reader
 * that cannot keep up, the recorder reports lost records in its summary and in the trace, and
 * the file still parses. */
#include <stdlib.h>

#include "tests/integration/itest.h"

/* `lxtrace record --buffer-size` is in MiB, rounded up to a power of two pages: this is the
 * smallest ring, one page per CPU. */
#define LOSS_BUFFER_SIZE "0.001"

TestSuite(loss, .fini = itest_fini, .timeout = 180);

Test(loss, starved_reader_reports_lost_records)
{
	long long lost, logged;
	size_t logs;

	itest_start((const char *[]){ "--buffer-size", LOSS_BUFFER_SIZE, NULL });
	/* 2 s of 4 groups x 5 senders x 5 receivers plus thread churn. */
	it.wl = workload__start("stress", (const char *[]){ "2000", "4", "5", NULL });
	cr_assert(it.wl, "cannot start workload stress: %s", strerror(errno));
	/* A reader that cannot run while the load goes on, as when the machine is saturated.
	 * A one-page ring alone does not make loss certain: the reader runs at nice -10 and is
	 * woken at half full, so on a quiet machine it can keep up. */
	usleep(200000);
	cr_assert_eq(kill(recorder__pid(it.rec), SIGSTOP), 0, "SIGSTOP: %s", strerror(errno));
	usleep(700000);
	cr_assert_eq(kill(recorder__pid(it.rec), SIGCONT), 0, "SIGCONT: %s", strerror(errno));
	cr_assert_eq(workload__finish(it.wl, 60), 0, "workload stress did not finish");
	cr_assert_eq(workload__status(it.wl), 0, "workload stress exited with status %d",
		     workload__status(it.wl));
	itest_stop(SIGINT, 0);
	itest_load();
	lost = itest_summary_lost();
	logged = itest_lost_in_trace(&logs);
	cr_log_info("stress: %lld messages, %lld threads churned; %lld records lost, %lld in %zu UserLogs",
		    itest_stat("messages"), itest_stat("threads_churned"), lost, logged, logs);
	cr_assert_gt(lost, 0, "the summary reports no lost records:\n%s", recorder__stderr(it.rec));
	cr_assert_gt(logs, 0, "%lld records lost but no UserLog in the trace says so", lost);
	cr_assert_eq(logged, lost, "the trace's lxtrace.lost UserLogs count %lld records, the summary %lld",
		     logged, lost);
}
