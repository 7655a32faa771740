/* test_model_enqueue.c - with enqueue records (model_opts.enqueue) a woken thread is runnable
 * from its enqueue (sched_wakeup), where the kernel's run delay starts, not from the waker's
 * sched_waking; the unblock still carries the waker's stack, by the waker's P while it runs
 * the waker there (docs/model.md, "Wakeup"). */
#include <asm/unistd_64.h>
#include <criterion/criterion.h>

#include "tests/lib/tquery.h"
#include "tests/unit/test_model_util.h"

#define T0 1000000000ull
#define BIT TQ_BIT

static const struct model_opts enqueue_opts = { .sz = sizeof(struct model_opts), .enqueue = true };
static const struct model_opts enqueue_v2_opts = { .sz = sizeof(struct model_opts), .enqueue = true,
						   .writer2 = (struct go123_writer *)&enqueue_v2_opts };

/* 800 reads on CPU 0 and blocks; 801, on CPU 1, wakes it at +100; the IPI enqueues it on
 * CPU 0 at +130; it runs at +150. */
static void remote_wakeup(struct mt *t, const struct model_opts *o, bool waker_stays)
{
	uint64_t ts = T0 + 1000;

	mt_open_with(t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0, o, 0);
	mt_switch(t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_switch(t, ts + 1, 1, 0, 801, LX_PREV_RUNNABLE, -1);
	mt_switch(t, ts + 10, 0, 800, 0, LX_PREV_SLEEP, __NR_read);
	mt_wakeup(t, ts + 100, 1, 800);
	if (!waker_stays)
		mt_switch(t, ts + 110, 1, 801, 0, LX_PREV_SLEEP, __NR_read);
	mt_enqueue(t, ts + 130, 0, 800);
	mt_switch(t, ts + 150, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_finish(t, ts + 1000);
}

Test(model_enqueue, a_remote_wakeup_is_runnable_from_its_enqueue)
{
	struct mt t;
	size_t i = 0;
	const struct gt_event *e;

	remote_wakeup(&t, &enqueue_opts, true);
	e = tq_next(t.trace, &i, TQ_WAKEUPS, 800);
	cr_assert(e, "no unblock of 800");
	cr_expect_eq(e->type, GT_EV_GO_UNBLOCK);
	cr_expect_eq(e->ts, T0 + 1000 + 130, "the unblock is at the enqueue, not the waking");
	cr_expect_eq(e->p, 1, "on the waker's P, which still runs it");
	cr_expect_eq(e->g & 0xffffffff, 801, "by the waker");
	cr_expect_eq(t.st.enqueued, 1);
	cr_expect_eq(t.st.enqueue_delay_ns, 30);
	cr_expect_eq(t.st.enqueue_delay_max_ns, 30);
	cr_expect_eq(mt_repairs(&t.st), 2, "only the two threads met unannounced");
	mt_close(&t, false);
}

/* The waker blocks before the IPI enqueues its wakee: what runs on its P then did not wake
 * anyone, so the unblock goes to the housekeeping P, where nothing runs, with the waker's
 * stack. */
Test(model_enqueue, a_waker_gone_from_its_cpu_leaves_the_unblock_to_no_goroutine)
{
	struct mt t;
	size_t i = 0;
	const struct gt_event *e;

	remote_wakeup(&t, &enqueue_opts, false);
	e = tq_next(t.trace, &i, TQ_WAKEUPS, 800);
	cr_assert(e, "no unblock of 800");
	cr_expect_eq(e->ts, T0 + 1000 + 130);
	cr_expect_eq(e->p, 2, "on the housekeeping P");
	cr_expect_eq(e->g, 0, "by no goroutine");
	cr_expect_eq(tq_count_frame(t.trace, BIT(GT_EV_GO_UNBLOCK), 800, "[unknown thread]"), 1,
		     "with the waker's stack");
	mt_close(&t, false);
}

Test(model_enqueue, go123_too)
{
	struct mt t;

	remote_wakeup(&t, &enqueue_v2_opts, false);
	cr_expect_eq(t.st.enqueued, 1);
	mt_close(&t, false);
	remote_wakeup(&t, &enqueue_v2_opts, true);
	cr_expect_eq(t.st.enqueued, 1);
	mt_close(&t, false);
}

/* Woken before its switch-out: the waker waits for the switch to end, then enqueues it. */
Test(model_enqueue, a_wakeup_before_the_switch_out_is_runnable_from_its_enqueue)
{
	struct mt t;
	uint64_t ts = T0 + 1000;
	size_t i = 0;
	const struct gt_event *e;

	mt_open_with(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0, &enqueue_opts, 0);
	mt_switch(&t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 1, 1, 0, 801, LX_PREV_RUNNABLE, -1);
	mt_wakeup(&t, ts + 10, 1, 800);
	mt_switch(&t, ts + 20, 0, 800, 0, LX_PREV_SLEEP, __NR_futex);
	mt_enqueue(&t, ts + 25, 1, 800);
	mt_switch(&t, ts + 30, 1, 801, 800, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 100);

	cr_expect_eq(tq_count(t.trace, BIT(GT_EV_GO_BLOCK_SYNC), 800), 1);
	e = tq_next(t.trace, &i, TQ_WAKEUPS, 800);
	cr_assert(e, "no unblock of 800");
	cr_expect_eq(e->ts, ts + 25);
	cr_expect_eq(e->p, 1);
	cr_expect_eq(t.st.wakeups_moot, 0);
	cr_expect_eq(t.st.enqueued, 1);
	mt_close(&t, false);
}

/* The wakeup found the thread still on its run queue (it had not switched out): sched_wakeup
 * without an enqueue. It never slept: moot at once, and its next sleep is another one. */
Test(model_enqueue, a_wakeup_of_a_thread_still_queued_is_moot)
{
	struct mt t;
	uint64_t ts = T0 + 1000;
	size_t i = 0;
	const struct gt_event *e;

	mt_open_with(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0, &enqueue_opts, 0);
	mt_switch(&t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_wakeup(&t, ts + 10, 1, 800);
	mt_enqueue(&t, ts + 12, 1, 800);
	mt_switch(&t, ts + 20, 0, 800, 0, LX_PREV_SLEEP, __NR_futex);
	mt_wakeup(&t, ts + 5000, 1, 800);
	mt_enqueue(&t, ts + 5010, 0, 800);
	mt_switch(&t, ts + 5020, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 10000);

	e = tq_next(t.trace, &i, TQ_WAKEUPS, 800);
	cr_assert(e, "no unblock of 800");
	cr_expect_eq(e->ts, ts + 5010, "the sleep lasts until the second wakeup's enqueue");
	cr_expect_eq(t.st.wakeups_moot, 1);
	cr_expect_eq(t.st.enqueued, 1);
	mt_close(&t, false);
}

/* The enqueue's record was lost: the thread is runnable from its run, and no repair says so
 * (the summary counts it). */
Test(model_enqueue, a_lost_enqueue_leaves_the_thread_runnable_from_its_run)
{
	struct mt t;
	uint64_t ts = T0 + 1000;
	size_t i = 0;
	const struct gt_event *e;

	mt_open_with(&t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0, &enqueue_opts, 0);
	mt_switch(&t, ts, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, ts + 10, 0, 800, 0, LX_PREV_SLEEP, __NR_read);
	mt_wakeup(&t, ts + 100, 1, 800);
	mt_switch(&t, ts + 150, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, ts + 1000);

	e = tq_next(t.trace, &i, TQ_WAKEUPS, 800);
	cr_assert(e, "no unblock of 800");
	cr_expect_eq(e->ts, ts + 150);
	cr_expect_eq(t.st.enqueue_unseen, 1);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_MISSED_WAKEUP], 0);
	mt_close(&t, false);
}

/* Without opts.enqueue (a stream recorded before), enqueue records change nothing. */
Test(model_enqueue, without_the_option_the_wakeup_is_at_sched_waking)
{
	struct mt t;
	size_t i = 0;
	const struct gt_event *e;

	remote_wakeup(&t, NULL, true);
	e = tq_next(t.trace, &i, TQ_WAKEUPS, 800);
	cr_assert(e, "no unblock of 800");
	cr_expect_eq(e->ts, T0 + 1000 + 100);
	cr_expect_eq(t.st.enqueued, 0);
	mt_close(&t, false);
}
