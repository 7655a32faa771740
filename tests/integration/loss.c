/* loss.c - nothing is lost silently: with a ring buffer too small for the load, the recorder
 * reports lost records in its summary and in the trace, and the file still parses. */
#include "tests/integration/itest.h"

/* `lxtrace record --buffer-size` is in MiB, rounded up to a power of two pages: this is the
 * smallest ring, one page per CPU. */
#define LOSS_BUFFER_SIZE "0.001"

TestSuite(loss, .fini = itest_fini, .timeout = 180);

Test(loss, tiny_buffer_reports_lost_records)
{
	long long lost;
	size_t logs;

	/* 2 s of 4 groups x 5 senders x 5 receivers plus thread churn. */
	itest_record((const char *[]){ "--buffer-size", LOSS_BUFFER_SIZE, NULL }, "stress",
		     (const char *[]){ "2000", "4", "5", NULL }, 60);
	lost = itest_summary_lost();
	logs = tq_count_logs(it.trace, "lost");
	cr_log_info("stress: %lld messages, %lld threads churned; %lld records lost, %zu UserLogs",
		    itest_stat("messages"), itest_stat("threads_churned"), lost, logs);
	cr_assert_gt(lost, 0, "the summary reports no lost records:\n%s", recorder__stderr(it.rec));
	cr_assert_gt(logs, 0, "%lld records lost but no UserLog in the trace says so", lost);
}
