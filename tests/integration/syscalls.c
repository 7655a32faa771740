/* syscalls.c - --syscalls=all records every syscall entry as GoSysCall naming it; the
 * default mode records only the syscalls a thread blocked in. */
#include "tests/integration/itest.h"

#define CALLS 10000

TestSuite(syscalls, .fini = itest_fini, .timeout = 120);

Test(syscalls, all_records_every_getppid)
{
	long long lost;
	size_t named;
	pid_t tid;

	itest_record((const char *[]){ "--syscalls=all", NULL }, "sysloop",
		     (const char *[]){ "10000", NULL }, 60);
	tid = itest_tid("looper");
	named = tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SYSCALL), tid, "syscall getppid");
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
	itest_expect(tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SYSCALL), tid, "syscall getppid") == 0,
		     tid, "getppid never blocks, yet the default mode recorded it");
}
