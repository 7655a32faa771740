/* blocking.c - recorded workloads that block in known ways must show the matching Go events:
 * pipe reads, poll and socket waits (waits for a file descriptor) as GoBlockSelect ended by
 * GoUnblock, sleeps as GoSleep, mutex waits as GoBlockSync, yields as GoSched, each with the
 * synthetic `syscall NAME` frame. Only an uninterruptible sleep in a syscall is a blocking
 * syscall (docs/model.md). */
#include "tests/integration/itest.h"

#define PINGPONG_ROUNDS 2000
#define SLEEPS 20

TestSuite(blocking, .fini = itest_fini, .timeout = 120);

/* Each side blocks in read() whenever the other has not answered yet. How often that is
 * depends on scheduling (about half the rounds here), so the ground truth is the side's own
 * count of voluntary switches in the loop: every one is a read that blocked. */
static void check_pingpong_side(const char *role)
{
	pid_t tid = itest_tid(role);
	char key[32];
	long long vcsw, n = PINGPONG_ROUNDS;
	size_t starts, wakeups, blocks, named;

	snprintf(key, sizeof(key), "vcsw-%s", role);
	vcsw = itest_stat(key);
	starts = tq_count(it.trace, TQ_BIT(GT_EV_GO_START), tid);
	wakeups = tq_count(it.trace, TQ_WAKEUPS, tid);
	blocks = tq_count(it.trace, TQ_BIT(GT_EV_GO_BLOCK_SELECT), tid);
	named = tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_BLOCK_SELECT), tid, "syscall read");

	cr_log_info("%s (tid %d): %lld rounds, %lld blocked; trace: %zu GoStart, %zu wakeups, "
		    "%zu GoBlockSelect, %zu naming `syscall read`",
		    role, tid, n, vcsw, starts, wakeups, blocks, named);
	cr_assert_gt(vcsw, 0, "%s never blocked: the workload did not ping-pong", role);
	/* Every voluntary switch in the loop is one blocking read; outside it the thread makes
	 * no blocking call, bar a stray page fault. */
	itest_expect((long long)blocks >= vcsw && (long long)blocks <= vcsw + 2, tid,
		     "%s: %zu GoBlockSelect, expected %lld..%lld (one per blocking read)",
		     role, blocks, vcsw, vcsw + 2);
	itest_expect(named >= blocks, tid, "%s: only %zu of %zu blocking reads name `syscall read`",
		     role, named, blocks);
	itest_expect(tq_count_process(it.trace, TQ_BIT(GT_EV_GO_BLOCK_SELECT), tid, itest_ident("pingpong")) ==
		     blocks, tid, "%s: not every GoBlockSelect stack ends in the identity frame '%s'",
		     role, itest_ident("pingpong"));
	itest_expect(wakeups >= blocks && (long long)wakeups <= n + 2, tid,
		     "%s: %zu wakeups for %zu blocks (at most %lld)", role, wakeups, blocks, n + 2);
	itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_UNBLOCK), tid) >= blocks, tid,
		     "%s: a pipe read waits for the other side, which must unblock it", role);
	/* Only the entry of a syscall that blocked uninterruptibly is written (-s blocking): a
	 * stray mmap may wait so for the mmap lock, a read never. */
	itest_expect(tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SYSCALL), tid, "syscall read") == 0,
		     tid, "%s: a pipe read waiting for data is not a blocking syscall", role);
	itest_expect(starts >= wakeups, tid, "%s: %zu GoStart for %zu wakeups", role, starts, wakeups);
}

static void pingpong(void)
{
	itest_record(NULL, "pingpong", (const char *[]){ "2000", NULL }, 60);
	check_pingpong_side("ping");
	check_pingpong_side("pong");
}

Test(blocking, pingpong_pipe_reads_are_goblockselect)
{
	pingpong();
}

/* The same with what a 5.10 kernel has: the compat programs (task fields read by probes, the
 * user registers found at the top of the kernel stack), switch states read from the task,
 * exits from signal->live (docs/record.md, "Kernels"). */
Test(blocking, pingpong_on_what_kernel_5_10_has)
{
	itest_mask("modern,switch_state,exit_group,vma_iter,mmap_tp,sleepable_uprobe");
	pingpong();
	itest_expect_without("typed programs");
	itest_expect_without("prev_state");
}

Test(blocking, sleeper_sleeps_are_gosleep_10ms_each)
{
	const struct gt_event *e;
	size_t i = 0, n = 0;
	pid_t tid;

	itest_record(NULL, "sleeper", (const char *[]){ "20", NULL }, 60);
	tid = itest_tid("sleeper");
	itest_expect(tq_count_created(it.trace, tid, itest_program("sleeper")) == 1, tid,
		     "no goroutine of the exec named '%s'", itest_program("sleeper"));
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_SLEEP), tid))) {
		const struct gt_event *w;
		const char *leaf = tq_leaf(e->stack), *outer;
		size_t j = i + 1;
		double ms;

		n++;
		itest_expect(leaf && strstr(leaf, "nanosleep"), tid,
			     "GoSleep #%zu: leaf frame '%s', expected `syscall (clock_)nanosleep`",
			     n, leaf ? leaf : "(no stack)");
		outer = tq_process(e->stack);
		itest_expect(outer && !strcmp(outer, itest_ident("sleeper")), tid,
			     "GoSleep #%zu: outermost frame '%s', expected '%s'", n,
			     outer ? outer : "(no stack)", itest_ident("sleeper"));
		w = tq_next(it.trace, &j, TQ_WAKEUPS, tid);
		itest_expect(w, tid, "GoSleep #%zu never followed by a wakeup", n);
		ms = tq_ns(it.trace, e->ts, w->ts) / 1e6;
		itest_expect(ms >= 9 && ms <= 60, tid, "GoSleep #%zu woke after %.3f ms, expected 9..60",
			     n, ms);
		i++;
	}
	itest_expect(n == SLEEPS, tid, "%zu GoSleep events, expected %d", n, SLEEPS);
}

Test(blocking, futex_waits_are_goblocksync)
{
	const char *role;
	pid_t tid;
	size_t total = 0;

	itest_record(NULL, "futex_contend", (const char *[]){ "4", "500", NULL }, 60);
	for (size_t k = 0; workload__thread(it.wl, k, &role, &tid); k++) {
		char key[48];
		long long vcsw;
		size_t sync, named;

		snprintf(key, sizeof(key), "vcsw-%s", role);
		vcsw = itest_stat(key);
		sync = tq_count(it.trace, TQ_BIT(GT_EV_GO_BLOCK_SYNC), tid);
		named = tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_BLOCK_SYNC), tid, "syscall futex");
		cr_log_info("%s (tid %d): %lld futex waits in the loop; trace: %zu GoBlockSync, "
			    "%zu naming `syscall futex`", role, tid, vcsw, sync, named);
		/* The loop's waits, plus the start barrier's if it blocked. Not at least one each:
		 * the last thread at the barrier does not wait there, and under load a thread can
		 * run its whole loop while the others wait for a CPU (seen: vcsw 0, no
		 * GoBlockSync); the kernel's count is the truth, and the total below keeps the test
		 * from passing with no contention at all. */
		itest_expect((long long)sync >= vcsw, tid,
			     "%s: %zu GoBlockSync, expected >= %lld", role, sync, vcsw);
		itest_expect(named == sync, tid, "%s: %zu of %zu GoBlockSync name `syscall futex`",
			     role, named, sync);
		total += sync;
	}
	cr_assert_geq(total, 4, "no contention recorded");
}

Test(blocking, slowread_blocks_50ms_in_read)
{
	size_t n;
	pid_t tid;

	itest_record(NULL, "slowread", (const char *[]){ "3", "50", NULL }, 60);
	tid = itest_tid("reader");
	n = itest_timed_blocks(tid, GT_EV_GO_BLOCK_SELECT, "syscall read", GT_EV_GO_UNBLOCK, 40, 500);
	itest_expect(n == 3, tid, "%zu GoBlockSelect events for the reader, expected 3", n);
}

Test(blocking, netwait_poll_and_recv_are_goblockselect)
{
	const struct gt_event *e;
	size_t i = 0, polls = 0, recvs = 0, other = 0;
	pid_t tid;

	itest_record(NULL, "netwait", (const char *[]){ "5", NULL }, 60);
	tid = itest_tid("reader");
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_BLOCK_SELECT), tid))) {
		const char *leaf = tq_leaf(e->stack);
		const struct gt_event *w;
		size_t j = i + 1;

		if (leaf && strstr(leaf, "poll"))
			polls++;
		else if (leaf && strstr(leaf, "recv"))
			recvs++;
		else
			other++;
		w = tq_next(it.trace, &j, TQ_WAKEUPS, tid);
		itest_expect(w && w->type == GT_EV_GO_UNBLOCK, tid,
			     "GoBlockSelect (%s) not ended by GoUnblock", leaf ? leaf : "no stack");
		i++;
	}
	cr_log_info("reader (tid %d): GoBlockSelect in poll %zu, in recv %zu, elsewhere %zu", tid,
		    polls, recvs, other);
	/* Each wait spans the writer's 20 ms sleep, so each blocks exactly once. */
	itest_expect(polls == 5 && recvs == 5 && other == 0, tid,
		     "GoBlockSelect: %zu in poll, %zu in recv, %zu elsewhere; expected 5, 5, 0",
		     polls, recvs, other);
	itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_SYSBLOCK), tid) == 0, tid,
		     "socket waits must not be shown as blocking syscalls");
}

Test(blocking, yielder_yields_are_gosched)
{
	static const char *const roles[] = { "y0", "y1" };
	size_t total = 0;

	/* Both threads on CPU 1, so each yield hands the CPU to the other. */
	itest_record(NULL, "yielder", (const char *[]){ "1000", "1", NULL }, 60);
	for (size_t k = 0; k < 2; k++) {
		pid_t tid = itest_tid(roles[k]);
		char key[32];
		long long switches;
		size_t sched, named;

		snprintf(key, sizeof(key), "nivcsw-%s", roles[k]);
		switches = itest_stat(key);
		sched = tq_count(it.trace, TQ_BIT(GT_EV_GO_SCHED), tid);
		named = tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SCHED), tid, "syscall sched_yield");
		cr_log_info("%s (tid %d): %lld switches in 1000 yields; trace: %zu GoSched, %zu naming "
			    "`syscall sched_yield`", roles[k], tid, switches, sched, named);
		/* Every yield that switched, bar a timer-tick preemption (GoPreempt) now and then.
		 * The upper bound is the kernel's count, not the yields: one sched_yield() can
		 * switch twice. schedule() loops while need_resched(), so a wakeup that asks for
		 * the CPU just as the thread is switched back in (seen under load: a kworker woken
		 * from the yielder's CPU) switches it out again inside the same call, with
		 * preempt false, prev_state running and orig_ax sched_yield: a GoSched with no
		 * GoSysCall before it in --syscalls=all, and one more nivcsw. */
		itest_expect((long long)sched >= switches * 9 / 10 && (long long)sched <= switches, tid,
			     "%s: %zu GoSched for %lld switches in 1000 yields", roles[k], sched, switches);
		itest_expect(named == sched, tid, "%s: %zu of %zu GoSched name `syscall sched_yield`",
			     roles[k], named, sched);
		total += sched;
	}
	cr_assert_gt(total, 0, "no yield switched");
}

/* The GoSysBlock events of tid in the syscall `name` (the GoSysCall before each names it), each
 * expected to last lo_ms..hi_ms. The thread may block in other syscalls too: its execve when
 * reading the program waits for the disk. */
static size_t syscall_blocks(pid_t tid, const char *name, double lo_ms, double hi_ms)
{
	const struct gt_event *e, *w;
	bool named = false;
	size_t i = 0, n = 0;

	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_SYSCALL) | TQ_BIT(GT_EV_GO_SYSBLOCK),
			    tid))) {
		size_t j = i + 1;
		double ms;

		i++;
		if (e->type == GT_EV_GO_SYSCALL) {
			named = tq_stack_has(e->stack, name);
			continue;
		}
		if (!named)
			continue;
		n++;
		w = tq_next(it.trace, &j, TQ_WAKEUPS, tid);
		itest_expect(w && w->type == GT_EV_GO_SYSEXIT, tid,
			     "block #%zu in `%s` not ended by GoSysExit", n, name);
		ms = w ? tq_ns(it.trace, e->ts, w->ts) / 1e6 : 0;
		itest_expect(ms >= lo_ms && ms <= hi_ms, tid,
			     "block #%zu in `%s`: woken after %.3f ms, expected %g..%g", n, name, ms,
			     lo_ms, hi_ms);
	}
	return n;
}

/* The kernel's own blocking: a vfork parent waits uninterruptibly inside the syscall until its
 * child exits, so each wait is a blocking syscall (GoSysCall, GoSysBlock, GoSysExit) naming
 * `syscall vfork`, about the child's 20 ms. */
Test(blocking, vfork_waits_are_blocking_syscalls)
{
	size_t n;
	pid_t tid;

	itest_record(NULL, "vforker", (const char *[]){ "5", NULL }, 60);
	tid = itest_tid("parent");
	n = syscall_blocks(tid, "syscall vfork", 15, 500);
	itest_expect(n == 5, tid, "%zu GoSysBlock events for the parent's 5 vforks, expected 5", n);
	itest_expect(tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SYSCALL), tid, "syscall vfork") == 5, tid,
		     "%zu GoSysCall naming `syscall vfork`, expected 5",
		     tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SYSCALL), tid, "syscall vfork"));
}
