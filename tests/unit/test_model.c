/* test_model.c - the model on hand-written record streams: each scenario must give a file both
 * Go parsers accept, with the events the kernel's story implies and no repair. */
#include <asm/unistd_64.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/tquery.h"
#include "tests/unit/test_model_util.h"

#define T0 1000000000ull
#define BIT TQ_BIT

static void assert_no_repairs(const struct mt *t)
{
	for (int i = 0; i < MODEL_REPAIR_COUNT; i++)
		cr_expect_eq(t->st.repairs[i], 0, "repair %s: %llu", model__repair_name(i),
			     (unsigned long long)t->st.repairs[i]);
}

/* Two threads of one process wake each other through a futex on two CPUs. */
Test(model, pingpong)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;
	const int n = 50;

	mt_proc_thread(proc, 100, 100, "pingpong", 'S', __NR_futex);
	mt_proc_thread(proc, 100, 101, "pingpong", 'S', __NR_futex);
	mt_proc_thread(proc, 100, 102, "pingpong", 'S', __NR_futex);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_wakeup(&t, ts, 0, 101);
	mt_switch(&t, ts + 5, 0, 0, 101, LX_PREV_RUNNABLE, -1);
	for (int i = 0; i < n; i++, ts += 1000) {
		mt_wakeup(&t, ts + 10, 0, 102);
		mt_switch(&t, ts + 20, 0, 101, 0, LX_PREV_SLEEP, __NR_futex);
		mt_switch(&t, ts + 30, 1, 0, 102, LX_PREV_RUNNABLE, -1);
		mt_wakeup(&t, ts + 40, 1, 101);
		mt_switch(&t, ts + 50, 1, 102, 0, LX_PREV_SLEEP, __NR_futex);
		mt_switch(&t, ts + 60, 0, 0, 101, LX_PREV_RUNNABLE, -1);
	}
	mt_finish(&t, ts + 100);

	assert_no_repairs(&t);
	/* Each found asleep in the futex first: its block in the init phase is one more. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 101), n + 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 102), n + 1);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 101, "syscall futex"), n + 1);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 102, "pingpong (pid 100)"),
		     n + 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 101), n + 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 102), n);
	/* B is always woken by A, whose identity names the unblock's stack. */
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_UNBLOCK), 102, "pingpong (pid 100)"), n);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_UNBLOCK), 101, "[irq]"), 1);
	/* Each also started and blocked in the init phase. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), 101), n + 2);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), 102), n + 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_WAITING), TQ_ANY_THREAD), 0);
	/* Each P starts and stops once. */
	cr_expect_eq(mt_count(t.trace, GT_EV_PROC_START), 3);
	cr_expect_eq(mt_count(t.trace, GT_EV_PROC_STOP), 3);
	cr_expect_eq(t.st.threads, 3);
	mt_close(&t, false);
	mt_proc_free(proc);
}

/* What holds CPU 0 while the traced thread 101 does not: an untraced program (pid 500, "hog"),
 * lxtrace (pid 600), the idle task; each kind by its stand-in, named, running exactly as long
 * as it held the CPU, never waiting for it; in either format. */
static void holders(bool go123)
{
	char *proc = mt_proc_new();
	const uint32_t un = (uint32_t)MODEL_STANDIN_GOID(0, 0), self = (uint32_t)MODEL_STANDIN_GOID(0, 1);
	struct model_opts base = { .sz = sizeof(base), .writer2 = go123 ? (void *)1 : NULL };
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_proc_thread(proc, 100, 101, "worker", 'S', __NR_read);
	mt_open_with(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0, &base, 0);
	mt_wakeup(&t, ts, 1, 101);
	mt_switch(&t, ts + 10, 0, 0, 101, LX_PREV_RUNNABLE, -1);
	/* 101 sleeps, the hog takes the CPU (named first), until 101 is woken and runs. */
	mt_occupant(&t, ts + 100, 0, LX_OCC_UNTRACED, 500, "hog", true);
	mt_switch_to(&t, ts + 100, 0, 101, LX_PREV_SLEEP, __NR_read, LX_OCC_UNTRACED);
	mt_wakeup(&t, ts + 200, 1, 101);
	mt_switch(&t, ts + 1100, 0, 0, 101, LX_PREV_RUNNABLE, -1);
	/* It sleeps again: lxtrace reads, the CPU idles, the hog again (named already). */
	mt_occupant(&t, ts + 2000, 0, LX_OCC_SELF, 600, "lxtrace", true);
	mt_switch_to(&t, ts + 2000, 0, 101, LX_PREV_SLEEP, __NR_read, LX_OCC_SELF);
	mt_occupant(&t, ts + 2300, 0, LX_OCC_IDLE, 0, "", false);
	mt_occupant(&t, ts + 5000, 0, LX_OCC_UNTRACED, 500, "hog", false);
	mt_occupant(&t, ts + 5400, 0, LX_OCC_IDLE, 0, "", false);
	mt_finish(&t, ts + 6000);

	assert_no_repairs(&t);
	cr_expect_eq(t.st.held_untraced_ns, 1000 + 400);
	cr_expect_eq(t.st.held_self_ns, 300);
	cr_expect_eq(t.st.threads, 1, "the stand-ins are no threads");
	if (!go123) {
		cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), un), 2);
		cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK), un, "hog (pid 500)"), 2);
		cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK), un, "[untraced]"), 2);
		cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), self), 1);
		cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK), self, "lxtrace (pid 600)"), 1);
		/* 101 waited for the CPU from its wakeup to its start: the hog's time. */
		cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), 101), 3);
	}
	mt_close(&t, false);
	mt_proc_free(proc);
}

Test(model, what_holds_a_cpu_untraced)
{
	holders(false);
}

Test(model, go123_what_holds_a_cpu_untraced)
{
	holders(true);
}

/* nanosleep and clock_nanosleep are sleeps; preemption and sched_yield are not blocking. */
Test(model, sleep_preempt_yield)
{
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_open(&t, 1, MODEL_SYSCALLS_BLOCKING, NULL, T0);
	mt_fork(&t, ts, 0, 0, 200, 200);	/* created from an idle CPU: a repair, tested below */
	mt_switch(&t, ts + 10, 0, 0, 200, LX_PREV_RUNNABLE, -1);
	for (int i = 0; i < 10; i++, ts += 1000) {
		mt_switch(&t, ts + 100, 0, 200, 0, LX_PREV_SLEEP, i % 2 ? __NR_nanosleep : __NR_clock_nanosleep);
		mt_wakeup(&t, ts + 500, 0, 200);
		mt_switch(&t, ts + 510, 0, 0, 200, LX_PREV_RUNNABLE, -1);
		mt_switch(&t, ts + 600, 0, 200, 0, LX_PREV_RUNNABLE, i % 2 ? __NR_sched_yield : -1);
		mt_switch(&t, ts + 700, 0, 0, 200, LX_PREV_RUNNABLE, -1);
	}
	mt_finish(&t, ts + 100);

	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_SLEEP), 200), 10);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_SLEEP), 200, "syscall nanosleep"), 5);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_SLEEP), 200, "syscall clock_nanosleep"), 5);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_SCHED), 200), 5);
	/* 5 preemptions, plus the one at the end of the trace. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_PREEMPT), 200), 6);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_UNBLOCK), 200, "[irq]"), 10);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_FOREIGN], 1);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_UNKNOWN_THREAD], 0);
	mt_close(&t, false);
}

/* A read that blocks uninterruptibly (the kernel doing its work) is a syscall (GoSysCall,
 * GoSysBlock, GoSysExit); one that waits for its file descriptor is GoBlockSelect, as are epoll
 * waits; a thread blocked outside any syscall is GoBlock. */
static void blocking_syscalls(enum model_syscalls mode)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_proc_thread(proc, 300, 300, "reader", 'R', -1);
	mt_open(&t, 2, mode, proc, T0);
	for (int i = 0; i < 8; i++, ts += 1000) {
		mt_syscall(&t, ts, 1, 300, __NR_read);
		mt_switch(&t, ts + 10, 1, 300, 0, LX_PREV_DISK, __NR_read);
		mt_wakeup(&t, ts + 200, 0, 300);
		mt_switch(&t, ts + 210, 1, 0, 300, LX_PREV_RUNNABLE, -1);
		mt_syscall(&t, ts + 220, 1, 300, __NR_getpid);
		mt_switch(&t, ts + 300, 1, 300, 0, LX_PREV_SLEEP, i % 2 ? __NR_epoll_wait : __NR_read);
		mt_wakeup(&t, ts + 400, 1, 300);
		mt_switch(&t, ts + 410, 1, 0, 300, LX_PREV_RUNNABLE, -1);
		mt_switch(&t, ts + 500, 1, 300, 0, LX_PREV_DISK, -1);
		mt_wakeup(&t, ts + 600, 0, 300);
		mt_switch(&t, ts + 610, 1, 0, 300, LX_PREV_RUNNABLE, -1);
	}
	mt_finish(&t, ts + 100);

	assert_no_repairs(&t);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_SYSBLOCK), 300), 8);
	/* The P is handed off at each block, as the Go runtime does. */
	cr_expect_eq(mt_count(t.trace, GT_EV_PROC_STOP), 3 + 8);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_SYSEXIT), 300), 8);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_SYSCALL), 300, "syscall read"), 8);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_SYSCALL), 300),
		     mode == MODEL_SYSCALLS_ALL ? 16 : 8);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SELECT), 300), 8);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK_SELECT), 300, "syscall read"), 4);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_NET), TQ_ANY_THREAD), 0);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK), 300), 8);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 300), 16);
	mt_close(&t, false);
	mt_proc_free(proc);
}

Test(model, blocking_read)
{
	blocking_syscalls(MODEL_SYSCALLS_BLOCKING);
}

Test(model, syscalls_all)
{
	blocking_syscalls(MODEL_SYSCALLS_ALL);
}

/* Memory follows the threads alive: 2,000 short processes, half of them switched out dead
 * (reaped), half not (a target mode: the process left the targets at its exit); a second after
 * the last, no thread entry or identity of theirs is kept. */
Test(model, exited_threads_and_their_identities_go)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_proc_thread(proc, 400, 400, "sh", 'R', -1);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_switch(&t, ts, 0, 0, 400, LX_PREV_RUNNABLE, -1);
	for (uint32_t i = 0; i < 2000; i++, ts += 100) {
		uint32_t c = 1000 + i;

		mt_fork(&t, ts + 10, 0, 400, c, c);
		mt_switch(&t, ts + 30, 1, 0, c, LX_PREV_RUNNABLE, -1);
		mt_exec(&t, ts + 40, 1, c, c, i % 3 ? "true" : "sleep");
		mt_exit(&t, ts + 50, 1, c);
		mt_switch(&t, ts + 60, 1, c, 0, i % 2 ? LX_PREV_DEAD : LX_PREV_RUNNABLE, -1);
	}
	mt_switch(&t, ts + 2000000000ull, 0, 400, 0, LX_PREV_SLEEP, __NR_wait4);
	mt_finish(&t, ts + 2000000100ull);

	cr_expect_leq(t.st.threads_held, 2, "%llu thread entries kept",
		      (unsigned long long)t.st.threads_held);
	cr_expect_leq(t.st.idents_held, 2, "%llu identities kept",
		      (unsigned long long)t.st.idents_held);
	cr_expect_eq(t.st.threads, 1 + 2000, "sh and each child (an exec is no new thread)");
	mt_close(&t, false);
	mt_proc_free(proc);
}

/* A shell forks a child process that execs and exits; a thread of the child's; tid reuse. */
Test(model, fork_exec_exit)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;
	const struct gt_event *ev;
	size_t i = 0;

	mt_proc_thread(proc, 400, 400, "sh", 'R', -1);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_switch(&t, ts, 0, 0, 400, LX_PREV_RUNNABLE, -1);
	mt_fork(&t, ts + 10, 0, 400, 401, 401);
	mt_wakeup_new(&t, ts + 11, 0, 401);
	mt_switch(&t, ts + 20, 0, 400, 0, LX_PREV_SLEEP, __NR_wait4);
	mt_switch(&t, ts + 30, 1, 0, 401, LX_PREV_RUNNABLE, -1);
	mt_exec(&t, ts + 40, 1, 401, 401, "worker");
	mt_fork(&t, ts + 50, 1, 401, 402, 401);
	mt_switch(&t, ts + 60, 1, 401, 402, LX_PREV_RUNNABLE, -1);
	mt_exit(&t, ts + 70, 1, 402);
	mt_switch(&t, ts + 80, 1, 402, 401, LX_PREV_DEAD, -1);
	mt_exit(&t, ts + 90, 1, 401);
	mt_wakeup(&t, ts + 91, 1, 400);
	mt_switch(&t, ts + 100, 1, 401, 0, LX_PREV_DEAD, -1);
	mt_switch(&t, ts + 110, 0, 0, 400, LX_PREV_RUNNABLE, -1);
	/* tid 402 is reused by a new thread of sh. */
	mt_fork(&t, ts + 120, 0, 400, 402, 400);
	mt_switch(&t, ts + 130, 1, 0, 402, LX_PREV_RUNNABLE, -1);
	mt_exit(&t, ts + 140, 1, 402);
	mt_switch(&t, ts + 150, 1, 402, 0, LX_PREV_DEAD, -1);
	mt_finish(&t, ts + 200);

	cr_expect_eq(t.st.tids_reused, 1);
	assert_no_repairs(&t);
	/* lxtrace's, 400, 401, 401's image after the exec, 402 and 402 again. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_CREATE), TQ_ANY_THREAD), 6);
	/* 401's first image ends at the exec, then 402, 401, 402 again. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_END), TQ_ANY_THREAD), 4);
	cr_expect_eq(tq_count_logs(t.trace, "worker"), 0, "the exec is the new goroutine, no log");
	cr_expect_eq(t.st.threads, 4, "an exec's new image is not a new thread");
	/* Created as sh's child, 401 is named after sh; the exec starts 401's next goroutine,
	 * named after the new program, as is the thread 402 it creates. */
	while ((ev = tq_next(t.trace, &i, BIT(GT_EV_GO_CREATE), TQ_ANY_THREAD))) {
		const struct gt_stack *s = tq_create_stack(t.trace, ev);
		const char *want = ev->args[0] == 401 ? "sh" :
				   ev->args[0] == (401 | 1ull << 32) ? "worker" :
				   ev->args[0] == 402 ? "worker" :
				   ev->args[0] == (402 | 1ull << 32) ? "sh" : NULL;

		cr_assert_not_null(s);
		if (want)
			cr_expect_str_eq(tq_outermost(s), want, "goroutine %llu",
					 (unsigned long long)ev->args[0]);
		i++;
	}
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), 402), 2);
	mt_close(&t, false);
	mt_proc_free(proc);
}

/* A non-leader thread execs: the leader exits, the exec'er continues under the leader's tid and
 * its own tid vanishes with no exit record. Its goroutine must end there, not linger until a
 * stale-switch repair. */
Test(model, non_leader_exec)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;
	const struct gt_event *ev;
	size_t i = 0;

	mt_proc_thread(proc, 700, 700, "app", 'R', -1);
	mt_proc_thread(proc, 700, 701, "app", 'R', -1);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_switch(&t, ts, 0, 0, 700, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 10, 1, 0, 701, LX_PREV_RUNNABLE, -1);
	mt_exit(&t, ts + 20, 0, 700);
	mt_switch(&t, ts + 30, 0, 700, 0, LX_PREV_DEAD, -1);
	mt_exec_from(&t, ts + 40, 1, 700, 701, 700, "newprog");
	mt_switch(&t, ts + 50, 1, 700, 0, LX_PREV_SLEEP, -1);
	mt_wakeup(&t, ts + 60, 0, 700);
	mt_switch(&t, ts + 70, 0, 0, 700, LX_PREV_RUNNABLE, -1);
	mt_exit(&t, ts + 80, 0, 700);
	mt_switch(&t, ts + 90, 0, 700, 0, LX_PREV_DEAD, -1);
	mt_finish(&t, ts + 200);

	assert_no_repairs(&t);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_END), 701), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_CREATE), 701), 1, "701 creates the leader's next life");
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_END), TQ_ANY_THREAD), 3);
	/* The new image is the leader tid's next goroutine, created by 701 and named after the
	 * new program. */
	while ((ev = tq_next(t.trace, &i, BIT(GT_EV_GO_CREATE), TQ_ANY_THREAD))) {
		if (ev->args[0] == (700 | 1ull << 32)) {
			cr_expect_eq(ev->g, 701);
			cr_expect_str_eq(tq_outermost(tq_create_stack(t.trace, ev)), "newprog");
		}
		i++;
	}
	mt_close(&t, false);
	mt_proc_free(proc);
}

/* The /proc scan runs after the attach, so a thread it finds asleep may have been woken before
 * (it runs unwoken in the first records) or running (its first record is its switch-out): its
 * records older than the scan are not repairs. Whole-machine stress here made 4-13 such
 * missed-wakeups in the first 8 ms of every recording. */
Test(model, records_older_than_the_scan_of_a_thread_found_asleep)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_proc_thread(proc, 100, 100, "app", 'S', __NR_futex);
	mt_proc_thread(proc, 100, 101, "app", 'S', __NR_read);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_switch(&t, ts, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 10, 0, 100, 0, LX_PREV_SLEEP, __NR_futex);
	mt_switch(&t, ts + 20, 1, 101, 0, LX_PREV_SLEEP, __NR_read);
	mt_finish(&t, ts + 100);

	assert_no_repairs(&t);
	/* The init phase's block, then the switch's. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 100), 2);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SELECT), 101), 2);
	mt_close(&t, false);
	mt_proc_free(proc);
}

/* Threads alive at start: sleeping ones wait, in a syscall or not (no GoInSyscall: Go 1.23
 * would draw them running one), running ones are placed by their first record without a
 * repair. */
Test(model, init_phase)
{
	char *proc = mt_proc_new();
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_proc_thread(proc, 500, 500, "db", 'S', __NR_futex);
	mt_proc_thread(proc, 500, 501, "db", 'D', __NR_pread64);
	mt_proc_thread(proc, 500, 502, "db", 'R', -1);
	mt_proc_thread(proc, 500, 503, "db io", 'S', __NR_io_getevents);
	mt_proc_thread(proc, 600, 600, "(sd-pam)", 'S', -1);
	mt_proc_thread(proc, 600, 601, "dead", 'Z', -1);
	mt_proc_thread(proc, 500, 504, "db", 'R', -1);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	/* Forked after the recording started, before the scan that found it: no second birth. */
	mt_fork(&t, ts - 1, 0, 500, 504, 500);
	mt_wakeup(&t, ts, 1, 501);
	mt_wakeup(&t, ts + 1, 1, 503);
	mt_wakeup(&t, ts + 2, 1, 500);
	mt_switch(&t, ts + 10, 0, 502, 501, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 20, 1, 0, 503, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 100);

	assert_no_repairs(&t);
	cr_expect_eq(t.st.threads, 6);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_IN_SYSCALL), TQ_ANY_THREAD), 0);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_SYSEXIT), TQ_ANY_THREAD), 0);
	/* Started and blocked in the init phase as a switch out of what they sleep in would
	 * block them (a futex a lock, io_getevents an event; uninterruptible or in no syscall a
	 * plain block): lxtrace's goroutine, 500, 501, 503 and 600; the three woken by
	 * GoUnblock. */
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_WAITING), TQ_ANY_THREAD), 0);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 500), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SELECT), 503), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK), TQ_ANY_THREAD), 3);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_BLOCK), 501, "syscall pread64"), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 500), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 501), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 503), 1);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_START), 502), 1);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_PREEMPT), 503, "db io (pid 500)"), 1);
	/* Created with its program's name; the pid is on its other stacks. */
	cr_expect_eq(tq_count_created(t.trace, 600, "(sd-pam)"), 1);
	cr_expect_eq(tq_count_process(t.trace, BIT(GT_EV_GO_BLOCK), 600, "(sd-pam) (pid 600)"), 1);
	cr_expect(!tq_has_func(t.trace, 601, "dead"));
	mt_close(&t, false);
	mt_proc_free(proc);
}

/* Lost records become a UserLog of lxtrace's own goroutine. */
Test(model, lost_records)
{
	struct mt t;

	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0);
	cr_assert_eq(model__lost(t.m, 1, T0 + 100, 42), 0);
	mt_switch(&t, T0 + 200, 0, 0, 700, LX_PREV_RUNNABLE, -1);
	cr_assert_eq(model__lost(t.m, 0, T0 + 300, 7), 0);
	mt_finish(&t, T0 + 400);

	cr_expect_eq(t.st.lost, 49);
	cr_expect_eq(tq_count_logs(t.trace, "42 records lost on CPU 1"), 1);
	cr_expect_eq(tq_count_logs(t.trace, "7 records lost on CPU 0"), 1);
	cr_expect_eq(tq_count_logs(t.trace, "lxtrace.lost"), 2);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_UNKNOWN_THREAD], 1);
	mt_close(&t, false);
}

/* A wakeup that races ahead of the wakee's own switch-out. */
Test(model, wakeup_before_switch_out)
{
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0);
	mt_switch(&t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 1, 1, 0, 801, LX_PREV_RUNNABLE, -1);
	mt_wakeup(&t, ts + 10, 1, 800);
	mt_switch(&t, ts + 20, 0, 800, 0, LX_PREV_SLEEP, __NR_futex);
	mt_switch(&t, ts + 30, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	/* And one that found it still running, so it never blocked. */
	mt_wakeup(&t, ts + 40, 1, 800);
	mt_switch(&t, ts + 50, 0, 800, 0, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 100);

	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 800), 1);
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_UNBLOCK), 800, "[unknown thread]"), 1);
	cr_expect_eq(t.st.wakeups_moot, 1);
	mt_close(&t, false);
}

/* A wakeup of a thread preempted after it set itself sleeping: sched_waking fires only for a
 * thread in the sleep state it is woken from, and this one is still runnable. The kernel and
 * the model agree (stress here: 46 in 8 s), so it is no repair, and writes nothing. */
Test(model, wakeup_of_a_thread_preempted_on_its_way_to_sleep)
{
	struct mt t;
	uint64_t ts = T0 + 1000;

	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0);
	mt_switch(&t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 10, 0, 800, 0, LX_PREV_RUNNABLE, -1);
	mt_wakeup(&t, ts + 20, 1, 800);
	mt_switch(&t, ts + 30, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 100);

	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_UNBLOCK), 800), 0);
	cr_expect_eq(t.st.wakeups_moot, 1);
	for (int i = 0; i < MODEL_REPAIR_COUNT; i++)
		if (i != MODEL_REPAIR_UNKNOWN_THREAD)
			cr_expect_eq(t.st.repairs[i], 0, "repair %s", model__repair_name(i));
	mt_close(&t, false);
}

/* A wakeup that found the thread on its way to a sleep it then gave up (the lock it waited for
 * came free): the thread forks and only then blocks, in vfork, until a later wakeup. The kept
 * wakeup belongs to no switch-out: the block lasts until the second wakeup (seen in a CI run:
 * a 20 ms vfork wait drawn as 0 ms). */
Test(model, wakeup_of_a_sleep_given_up)
{
	struct mt t;
	uint64_t ts = T0 + 1000;
	const struct gt_event *block, *end;
	size_t i = 0, j = 0;

	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0);
	mt_switch(&t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_wakeup(&t, ts + 10, 1, 800);
	mt_fork(&t, ts + 20, 0, 800, 801, 801);
	mt_switch(&t, ts + 30, 0, 800, 801, LX_PREV_DISK, __NR_vfork);
	mt_switch(&t, ts + 40, 0, 801, 0, LX_PREV_SLEEP, __NR_nanosleep);
	mt_wakeup(&t, ts + 20000, 1, 800);
	mt_switch(&t, ts + 20010, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 30000);

	block = tq_next(t.trace, &i, BIT(GT_EV_GO_SYSBLOCK), 800);
	end = tq_next(t.trace, &j, BIT(GT_EV_GO_SYSEXIT), 800);
	cr_assert(block && end, "the vfork wait is a blocking syscall that ends");
	cr_expect_eq(tq_ns(t.trace, block->ts, end->ts), 20000 - 30,
		     "the wait ends at the second wakeup, not at once");
	cr_expect_eq(t.st.wakeups_moot, 1);
	mt_close(&t, false);
}

/* The real /proc of this machine: every thread alive but the recorder's own (here, this test's
 * process), which the BPF side does not record either. */
Test(model, real_proc)
{
	char name[64], prog[64] = "";
	FILE *f;
	struct mt t;
	uint64_t ts = T0 * 10;

	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, "/proc", ts);
	mt_finish(&t, ts + 1000);

	snprintf(name, sizeof(name), "/proc/%d/comm", getppid());
	f = fopen(name, "re");
	cr_assert(f && fgets(prog, sizeof(prog), f), "reading %s", name);
	fclose(f);
	prog[strcspn(prog, "\n")] = '\0';
	cr_expect_eq(tq_count_created(t.trace, (uint32_t)getppid(), prog), 1,
		     "no goroutine of the parent named after its program '%s'", prog);
	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_CREATE), (uint32_t)gettid()), 0, "own thread recorded");
	cr_expect_gt(t.st.threads, 10);
	cr_expect_eq(mt_repairs(&t.st), 0);
	mt_close(&t, false);
}
