/* keepup.c - a recorder that falls behind the kernel sheds work it can count instead of
 * falling further behind (user/capture/shed.h): stacks not symbolized are marked in the file
 * and counted in the summary, every record lost is in the file's lxtrace.lost logs, and the
 * file parses. The recorder is made to fall behind by stopping it (SIGSTOP), as a machine
 * whose every CPU is taken does, so the tests hold whatever the load; they assert no time. */
#include <stdlib.h>

#include "tests/integration/itest.h"

#define SHED_FRAME "[not symbolized: the recorder was behind]"

TestSuite(keepup, .fini = itest_fini, .timeout = 240);

/* New stacks shed, as the summary counts them ("shed: ...; N new stacks not symbolized");
 * 0 when none. */
static long long summary_shed(void)
{
	const char *p = strstr(recorder__stderr(it.rec), "\n  shed:");
	long long v;

	p = p ? strstr(p, "; ") : NULL;
	return p && sscanf(p + 2, "%lld new stacks", &v) == 1 ? v : 0;
}

/* Events of it.trace whose stack is a shed one: the mark as leaf. */
static size_t shed_in_trace(void)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t n = gt_trace__nevents(it.trace), shed = 0;

	for (size_t i = 0; i < n; i++) {
		const struct gt_stack *s = ev[i].stack;

		if (s && s->n && s->frames[0].func && !strcmp(s->frames[0].func, SHED_FRAME)) {
			cr_expect_geq(s->n, 2, "a shed stack keeps its thread's identity");
			shed++;
		}
	}
	return shed;
}

/* Stopped for 3 s while new processes come and go (each with stacks never met before), the
 * recorder reads records 3 s old when it runs again: it sheds their stacks, marked in the file
 * and counted in the summary, and catches up. */
Test(keepup, a_recorder_behind_sheds_stacks_and_says_so)
{
	long long shed;
	size_t in_trace;

	itest_start((const char *[]){ "-F", "999", NULL });
	/* 150 children of 20 ms each, one after another: ~3 s of new processes. */
	it.wl = workload__start("vforker", (const char *[]){ "150", NULL });
	cr_assert(it.wl, "cannot start workload vforker: %s", strerror(errno));
	usleep(300000);
	cr_assert_eq(kill(recorder__pid(it.rec), SIGSTOP), 0, "SIGSTOP: %s", strerror(errno));
	usleep(3000000);
	cr_assert_eq(kill(recorder__pid(it.rec), SIGCONT), 0, "SIGCONT: %s", strerror(errno));
	cr_assert_eq(workload__finish(it.wl, 120), 0, "workload vforker did not finish");
	itest_stop(SIGINT, 0);
	itest_load();
	shed = summary_shed();
	in_trace = shed_in_trace();
	cr_log_info("%lld stacks shed, %zu events with a shed stack", shed, in_trace);
	cr_expect_gt(shed, 0, "the summary counts no stack shed:\n%s", recorder__stderr(it.rec));
	cr_expect_gt(in_trace, 0, "no event of the file has a stack marked shed");
	cr_expect(strstr(recorder__stderr(it.rec), "the most behind:"),
		  "the summary does not say why:\n%s", recorder__stderr(it.rec));
	itest_expect_losses_counted();
}

/* At -F 100000 on every CPU the recorder cannot keep up (the samples' walks take the CPUs):
 * whatever it sheds or loses is counted, in the summary and the file alike, and the file
 * parses. */
Test(keepup, sampling_beyond_the_recorder_is_counted_and_the_file_parses)
{
	long long shed;
	size_t in_trace;

	itest_start((const char *[]){ "-F", "100000", NULL });
	it.wl = workload__start("stress", (const char *[]){ "1500", "2", "4", NULL });
	cr_assert(it.wl, "cannot start workload stress: %s", strerror(errno));
	usleep(300000);
	/* Behind for certain, whatever this machine's speed. */
	cr_assert_eq(kill(recorder__pid(it.rec), SIGSTOP), 0, "SIGSTOP: %s", strerror(errno));
	usleep(3000000);
	cr_assert_eq(kill(recorder__pid(it.rec), SIGCONT), 0, "SIGCONT: %s", strerror(errno));
	cr_assert_eq(workload__finish(it.wl, 120), 0, "workload stress did not finish");
	itest_stop(SIGINT, 0);
	itest_load();
	shed = summary_shed();
	in_trace = shed_in_trace();
	cr_log_info("%lld stacks shed, %zu events with a shed stack; %lld records lost", shed,
		    in_trace, itest_summary_lost());
	cr_expect_gt(shed, 0, "the summary counts no stack shed:\n%s", recorder__stderr(it.rec));
	cr_expect_gt(in_trace, 0, "no event of the file has a stack marked shed");
	itest_expect_losses_counted();
}
