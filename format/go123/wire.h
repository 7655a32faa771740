/* wire.h - the bytes of the go1.23 execution-trace format ("go 1.23 trace"): event type
 * numbers, the statuses a generation starts with, and the parser's limits (docs/format.md §18).
 * Numbers are the format's; names are lxtrace's. */
#ifndef LXTRACE_FORMAT_GO123_WIRE_H
#define LXTRACE_FORMAT_GO123_WIRE_H

#include <stdint.h>

/* The header: version 23 admits GoStatusStack (a blocked thread's stack at the start). */
#define GO123_HEADER "go 1.23 trace\0\0\0"
#define GO123_HEADER_LEN 16

enum go123_type {
	/* Structure: a batch's header, and the per-generation tables. */
	GO123_EV_BATCH = 1,		/* gen, M, base time, size; then size bytes */
	GO123_EV_STACKS = 2,		/* first byte of a stack-table batch */
	GO123_EV_STACK = 3,		/* id, nframes, nframes x (pc, func sid, file sid, line) */
	GO123_EV_STRINGS = 4,		/* first byte of a string-table batch */
	GO123_EV_STRING = 5,		/* id, length, bytes */
	GO123_EV_CPU_SAMPLES = 6,		/* first byte of a CPU-sample batch */
	GO123_EV_CPU_SAMPLE = 7,		/* absolute time, M, P, G, stack */
	GO123_EV_FREQUENCY = 8,		/* ticks per second: the only event of its batch */
	/* Timed events: a time delta, then these arguments. */
	GO123_EV_PROCS_CHANGE = 9,	/* procs, stack */
	GO123_EV_PROC_START = 10,		/* P, P seq */
	GO123_EV_PROC_STOP = 11,		/* - */
	GO123_EV_PROC_STEAL = 12,		/* P, P seq, M it is taken from */
	GO123_EV_PROC_STATUS = 13,	/* P, status */
	GO123_EV_GO_CREATE = 14,		/* new G, its stack, stack */
	GO123_EV_GO_CREATE_SYSCALL = 15,	/* new G, born in a syscall on this M */
	GO123_EV_GO_START = 16,		/* G, G seq */
	GO123_EV_GO_DESTROY = 17,		/* - */
	GO123_EV_GO_DESTROY_SYSCALL = 18,	/* - */
	GO123_EV_GO_STOP = 19,		/* reason sid, stack */
	GO123_EV_GO_BLOCK = 20,		/* reason sid, stack */
	GO123_EV_GO_UNBLOCK = 21,		/* G, G seq, stack */
	GO123_EV_GO_SYSCALL_BEGIN = 22,	/* P seq, stack */
	GO123_EV_GO_SYSCALL_END = 23,	/* - */
	GO123_EV_GO_SYSCALL_END_BLOCKED = 24,	/* - */
	GO123_EV_GO_STATUS = 25,		/* G, M, status */
	GO123_EV_STW_BEGIN = 26,		/* kind sid, stack */
	GO123_EV_STW_END = 27,		/* - */
	GO123_EV_GC_ACTIVE = 28,		/* GC seq */
	GO123_EV_GC_BEGIN = 29,		/* GC seq, stack */
	GO123_EV_GC_END = 30,		/* GC seq */
	GO123_EV_GC_SWEEP_ACTIVE = 31,	/* P */
	GO123_EV_GC_SWEEP_BEGIN = 32,	/* stack */
	GO123_EV_GC_SWEEP_END = 33,	/* swept, reclaimed */
	GO123_EV_GC_MARK_ASSIST_ACTIVE = 34,	/* G */
	GO123_EV_GC_MARK_ASSIST_BEGIN = 35,	/* stack */
	GO123_EV_GC_MARK_ASSIST_END = 36,	/* - */
	GO123_EV_HEAP_ALLOC = 37,		/* bytes */
	GO123_EV_HEAP_GOAL = 38,		/* bytes */
	GO123_EV_GO_LABEL = 39,		/* label sid */
	GO123_EV_USER_TASK_BEGIN = 40,	/* task, parent task, name sid, stack */
	GO123_EV_USER_TASK_END = 41,	/* task, stack */
	GO123_EV_USER_REGION_BEGIN = 42,	/* task, name sid, stack */
	GO123_EV_USER_REGION_END = 43,	/* task, name sid, stack */
	GO123_EV_USER_LOG = 44,		/* task, key sid, value sid, stack */
	GO123_EV_GO_SWITCH = 45,		/* G, G seq */
	GO123_EV_GO_SWITCH_DESTROY = 46,	/* G, G seq */
	GO123_EV_GO_CREATE_BLOCKED = 47,	/* new G, its stack, stack */
	GO123_EV_GO_STATUS_STACK = 48,	/* G, M, status, stack */
};

/* A goroutine's status in GoStatus (and the encoder's state of a thread). */
enum go123_gstatus {
	GO123_G_RUNNABLE = 1,
	GO123_G_RUNNING = 2,
	GO123_G_SYSCALL = 3,
	GO123_G_WAITING = 4,
	GO123_G_STATUSES		/* Go 1.23 refuses a status from here on */
};

/* A P's status in ProcStatus. */
enum go123_pstatus {
	GO123_P_RUNNING = 1,
	GO123_P_IDLE = 2,
	GO123_P_SYSCALL = 3,
	GO123_P_SYSCALL_ABANDONED = 4,	/* its M left it in a syscall and went away */
	GO123_P_STATUSES
};

/* A GoBlock's reason begins with one of these, then ": ", for the waits Go 1.19 calls
 * GoBlockSync and GoBlockSelect: Go 1.23 reads those go1.19 events as reasons "sync" and
 * "select", and its block profile takes a wait whose reason holds either. */
#define GO123_REASON_SYNC "sync"
#define GO123_REASON_SELECT "select"

/* No M: the batch of a generation's tables and of statuses bound to no thread. */
#define GO123_NO_THREAD UINT64_MAX

/* Go 1.23's parser refuses more. */
#define GO123_MAX_BATCH (64u << 10)	/* bytes after a batch's header */
#define GO123_MAX_FRAMES 128
#define GO123_MAX_STRING 1024

#endif
