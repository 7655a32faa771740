/* loss.c - nothing is lost silently: with a ring buffer too small for the load, the recorder
 * reports lost records in its summary and in the trace, and the file still parses. */
#include <stdlib.h>

#include "tests/integration/itest.h"

/* `lxtrace record --buffer-size` is in MiB, rounded up to a power of two pages: this is the
 * smallest ring, one page per CPU. */
#define LOSS_BUFFER_SIZE "0.001"

/* Sum of N over the trace's "N records lost on CPU C" UserLogs (key lxtrace.lost). */
static long long lost_in_trace(size_t *nlogs)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t n = gt_trace__nevents(it.trace);
	long long sum = 0;

	*nlogs = 0;
	for (size_t i = 0; i < n; i++) {
		const char *key;
		char msg[128];

		if (ev[i].type != GT_EV_USER_LOG || ev[i].nargs < 2 || !ev[i].msg)
			continue;
		key = gt_trace__string(it.trace, ev[i].args[1]);
		if (!key || strcmp(key, "lxtrace.lost"))
			continue;
		snprintf(msg, sizeof(msg), "%.*s", (int)ev[i].msg_len, ev[i].msg);
		sum += strtoll(msg, NULL, 10);
		++*nlogs;
	}
	return sum;
}

TestSuite(loss, .fini = itest_fini, .timeout = 180);

Test(loss, tiny_buffer_reports_lost_records)
{
	long long lost, logged;
	size_t logs;

	/* 2 s of 4 groups x 5 senders x 5 receivers plus thread churn. */
	itest_record((const char *[]){ "--buffer-size", LOSS_BUFFER_SIZE, NULL }, "stress",
		     (const char *[]){ "2000", "4", "5", NULL }, 60);
	lost = itest_summary_lost();
	logged = lost_in_trace(&logs);
	cr_log_info("stress: %lld messages, %lld threads churned; %lld records lost, %lld in %zu UserLogs",
		    itest_stat("messages"), itest_stat("threads_churned"), lost, logged, logs);
	cr_assert_gt(lost, 0, "the summary reports no lost records:\n%s", recorder__stderr(it.rec));
	cr_assert_gt(logs, 0, "%lld records lost but no UserLog in the trace says so", lost);
	cr_assert_eq(logged, lost, "the trace's lxtrace.lost UserLogs count %lld records, the summary %lld",
		     logged, lost);
}
