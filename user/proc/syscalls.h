/* syscalls.h - syscall numbers: their names, what kind of wait a thread blocked in one is in,
 * and how the recorder marks syscalls in a file: the go1.19 event each kind blocks with, the
 * logs of their returns. The readers of user/events/ take the same rules from here. The name
 * table is generated at build time from the system's asm/unistd header of the build's
 * architecture. */
#ifndef LXTRACE_USER_SYSCALLS_H
#define LXTRACE_USER_SYSCALLS_H

#include <stdbool.h>

#include "format/go119/wire.h"

/* What an interruptible sleep in a syscall waits for (docs/model.md). An uninterruptible one,
 * in any syscall, is the syscall's own work (disk, page cache, kernel locks) and shows as a
 * blocking syscall whatever the class. */
enum syscall_class {
	SYSCALL_CLASS_OTHER = 0,	/* a child, a signal, anything else: GoBlock */
	SYSCALL_CLASS_SYNC,		/* futex: GoBlockSync */
	SYSCALL_CLASS_FD,		/* a file descriptor: poll, epoll, select, sockets, I/O
					 * of pipes, sockets, terminals: GoBlockSelect */
	SYSCALL_CLASS_SLEEP,		/* nanosleep: GoSleep */
	SYSCALL_CLASS_YIELD,		/* sched_yield: GoSched */
};

/* The syscall's name ("futex"), or NULL for a number the build's header does not know. */
const char *syscalls__name(int nr);

/* The number of the syscall named name, or -1. Not for hot paths: a linear search. */
int syscalls__nr(const char *name);

enum syscall_class syscalls__class(int nr);

/* Whether syscall nr exists to wait (for a lock, events on descriptors, a connection, a child,
 * a signal, a time) rather than to ask for work or data: an idle thread spends its life in
 * one, whatever class the trace shows its wait as. */
bool syscalls__waits(int nr);

/* The key of the log that marks a syscall's return in the go1.19 format (--syscalls=all),
 * which has no event for it (docs/format.md §10.3). */
#define LXTRACE_SYSRET_KEY "lxtrace.sysret"
/* The log of lxtrace's goroutine at the start of a recording that has each syscall's entry
 * and return (value "entries and returns"): in the go1.23 format, where a syscall that begins
 * at its entry and one that begins where the thread blocked in it look the same. */
#define LXTRACE_SYSCALLS_KEY "lxtrace.syscalls"

/* The event a thread sleeping (interruptibly) in syscall nr (-1: none) blocks with, for the
 * kind of wait the syscall is (syscalls__class): the recorder's rule for go1.19 files, which a
 * reader of a go1.23 file, whose blocks give the syscall's name, tells as the same event
 * (user/events/events_go123.h). Here, with the classes, so that the offline tools, which need
 * this one rule of the recorder's, link none of its model. */
static inline enum gt_type syscalls__wait_event(int nr)
{
	if (nr < 0)
		return GT_EV_GO_BLOCK;
	/* Waiting for another thread or an event. Not GoBlockNet: both parsers put its unblock
	 * on a fake P with no thread, which 1.23's thread view draws as a thread
	 * 18446744073709551615 (docs/viewing.md). */
	switch (syscalls__class(nr)) {
	case SYSCALL_CLASS_SYNC:
		return GT_EV_GO_BLOCK_SYNC;
	case SYSCALL_CLASS_FD:
		return GT_EV_GO_BLOCK_SELECT;
	case SYSCALL_CLASS_SLEEP:
		return GT_EV_GO_SLEEP;
	default:
		return GT_EV_GO_BLOCK;
	}
}

#endif
