/* test_format_wire.c - the byte-level building blocks: varints and the event table. */
#include <criterion/criterion.h>

#include "format/varint.h"
#include "format/go119/wire.h"

Test(format_wire, varint_boundaries)
{
	static const struct {
		uint64_t v;
		unsigned len;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 16383, 2 }, { 16384, 3 },
		{ (1ULL << 32) - 1, 5 }, { 1ULL << 32, 5 }, { 1ULL << 63, 10 }, { UINT64_MAX, 10 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[GT_MAX_VARINT_LEN + 1];
		uint8_t *end = gt_varint_put(buf, cases[i].v);
		uint64_t back = 0;

		cr_expect_eq(end - buf, cases[i].len, "%llu", (unsigned long long)cases[i].v);
		cr_expect_eq(gt_varint_len(cases[i].v), cases[i].len);
		cr_expect_eq(gt_varint_get(buf, end, &back), cases[i].len);
		cr_expect_eq(back, cases[i].v);
		/* Every shorter view ends inside the number. */
		for (unsigned cut = 0; cut < cases[i].len; cut++)
			cr_expect_eq(gt_varint_get(buf, buf + cut, &back), 0);
	}
}

Test(format_wire, varint_known_bytes)
{
	uint8_t buf[GT_MAX_VARINT_LEN];
	static const uint8_t minus_one[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

	cr_assert_eq(gt_varint_put(buf, 128) - buf, 2);
	cr_expect_eq(buf[0], 0x80);
	cr_expect_eq(buf[1], 0x01);
	cr_assert_eq(gt_varint_put(buf, UINT64_MAX) - buf, 10);
	cr_expect_arr_eq(buf, minus_one, 10);
}

Test(format_wire, varint_rejects_overflow)
{
	/* Eleven bytes, or a tenth byte carrying more than bit 63: Go 1.23 refuses both. */
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t big[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	uint64_t v;

	cr_expect_eq(gt_varint_get(eleven, eleven + sizeof(eleven), &v), 0);
	cr_expect_eq(gt_varint_get(big, big + sizeof(big), &v), 0);
}

/* Header bytes as the Go 1.19 runtime writes them (docs/format.md §2.1). */
Test(format_wire, header_bytes)
{
	static const struct {
		enum gt_type t;
		uint8_t b;
	} want[] = {
		{ GT_EV_BATCH, 0x41 }, { GT_EV_FREQUENCY, 0x02 }, { GT_EV_STACK, 0xC3 },
		{ GT_EV_STRING, 0x25 }, { GT_EV_GOMAXPROCS, 0x84 },
		{ GT_EV_PROC_START, 0x45 }, { GT_EV_PROC_STOP, 0x06 }, { GT_EV_GC_START, 0x87 },
		{ GT_EV_GC_DONE, 0x08 }, { GT_EV_GC_STW_START, 0x49 }, { GT_EV_GC_STW_DONE, 0x0A },
		{ GT_EV_GC_SWEEP_START, 0x4B }, { GT_EV_GC_SWEEP_DONE, 0x8C }, { GT_EV_GO_CREATE, 0xCD },
		{ GT_EV_GO_START, 0x8E }, { GT_EV_GO_END, 0x0F }, { GT_EV_GO_STOP, 0x50 },
		{ GT_EV_GO_SCHED, 0x51 }, { GT_EV_GO_PREEMPT, 0x52 }, { GT_EV_GO_SLEEP, 0x53 },
		{ GT_EV_GO_BLOCK, 0x54 }, { GT_EV_GO_UNBLOCK, 0xD5 }, { GT_EV_GO_BLOCK_SEND, 0x56 },
		{ GT_EV_GO_BLOCK_RECV, 0x57 }, { GT_EV_GO_BLOCK_SELECT, 0x58 },
		{ GT_EV_GO_BLOCK_SYNC, 0x59 }, { GT_EV_GO_BLOCK_COND, 0x5A }, { GT_EV_GO_BLOCK_NET, 0x5B },
		{ GT_EV_GO_SYSCALL, 0x5C }, { GT_EV_GO_SYSEXIT, 0xDD }, { GT_EV_GO_SYSBLOCK, 0x1E },
		{ GT_EV_GO_WAITING, 0x5F }, { GT_EV_GO_IN_SYSCALL, 0x60 }, { GT_EV_HEAP_ALLOC, 0x61 },
		{ GT_EV_HEAP_GOAL, 0x62 }, { GT_EV_TIMER_GOROUTINE, 0x23 }, { GT_EV_FUTILE_WAKEUP, 0x24 },
		{ GT_EV_GO_START_LOCAL, 0x66 }, { GT_EV_GO_UNBLOCK_LOCAL, 0xA7 },
		{ GT_EV_GO_SYSEXIT_LOCAL, 0xA8 }, { GT_EV_GO_START_LABEL, 0xE9 },
		{ GT_EV_GO_BLOCK_GC, 0x6A }, { GT_EV_GC_MARK_ASSIST_START, 0x6B },
		{ GT_EV_GC_MARK_ASSIST_DONE, 0x2C }, { GT_EV_USER_TASK_CREATE, 0xED },
		{ GT_EV_USER_TASK_END, 0xAE }, { GT_EV_USER_REGION, 0xEF }, { GT_EV_USER_LOG, 0xF0 },
		{ GT_EV_CPU_SAMPLE, 0xF1 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(gt_header_byte(want[i].t), want[i].b, "%s: 0x%02x, want 0x%02x",
			     gt_specs[want[i].t].name, gt_header_byte(want[i].t), want[i].b);
	/* Every type but None, the special records included. */
	cr_expect_eq(sizeof(want) / sizeof(want[0]), GT_EV_COUNT - 1);
}

Test(format_wire, table_is_complete)
{
	unsigned avoid = 0;

	for (unsigned t = 1; t < GT_EV_COUNT; t++) {
		cr_expect(gt_specs[t].name && gt_specs[t].name[0], "type %u has no name", t);
		cr_expect_leq(gt_nvalues(t), GT_MAX_ARGS, "%s", gt_specs[t].name);
		avoid += !!(gt_specs[t].flags & GT_AVOID);
	}
	cr_expect(gt_specs[GT_EV_FUTILE_WAKEUP].flags & GT_AVOID);
	cr_expect(gt_specs[GT_EV_GO_START_LOCAL].flags & GT_AVOID);
	cr_expect(gt_specs[GT_EV_GO_UNBLOCK_LOCAL].flags & GT_AVOID);
	cr_expect(gt_specs[GT_EV_GO_SYSEXIT_LOCAL].flags & GT_AVOID);
	cr_expect_eq(avoid, 4);
}
