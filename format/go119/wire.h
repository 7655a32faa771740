/* wire.h - the Go 1.19 execution-trace wire format, shared by the encoder and the decoder.
 *
 * The event table mirrors what Go 1.19's parser (internal/trace/parser.go, EventDescriptions)
 * expects: an event carries a timestamp diff (unless GT_NO_TS), exactly `nargs` arguments,
 * then a stack id when `has_stack` is set. Any other value count is fatal to both parsers.
 * See docs/format.md for the rules both real parsers impose beyond the byte layout.
 */
#ifndef LXTRACE_FORMAT_GO119_WIRE_H
#define LXTRACE_FORMAT_GO119_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "format/frame.h"

/* "go 1.19 trace" followed by three NULs: exactly 16 bytes, no footer. */
#define GT_HEADER "go 1.19 trace\0\0\0"
#define GT_HEADER_LEN 16

/* Go 1.23 refuses a length-prefixed body longer than this. */
#define GT_MAX_LONG_BODY 2048
/* Both parsers refuse strings longer than this (and empty ones). */
#define GT_MAX_STRING_LEN 1000000
/* The most arguments after the timestamp diff, stack id included (UserTaskCreate, CPUSample). */
#define GT_MAX_ARGS 4

enum gt_type {
	GT_EV_NONE = 0,
	GT_EV_BATCH = 1,		/* p, base ticks */
	GT_EV_FREQUENCY = 2,		/* ticks per second, no timestamp */
	GT_EV_STACK = 3,		/* id, n, n x {pc, func sid, file sid, line} */
	GT_EV_GOMAXPROCS = 4,		/* procs, stk */
	GT_EV_PROC_START = 5,		/* thread */
	GT_EV_PROC_STOP = 6,
	GT_EV_GC_START = 7,		/* seq, stk */
	GT_EV_GC_DONE = 8,
	GT_EV_GC_STW_START = 9,		/* kind */
	GT_EV_GC_STW_DONE = 10,
	GT_EV_GC_SWEEP_START = 11,	/* stk */
	GT_EV_GC_SWEEP_DONE = 12,	/* swept, reclaimed */
	GT_EV_GO_CREATE = 13,		/* g, new stack, stk */
	GT_EV_GO_START = 14,		/* g, seq */
	GT_EV_GO_END = 15,
	GT_EV_GO_STOP = 16,		/* stk */
	GT_EV_GO_SCHED = 17,		/* stk */
	GT_EV_GO_PREEMPT = 18,		/* stk */
	GT_EV_GO_SLEEP = 19,		/* stk */
	GT_EV_GO_BLOCK = 20,		/* stk */
	GT_EV_GO_UNBLOCK = 21,		/* g, seq, stk */
	GT_EV_GO_BLOCK_SEND = 22,	/* stk */
	GT_EV_GO_BLOCK_RECV = 23,	/* stk */
	GT_EV_GO_BLOCK_SELECT = 24,	/* stk */
	GT_EV_GO_BLOCK_SYNC = 25,	/* stk */
	GT_EV_GO_BLOCK_COND = 26,	/* stk */
	GT_EV_GO_BLOCK_NET = 27,	/* stk */
	GT_EV_GO_SYSCALL = 28,		/* stk */
	GT_EV_GO_SYSEXIT = 29,		/* g, seq, real ts (always 0 from lxtrace) */
	GT_EV_GO_SYSBLOCK = 30,
	GT_EV_GO_WAITING = 31,		/* g */
	GT_EV_GO_IN_SYSCALL = 32,	/* g */
	GT_EV_HEAP_ALLOC = 33,		/* bytes */
	GT_EV_HEAP_GOAL = 34,		/* bytes */
	GT_EV_TIMER_GOROUTINE = 35,	/* g, no timestamp */
	GT_EV_FUTILE_WAKEUP = 36,
	GT_EV_STRING = 37,		/* id, len, bytes; no timestamp */
	GT_EV_GO_START_LOCAL = 38,	/* g */
	GT_EV_GO_UNBLOCK_LOCAL = 39,	/* g, stk */
	GT_EV_GO_SYSEXIT_LOCAL = 40,	/* g, real ts */
	GT_EV_GO_START_LABEL = 41,	/* g, seq, label sid */
	GT_EV_GO_BLOCK_GC = 42,		/* stk */
	GT_EV_GC_MARK_ASSIST_START = 43, /* stk */
	GT_EV_GC_MARK_ASSIST_DONE = 44,
	GT_EV_USER_TASK_CREATE = 45,	/* task, parent, name sid, stk */
	GT_EV_USER_TASK_END = 46,	/* task, stk */
	GT_EV_USER_REGION = 47,		/* task, mode (0 start, 1 end), name sid, stk */
	GT_EV_USER_LOG = 48,		/* task, key sid, stk; then len + message bytes */
	GT_EV_CPU_SAMPLE = 49,		/* real ts, p, g, stk; its diff is always 0 */
	GT_EV_COUNT = 50,
};

enum gt_spec_flags {
	GT_NO_TS = 1 << 0,	/* no timestamp diff on the wire */
	GT_STACK = 1 << 1,	/* a trailing stack id follows the arguments */
	GT_SPECIAL = 1 << 2,	/* Batch, Stack, String: own layout, not the generic path's */
	GT_AVOID = 1 << 3,	/* valid in 1.19, refused or misread by 1.23: never written */
};

/* What an event does to goroutines, as both parsers track it: the encoder orders batches by
 * it and the decoder derives each event's G from it. */
enum gt_g_effect {
	GT_G_NONE = 0,
	GT_G_START,	/* the G in args[0] becomes the P's running G */
	GT_G_STOP,	/* the P's running G stops: blocks, yields, is preempted, syscall-blocks */
	GT_G_END,	/* the P's running G is gone for good (GoEnd, GoStop) */
	GT_G_TARGET,	/* the P's running G acts on the G in args[0] (create, unblock) */
	GT_G_SELF,	/* about the G in args[0], not the P's (syscall exit, status) */
	GT_G_GC,	/* the GC's, global across Ps: no G's (GC and stop-the-world start, end) */
};

struct gt_spec {
	const char *name;	/* as Go's parser names it, e.g. "GoStart" */
	uint8_t nargs;		/* arguments after the diff, not counting the stack id */
	uint8_t flags;		/* enum gt_spec_flags */
	uint8_t g;		/* enum gt_g_effect */
	/* 1 + the argument that is a string id (a label, a name, a key); 0: none. */
	uint8_t str_arg;
	/* 1 + the argument that is a stack id besides the trailing one (GoCreate's new
	 * goroutine's); 0: none. */
	uint8_t stk_arg;
};

extern const struct gt_spec gt_specs[GT_EV_COUNT];

/* Values on the wire after the diff: arguments plus the stack id. */
static inline unsigned gt_nvalues(enum gt_type t)
{
	return gt_specs[t].nargs + !!(gt_specs[t].flags & GT_STACK);
}

/* Whether the P's running G blocks until a GoUnblock readies it (Go 1.19's parser moves it
 * to waiting): not a yield or a preemption (runnable at once), nor GoSysBlock (its
 * GoSysExit readies it). */
static inline bool gt_blocks(enum gt_type t)
{
	switch (t) {
	case GT_EV_GO_SLEEP:
	case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_SEND:
	case GT_EV_GO_BLOCK_RECV:
	case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_BLOCK_GC:
		return true;
	default:
		return false;
	}
}

/* Header byte: type in the low 6 bits, in the top 2 the count of values after the first one
 * (the diff, or for untimed events their first argument), 3 meaning length-prefixed. A Stack
 * is always length-prefixed; a String (id, len, bytes) has k = 0, which the parsers ignore. */
static inline uint8_t gt_header_byte(enum gt_type t)
{
	unsigned n;

	if (t == GT_EV_STRING)
		return GT_EV_STRING;
	if (t == GT_EV_STACK)
		return GT_EV_STACK | 3 << 6;
	/* Every other untimed type has at least one value, so this does not wrap. */
	n = gt_nvalues(t) - !!(gt_specs[t].flags & GT_NO_TS);
	return (uint8_t)(t | (n < 3 ? n : 3) << 6);
}

#endif
