/* syscalls.c - --syscalls=all records every syscall entry as GoSysCall naming it; the
 * default mode records only the syscalls a thread blocked in; none writes no syscall event. */
#include "tests/integration/itest.h"

#define CALLS 10000

TestSuite(syscalls, .fini = itest_fini, .timeout = 120);

/* GoSysCall events of tid naming func after its exec (from the GoCreate of the new image, made
 * in `syscall execve`): before it, the thread was the test harness's forked child, which makes
 * syscalls of its own (getppid among them). */
static size_t syscalls_after_exec(pid_t tid, const char *func)
{
	const struct gt_event *e;
	size_t i = 0, n = 0;

	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_CREATE), tid)) && !tq_stack_has(e->stack, "syscall execve"))
		i++;
	itest_expect(e, tid, "no goroutine of thread %d created by its exec", tid);
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_SYSCALL), tid))) {
		n += tq_stack_has(e->stack, func);
		i++;
	}
	return n;
}

Test(syscalls, all_records_every_getppid)
{
	long long lost;
	size_t named;
	pid_t tid;

	itest_record((const char *[]){ "--syscalls=all", NULL }, "sysloop",
		     (const char *[]){ "10000", NULL }, 60);
	tid = itest_tid("looper");
	named = syscalls_after_exec(tid, "syscall getppid");
	lost = itest_summary_lost();
	cr_log_info("%zu GoSysCall naming `syscall getppid` for %d calls; %lld records lost",
		    named, CALLS, lost);
	if (lost == 0)
		itest_expect(named == CALLS, tid, "%zu GoSysCall naming getppid, expected exactly %d",
			     named, CALLS);
	else
		itest_expect(named >= CALLS, tid, "%zu GoSysCall naming getppid, expected >= %d",
			     named, CALLS);
}

Test(syscalls, default_records_only_blocking_syscalls)
{
	pid_t tid;

	itest_record(NULL, "sysloop", (const char *[]){ "10000", NULL }, 60);
	tid = itest_tid("looper");
	itest_expect(syscalls_after_exec(tid, "syscall getppid") == 0, tid,
		     "getppid never blocks, yet the default mode recorded it");
}

/* Without syscall events the reader's waits for its pipe are what they are in any mode, waits
 * for a file descriptor (an uninterruptible sleep in a syscall would be a plain GoBlock). */
Test(syscalls, none_writes_no_syscall_events)
{
	size_t n;
	pid_t tid;

	itest_record((const char *[]){ "--syscalls=none", NULL }, "slowread",
		     (const char *[]){ "2", "50", NULL }, 60);
	tid = itest_tid("reader");
	itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_SYSCALL) | TQ_BIT(GT_EV_GO_SYSBLOCK) |
					TQ_BIT(GT_EV_GO_SYSEXIT), tid) == 0,
		     tid, "--syscalls=none, yet the reader has syscall events");
	n = itest_timed_blocks(tid, GT_EV_GO_BLOCK_SELECT, NULL, GT_EV_GO_UNBLOCK, 40, 500);
	itest_expect(n == 2, tid, "%zu GoBlockSelect for the reader's 2 blocking reads", n);
}
