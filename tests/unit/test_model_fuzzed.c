/* test_model_fuzzed.c - record streams no capture sends but the model fuzzer did
 * (tests/fuzz/fuzz_model.c): each one once made the model write a file a Go parser refused,
 * or crash. Now each is repaired and counted, in both formats. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/test_model_util.h"

#define T0 1000000000ull

/* The model with call stacks on, in the go1.23 format when go123. */
static void open_stacks(struct mt *t, bool go123)
{
	struct model_opts base = { .sz = sizeof(base), .stacks = true };

	if (go123)
		base.writer2 = (struct go123_writer *)1;
	mt_open_with(t, 2, MODEL_SYSCALLS_BLOCKING, NULL, T0, &base, 0);
}

/* A time past 2^63 is no clock's, and Go 1.19's parser (signed clocks) took a file with one
 * for events out of order: a record or an end at such a time is clamped. */
static void time_past_2_63(bool go123)
{
	struct mt t;

	open_stacks(&t, go123);
	mt_switch(&t, T0 + 100, 0, 0, 700, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, (1ull << 63) + 100, 0, 700, 701, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, T0 + 300, 1, 0, 702, LX_PREV_RUNNABLE, -1);
	mt_finish(&t, UINT64_MAX);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_TIME_CLAMPED], 2, "the record and the end");
	mt_close(&t, false);
}

Test(model_fuzzed, a_time_past_2_63_is_clamped)
{
	time_past_2_63(false);
}

Test(model_fuzzed, a_time_past_2_63_is_clamped_in_the_go123_format)
{
	time_past_2_63(true);
}

/* A wakeup whose stack says both "an interrupt's" and "the thread's stored walk": the stored
 * walk's flags hid the interrupt, and the stack was built as the identity's of no thread
 * (ident 0: a NULL identity). An interrupt's stack has no user frames: a bad record. */
static void interrupt_stack_naming_user_frames(bool go123)
{
	struct {
		struct lx_wakeup w;
		struct lx_stack st;
		uint64_t pc[1];
	} r;
	static const uint8_t user_flags[] = { LX_USTACK_HIT, LX_USTACK_STORE, 0 };
	struct mt t;

	open_stacks(&t, go123);
	mt_switch(&t, T0 + 100, 0, 0, 700, LX_PREV_RUNNABLE, -1);
	mt_switch(&t, T0 + 200, 0, 700, 0, LX_PREV_SLEEP, -1);
	for (size_t i = 0; i < sizeof(user_flags); i++) {
		size_t size = sizeof(r.w) + sizeof(r.st) + (user_flags[i] ? 0 : sizeof(r.pc));

		memset(&r, 0, sizeof(r));
		r.w.h = (struct lx_rec){ .ts = T0 + 300 + i, .tid = 700, .cpu = 1,
					 .type = LX_REC_WAKEUP };
		r.st = (struct lx_stack){ .tid = 0, .nuser = user_flags[i] ? 0 : 1,
					  .uflags = LX_USTACK_IRQ | user_flags[i], .uslot = 1 };
		r.pc[0] = 0x401000;
		cr_assert_eq(model__record(t.m, &r.w.h, size), 0);
	}
	mt_wakeup(&t, T0 + 400, 1, 700);
	mt_finish(&t, T0 + 500);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_BAD_RECORD], 3);
	mt_close(&t, false);
}

Test(model_fuzzed, an_interrupt_stack_naming_user_frames_is_a_bad_record)
{
	interrupt_stack_naming_user_frames(false);
}

Test(model_fuzzed, an_interrupt_stack_naming_user_frames_is_a_bad_record_in_the_go123_format)
{
	interrupt_stack_naming_user_frames(true);
}

/* Under -F 100000 with records lost, the exit of a thread never seen left an entry without a
 * name, and a sample of it, in exit_group, was built as the identity 0's: a NULL identity,
 * and the recorder crashed at the stop. The sample is named as an unknown thread's. */
static void sample_of_a_thread_seen_only_by_its_exit(bool go123)
{
	struct {
		struct lx_sample s;
		struct lx_stack st;
		uint64_t pc[1];
	} r;
	struct mt t;

	open_stacks(&t, go123);
	mt_switch(&t, T0 + 100, 0, 0, 700, LX_PREV_RUNNABLE, -1);
	mt_exit(&t, T0 + 200, 1, 900);
	memset(&r, 0, sizeof(r));
	r.s.h = (struct lx_rec){ .ts = T0 + 300, .tid = 900, .cpu = 1, .type = LX_REC_SAMPLE };
	r.s.pid = 900;
	r.s.syscall = 231;
	r.st = (struct lx_stack){ .tid = 900, .nuser = 1, .uflags = LX_USTACK_TRUNCATED };
	r.pc[0] = 0x401000 | LX_PC_EXACT;
	cr_assert_eq(model__record(t.m, &r.s.h, sizeof(r)), 0);
	mt_finish(&t, T0 + 500);
	mt_close(&t, false);
}

Test(model_fuzzed, a_sample_of_a_thread_seen_only_by_its_exit)
{
	sample_of_a_thread_seen_only_by_its_exit(false);
}

Test(model_fuzzed, a_sample_of_a_thread_seen_only_by_its_exit_in_the_go123_format)
{
	sample_of_a_thread_seen_only_by_its_exit(true);
}
