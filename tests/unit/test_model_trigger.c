/* test_model_trigger.c - the model measuring the flight recorder's triggers: run-queue latency,
 * time off the CPU and time blocked in a syscall, each at the thread's start; filters; a
 * firing marked on the thread right after its start and told to the recorder; trigger records
 * from a program and from the reader. Every file is checked by both Go parsers (mt_finish). */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/test_model_util.h"
#include "user/flight/trigger.h"
#include "user/proc/syscalls.h"

#define T0 1000000000ull
#define MS 1000000ull

struct fired {
	unsigned n;
	uint64_t ts;
	struct trigger_fired all[8];	/* the first ones */
};

static void on_trigger(void *ctx, const struct trigger_fired *fired)
{
	struct fired *f = ctx;

	if (f->n < sizeof(f->all) / sizeof(f->all[0]))
		f->all[f->n] = *fired;
	f->n++;
	f->ts = fired->ts;
}

/* Process 100 "alpha" (threads 100, 101) and 200 "beta", runnable at start; triggers from
 * exprs (NULL-terminated). */
static void open_with(struct mt *t, char **root, const char *const *exprs, struct trigger *trig,
		      struct fired *f)
{
	char err[256];
	size_t n = 0;

	for (; exprs && exprs[n]; n++)
		cr_assert_eq(trigger__parse(exprs[n], &trig[n], err, sizeof(err)), 0, "%s", err);
	*root = mt_proc_new();
	mt_proc_thread(*root, 100, 100, "alpha", 'R', -1);
	mt_proc_thread(*root, 100, 101, "alpha", 'R', -1);
	mt_proc_thread(*root, 200, 200, "beta", 'R', -1);
	mt_open_with(t, 2, MODEL_SYSCALLS_BLOCKING, *root, T0,
		     &(struct model_opts){ .sz = sizeof(struct model_opts), .triggers = trig,
					   .ntriggers = n, .on_trigger = on_trigger, .trigger_ctx = f },
		     0);
}

/* The trigger marks: UserLogs keyed "lxtrace.trigger", the n-th of them (NULL past the end). */
static const struct gt_event *mark(const struct gt_trace *tr, size_t n)
{
	const struct gt_event *ev = gt_trace__events(tr);

	for (size_t i = 0; i < gt_trace__nevents(tr); i++) {
		const char *key;

		if (ev[i].type != GT_EV_USER_LOG)
			continue;
		key = gt_trace__string(tr, ev[i].args[1]);
		if (key && !strcmp(key, "lxtrace.trigger") && n-- == 0)
			return &ev[i];
	}
	return NULL;
}

static void expect_msg(const struct gt_event *e, const char *want)
{
	cr_assert(e, "no trigger mark");
	cr_expect(e->msg_len == strlen(want) && !memcmp(e->msg, want, e->msg_len),
		  "mark says '%.*s', expected '%s'", (int)e->msg_len, e->msg, want);
}

/* Thread 100 starts on CPU 0, then blocks there at T0 + 20 in syscall nr (-1: outside any). */
static void run_then_block(struct mt *t, int nr)
{
	mt_switch(t, T0 + 10, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_switch(t, T0 + 20, 0, 100, 0, LX_PREV_SLEEP, (int16_t)nr);
}

Test(model_trigger, run_queue_latency_fires_at_the_start_on_the_thread)
{
	struct trigger trig[2];
	struct fired f = { 0 };
	const struct gt_event *m, *e;
	struct mt t;
	char *root;

	open_with(&t, &root, (const char *[]){ "sched-latency>50ms", NULL }, trig, &f);
	run_then_block(&t, syscalls__nr("clock_nanosleep"));
	mt_wakeup(&t, T0 + 30 * MS, 1, 100);
	/* Woken at 30 ms, runs at 100 ms: 70 ms runnable. */
	mt_switch(&t, T0 + 100 * MS, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	/* Runnable again by preemption at 110 ms, back at 140: 30 ms, under the threshold. */
	mt_switch(&t, T0 + 110 * MS, 0, 100, 200, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, T0 + 140 * MS, 0, 200, 100, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 200 * MS);

	cr_expect_eq(f.n, 1);
	cr_expect_eq(f.ts, T0 + 100 * MS);
	/* The recorder hears what fired on which thread. */
	cr_expect(f.all[0].trigger == &trig[0] && f.all[0].ns == 70 * MS && f.all[0].tid == 100 &&
		  f.all[0].pid == 100 && !strcmp(f.all[0].comm, "alpha"), "told %p %llu ns, tid %u "
		  "pid %u '%s'", (const void *)f.all[0].trigger, (unsigned long long)f.all[0].ns,
		  f.all[0].tid, f.all[0].pid, f.all[0].comm);
	m = mark(t.trace, 0);
	expect_msg(m, "sched-latency 70.0 ms > 50.0 ms: tid 100 alpha (pid 100)");
	cr_expect_eq((uint32_t)m->g, 100, "marked on the thread itself");
	cr_expect(m->stack, "a UserLog needs a stack for the viewers");
	/* Right after the start it ends: same time, the start first. */
	e = m - 1;
	cr_expect(e->type == GT_EV_GO_START && (uint32_t)e->args[0] == 100 && e->ts == m->ts);
	cr_expect_null(mark(t.trace, 1));
	cr_expect_eq(mt_repairs(&t.st), 0);
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_trigger, offcpu_and_filters)
{
	struct trigger trig[3];
	struct fired f = { 0 };
	struct mt t;
	char *root;

	/* beta's filter and a pid that is not alpha's never fire; the third does. */
	open_with(&t, &root, (const char *[]){ "offcpu>1s,comm=beta", "offcpu>1s,pid=7",
					       "offcpu>1s,comm=alpha,pid=100", NULL }, trig, &f);
	run_then_block(&t, -1);
	mt_wakeup(&t, T0 + 1200 * MS, 1, 100);
	mt_switch(&t, T0 + 1200 * MS + 10, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 1300 * MS);

	cr_expect_eq(f.n, 1);
	expect_msg(mark(t.trace, 0), "offcpu 1.20 s > 1.00 s: tid 100 alpha (pid 100)");
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_trigger, syscall_blocked_in_read_but_not_in_futex_unless_named)
{
	struct trigger trig[2];
	struct fired f = { 0 };
	struct mt t;
	char *root;

	open_with(&t, &root, (const char *[]){ "syscall>200ms", NULL }, trig, &f);
	run_then_block(&t, syscalls__nr("read"));
	mt_wakeup(&t, T0 + 300 * MS, 1, 100);
	mt_switch(&t, T0 + 300 * MS + 20, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	/* 400 ms in futex: a wait, not what a plain syscall trigger is about. */
	mt_switch(&t, T0 + 310 * MS, 0, 100, 0, LX_PREV_SLEEP, (int16_t)syscalls__nr("futex"));
	mt_wakeup(&t, T0 + 710 * MS, 1, 100);
	mt_switch(&t, T0 + 710 * MS + 20, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 800 * MS);
	cr_expect_eq(f.n, 1);
	expect_msg(mark(t.trace, 0), "syscall read 300.0 ms > 200.0 ms: tid 100 alpha (pid 100)");
	cr_expect_eq(f.all[0].nr, syscalls__nr("read"));
	cr_expect_null(mark(t.trace, 1));
	mt_close(&t, false);
	mt_proc_free(root);

	f = (struct fired){ 0 };
	open_with(&t, &root, (const char *[]){ "syscall:futex>200ms", NULL }, trig, &f);
	run_then_block(&t, syscalls__nr("futex"));
	mt_wakeup(&t, T0 + 400 * MS, 1, 100);
	mt_switch(&t, T0 + 400 * MS + 20, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 500 * MS);
	cr_expect_eq(f.n, 1);
	expect_msg(mark(t.trace, 0), "syscall futex 400.0 ms > 200.0 ms: tid 100 alpha (pid 100)");
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_trigger, no_time_is_measured_across_lost_records)
{
	struct trigger trig[2];
	struct fired f = { 0 };
	struct mt t;
	char *root;

	open_with(&t, &root, (const char *[]){ "sched-latency>50ms", NULL }, trig, &f);
	run_then_block(&t, -1);
	mt_wakeup(&t, T0 + 30 * MS, 1, 100);
	/* Records lost meanwhile: the 70 ms may hold runs of 100 that were never seen. */
	cr_assert_eq(model__lost(t.m, 0, T0 + 60 * MS, 12), 0);
	mt_switch(&t, T0 + 100 * MS, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	/* After the loss report, times are measured again. */
	mt_switch(&t, T0 + 110 * MS, 0, 100, 0, LX_PREV_SLEEP, -1);
	mt_wakeup(&t, T0 + 120 * MS, 1, 100);
	mt_switch(&t, T0 + 200 * MS, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 300 * MS);
	cr_expect_eq(f.n, 1);
	expect_msg(mark(t.trace, 0), "sched-latency 80.0 ms > 50.0 ms: tid 100 alpha (pid 100)");
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_trigger, first_run_of_a_thread_found_runnable_has_no_known_times)
{
	struct trigger trig[2];
	struct fired f = { 0 };
	struct mt t;
	char *root;

	/* Runnable since the scan, first seen running 5 s later: not 5 s of latency. */
	open_with(&t, &root, (const char *[]){ "sched-latency>1ms", "offcpu>1ms", NULL }, trig, &f);
	mt_switch(&t, T0 + 5000 * MS, 1, 0, 200, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 5001 * MS);
	cr_expect_eq(f.n, 0);
	cr_expect_null(mark(t.trace, 0));
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_trigger, records_from_a_program_and_from_the_reader)
{
	struct trigger trig[1];
	struct fired f = { 0 };
	const struct gt_event *m;
	struct mt t;
	char *root;

	open_with(&t, &root, NULL, trig, &f);
	mt_switch(&t, T0 + 10, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_user(&t, T0 + 20, 0, 100, 100, LX_REC_TRIGGER, 0, 0, NULL, "slow request", 0);
	mt_user(&t, T0 + 30, 1, 0, 0, LX_REC_TRIGGER, 0, 0, NULL, "SIGUSR1", 0);
	mt_user(&t, T0 + 40, 0, 100, 100, LX_REC_TRIGGER, 0, 0, NULL, "long", LX_USER_MSG_CUT);
	mt_user(&t, T0 + 50, 0, 100, 100, LX_REC_TRIGGER, 0, 0, NULL, "", LX_USER_MSG_FAULT);
	mt_finish(&t, T0 + 100);

	cr_expect_eq(f.n, 4);
	cr_expect_eq(t.st.kinds[MODEL_KIND_TRIGGER], 4);
	/* No --trigger fired these: the program's on its thread, the reader's on none. */
	cr_expect(!f.all[0].trigger && f.all[0].tid == 100 && f.all[0].pid == 100 &&
		  !strcmp(f.all[0].comm, "alpha") && !strcmp(f.all[0].reason, "slow request"));
	cr_expect(!f.all[1].trigger && !f.all[1].tid && !strcmp(f.all[1].reason, "SIGUSR1"));
	m = mark(t.trace, 0);
	expect_msg(m, "slow request");
	cr_expect_eq((uint32_t)m->g, 100);
	m = mark(t.trace, 1);
	expect_msg(m, "SIGUSR1");
	cr_expect_eq(m->g, 0xffffffffull, "the reader's own trigger is on lxtrace's goroutine");
	expect_msg(mark(t.trace, 2), "long\u2026");
	expect_msg(mark(t.trace, 3), "(unreadable)");
	cr_expect_eq(mt_repairs(&t.st), 0);
	mt_close(&t, false);
	mt_proc_free(root);
}

/* What holds a CPU untraced (lxtrace, a program outside the target) is shown by stand-ins,
 * which are off their CPU for as long as a thread of the trace runs there and wait for none:
 * no trigger measures them, whatever its threshold. Thread 100 fires, as it would without
 * them. */
Test(model_trigger, the_stand_ins_of_untraced_cpu_holders_fire_nothing)
{
	struct trigger trig[2];
	struct fired f = { 0 };
	struct mt t;
	char *root;

	open_with(&t, &root, (const char *[]){ "offcpu>1ms", "sched-latency>1ns", NULL }, trig, &f);
	mt_occupant(&t, T0 + 5, 0, LX_OCC_SELF, 600, "lxtrace-files", false);
	mt_switch(&t, T0 + 10, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_occupant(&t, T0 + 20, 0, LX_OCC_UNTRACED, 700, "hog", true);
	mt_switch_to(&t, T0 + 20, 0, 100, LX_PREV_SLEEP, syscalls__nr("read"), LX_OCC_UNTRACED);
	mt_switch(&t, T0 + 30 * MS, 0, 0, 200, LX_PREV_RUNNABLE, -1);
	mt_switch_to(&t, T0 + 40 * MS, 0, 200, LX_PREV_RUNNABLE, -1, LX_OCC_SELF);
	mt_wakeup(&t, T0 + 50 * MS, 1, 100);
	mt_switch(&t, T0 + 60 * MS, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, T0 + 100 * MS);

	for (unsigned i = 0; i < f.n && i < 8; i++)
		cr_expect(f.all[i].tid == 100 || f.all[i].tid == 200, "fired on tid %u '%s'",
			  f.all[i].tid, f.all[i].comm);
	cr_expect_geq(f.n, 1, "thread 100's 60 ms off the CPU fired nothing");
	cr_expect_eq(mt_repairs(&t.st), 0);
	mt_close(&t, false);
	mt_proc_free(root);
}
