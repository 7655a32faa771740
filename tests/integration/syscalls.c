/* syscalls.c - --syscalls=all records every syscall entry as GoSysCall naming it, and in the
 * go1.23 format each syscall with its real length (from entry to return); the default mode
 * records only the syscalls a thread blocked in; none writes no syscall event. */
#include "tests/integration/itest.h"
#include "tests/lib/go123text.h"

#define CALLS 10000
#define READS 200

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

/* syslen reads 4 MiB from /dev/zero READS times (readv), a syscall of some 100 us on the CPU that it
 * times itself around each call: the file (ticks are ns) has READS syscalls naming readv,
 * whose lengths add up to the thread's own measure, less what the calls cost outside the kernel's tracepoints
 * (at most 20%; the BPF programs run inside the measure). */
Test(syscalls, go123_syscalls_have_their_real_length)
{
	const char *path;
	struct goparse_result r;
	long long sum, measured;
	char *text = NULL;
	size_t n;
	pid_t tid;

	/* The command alone: every syscall of a busy machine (make test-load) made a file whose
	 * -d=1 text Go took minutes to print. Its report is in the recorder's output. */
	itest_start((const char *[]){ "--format=go1.23", "--syscalls=all", "--",
				      record__workload_path("syslen"), "200", NULL });
	itest_stop(0, 0);
	it.wl = workload__from_output(recorder__stderr(it.rec), 0);
	cr_assert(it.wl, "no report of syslen: %s", strerror(errno));
	path = recorder__path(it.rec);
	cr_assert_eq(goparse_123_text(path, 1, &r, &text), 0);
	cr_assert(r.ok, "go 1.23 -d=1: %s", r.error);
	tid = itest_tid("reader");
	measured = itest_stat("read_ns");
	n = go123text_syscalls(text, (uint32_t)tid, "syscall readv", &sum);
	free(text);
	cr_log_info("%zu syscalls naming readv, %lld ns in all; the thread measured %lld ns for %d",
		    n, sum, measured, READS);
	if (itest_summary_lost() == 0)
		itest_expect(n == READS, tid, "%zu syscalls naming readv, expected %d", n, READS);
	else
		itest_expect(n <= READS && n >= READS / 2, tid, "%zu syscalls naming readv", n);
	itest_expect(sum <= measured && sum * (long long)READS >= measured * (long long)n * 8 / 10,
		     tid, "the reads last %lld ns in the file, %lld ns as the thread measured",
		     sum, measured);
}

/* The go1.19 format has no length for a syscall that does not block: the same reads are READS
 * GoSysCall naming readv, as every entry was before the returns were recorded. */
Test(syscalls, go119_has_every_read_of_syslen)
{
	size_t named;
	pid_t tid;

	itest_record((const char *[]){ "--syscalls=all", NULL }, "syslen",
		     (const char *[]){ "200", NULL }, 60);
	tid = itest_tid("reader");
	named = syscalls_after_exec(tid, "syscall readv");
	if (itest_summary_lost() == 0)
		itest_expect(named == READS, tid, "%zu GoSysCall naming readv, expected %d", named,
			     READS);
}
