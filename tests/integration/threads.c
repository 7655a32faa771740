/* threads.c - thread lifetimes: each thread the workload creates is one GoCreate and one
 * GoEnd, and the trace carries the threads' names. */
#include "tests/integration/itest.h"

#define THREADS 50

TestSuite(threads, .fini = itest_fini, .timeout = 120);

Test(threads, create_and_exit_are_gocreate_and_goend)
{
	const char *role;
	pid_t tid, main_tid;
	size_t children = 0;

	itest_record(NULL, "threads", (const char *[]){ "50", NULL }, 60);
	main_tid = itest_tid("main");
	for (size_t k = 0; workload__thread(it.wl, k, &role, &tid); k++) {
		const struct gt_event *create;
		size_t i = 0, creates, ends;

		if (tid == main_tid)
			continue;
		children++;
		creates = tq_count(it.trace, TQ_BIT(GT_EV_GO_CREATE), tid);
		ends = tq_count(it.trace, TQ_BIT(GT_EV_GO_END), tid);
		itest_expect(creates == 1 && ends == 1, tid, "%s (tid %d): %zu GoCreate, %zu GoEnd, expected 1 each",
			     role, tid, creates, ends);
		create = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_CREATE), tid);
		itest_expect(tq_create_stack(it.trace, create), tid, "%s: GoCreate without a new stack", role);
		itest_expect(tq_has_func(it.trace, tid, role), tid,
			     "no stack of %s (tid %d) carries its name", role, tid);
	}
	cr_assert_eq(children, THREADS, "workload reported %zu children, expected %d", children, THREADS);
}
