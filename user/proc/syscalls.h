/* syscalls.h - syscall numbers: their names, and what kind of wait a thread blocked in one is
 * in (the model decides how each kind shows in the trace). The name table is generated at build
 * time from the system's asm/unistd header of the build's architecture. */
#ifndef LXTRACE_USER_SYSCALLS_H
#define LXTRACE_USER_SYSCALLS_H

#include <stdbool.h>

/* What an interruptible sleep in a syscall waits for (docs/model.md). An uninterruptible one,
 * in any syscall, is the syscall's own work (disk, page cache, kernel locks) and shows as a
 * blocking syscall whatever the class. */
enum syscall_class {
	SYSCALL_CLASS_OTHER = 0,	/* a child, a signal, anything else: GoBlock */
	SYSCALL_CLASS_SYNC,		/* futex: GoBlockSync */
	SYSCALL_CLASS_FD,		/* a file descriptor: poll, epoll, select, sockets, and reads
					 * and writes of pipes, sockets, terminals: GoBlockSelect */
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

#endif
