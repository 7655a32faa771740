/* wire.h - the bytes of the Go 1.22+ execution-trace format ("go 1.23 trace"): event type
 * numbers, the statuses a generation starts with, and the parser's limits (docs/format.md §18).
 * Numbers are the format's; names are lxtrace's. */
#ifndef LXTRACE_FORMAT_V2_WIRE_H
#define LXTRACE_FORMAT_V2_WIRE_H

#include <stdint.h>

/* The header: version 23 admits GoStatusStack (a blocked thread's stack at the start). */
#define GT2_HEADER "go 1.23 trace\0\0\0"
#define GT2_HEADER_LEN 16

enum gt2_type {
	/* Structure: a batch's header, and the per-generation tables. */
	GT2_EV_BATCH = 1,		/* gen, M, base time, size; then size bytes */
	GT2_EV_STACKS = 2,		/* first byte of a stack-table batch */
	GT2_EV_STACK = 3,		/* id, nframes, nframes x (pc, func sid, file sid, line) */
	GT2_EV_STRINGS = 4,		/* first byte of a string-table batch */
	GT2_EV_STRING = 5,		/* id, length, bytes */
	GT2_EV_CPU_SAMPLES = 6,		/* first byte of a CPU-sample batch */
	GT2_EV_CPU_SAMPLE = 7,		/* absolute time, M, P, G, stack */
	GT2_EV_FREQUENCY = 8,		/* ticks per second: the only event of its batch */
	/* Timed events: a time delta, then these arguments. */
	GT2_EV_PROCS_CHANGE = 9,	/* procs, stack */
	GT2_EV_PROC_START = 10,		/* P, P seq */
	GT2_EV_PROC_STOP = 11,		/* - */
	GT2_EV_PROC_STEAL = 12,		/* P, P seq, M it is taken from */
	GT2_EV_PROC_STATUS = 13,	/* P, status */
	GT2_EV_GO_CREATE = 14,		/* new G, its stack, stack */
	GT2_EV_GO_CREATE_SYSCALL = 15,	/* new G, born in a syscall on this M */
	GT2_EV_GO_START = 16,		/* G, G seq */
	GT2_EV_GO_DESTROY = 17,		/* - */
	GT2_EV_GO_DESTROY_SYSCALL = 18,	/* - */
	GT2_EV_GO_STOP = 19,		/* reason sid, stack */
	GT2_EV_GO_BLOCK = 20,		/* reason sid, stack */
	GT2_EV_GO_UNBLOCK = 21,		/* G, G seq, stack */
	GT2_EV_GO_SYSCALL_BEGIN = 22,	/* P seq, stack */
	GT2_EV_GO_SYSCALL_END = 23,	/* - */
	GT2_EV_GO_SYSCALL_END_BLOCKED = 24,	/* - */
	GT2_EV_GO_STATUS = 25,		/* G, M, status */
	GT2_EV_STW_BEGIN = 26,		/* kind sid, stack */
	GT2_EV_STW_END = 27,		/* - */
	GT2_EV_GC_ACTIVE = 28,		/* GC seq */
	GT2_EV_GC_BEGIN = 29,		/* GC seq, stack */
	GT2_EV_GC_END = 30,		/* GC seq */
	GT2_EV_GC_SWEEP_ACTIVE = 31,	/* P */
	GT2_EV_GC_SWEEP_BEGIN = 32,	/* stack */
	GT2_EV_GC_SWEEP_END = 33,	/* swept, reclaimed */
	GT2_EV_GC_MARK_ASSIST_ACTIVE = 34,	/* G */
	GT2_EV_GC_MARK_ASSIST_BEGIN = 35,	/* stack */
	GT2_EV_GC_MARK_ASSIST_END = 36,	/* - */
	GT2_EV_HEAP_ALLOC = 37,		/* bytes */
	GT2_EV_HEAP_GOAL = 38,		/* bytes */
	GT2_EV_GO_LABEL = 39,		/* label sid */
	GT2_EV_USER_TASK_BEGIN = 40,	/* task, parent task, name sid, stack */
	GT2_EV_USER_TASK_END = 41,	/* task, stack */
	GT2_EV_USER_REGION_BEGIN = 42,	/* task, name sid, stack */
	GT2_EV_USER_REGION_END = 43,	/* task, name sid, stack */
	GT2_EV_USER_LOG = 44,		/* task, key sid, value sid, stack */
	GT2_EV_GO_SWITCH = 45,		/* G, G seq */
	GT2_EV_GO_SWITCH_DESTROY = 46,	/* G, G seq */
	GT2_EV_GO_CREATE_BLOCKED = 47,	/* new G, its stack, stack */
	GT2_EV_GO_STATUS_STACK = 48,	/* G, M, status, stack */
};

/* A goroutine's status in GoStatus (and the encoder's state of a thread). */
enum gt2_gstatus {
	GT2_G_RUNNABLE = 1,
	GT2_G_RUNNING = 2,
	GT2_G_SYSCALL = 3,
	GT2_G_WAITING = 4,
	GT2_G_STATUSES		/* Go 1.23 refuses a status from here on */
};

/* A P's status in ProcStatus. */
enum gt2_pstatus {
	GT2_P_RUNNING = 1,
	GT2_P_IDLE = 2,
	GT2_P_SYSCALL = 3,
	GT2_P_SYSCALL_ABANDONED = 4,	/* its M left it in a syscall and went away */
	GT2_P_STATUSES
};

/* A GoBlock's reason begins with one of these, then ": ", for the waits Go 1.19 calls
 * GoBlockSync and GoBlockSelect: Go 1.23 reads those 1.19 events as reasons "sync" and
 * "select", and its block profile takes a wait whose reason holds either. */
#define GT2_REASON_SYNC "sync"
#define GT2_REASON_SELECT "select"

/* No M: the batch of a generation's tables and of statuses bound to no thread. */
#define GT2_NO_THREAD UINT64_MAX

/* Go 1.23's parser refuses more. */
#define GT2_MAX_BATCH (64u << 10)	/* bytes after a batch's header */
#define GT2_MAX_FRAMES 128
#define GT2_MAX_STRING 1024

#endif
