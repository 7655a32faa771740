/* procscan.h - the threads alive now, read from /proc (or a directory laid out like it):
 * tid, process, name, scheduler state and the syscall a sleeping thread is blocked in; and a
 * process's resident memory. */
#ifndef LXTRACE_USER_PROCSCAN_H
#define LXTRACE_USER_PROCSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"

struct procscan_thread {
	uint32_t tid;
	uint32_t pid;			/* thread group id */
	char comm[LX_COMM_LEN];		/* the thread's name, NUL-terminated */
	char program[LX_COMM_LEN];	/* the process's (PID/comm), "" when unreadable */
	char state;			/* from stat: 'R', 'S', 'D', 'T', 'Z', 'I', ... */
	int32_t syscall;		/* syscall it blocks in; -1: running, none, unreadable */
};

/* Every thread under proc_root, sorted by tid, in *out (malloc'd, the caller frees it) and *n.
 * Threads that vanish during the scan are left out. Returns 0 or a negative errno (proc_root
 * unreadable, out of memory). */
int procscan__threads(const char *proc_root, struct procscan_thread **out, size_t *n);

/* Reads one thread by tid (found under proc_root/TID even when it is not a group leader).
 * Returns 0 or a negative errno (-ENOENT when it is gone). */
int procscan__thread(const char *proc_root, uint32_t tid, struct procscan_thread *out);

/* Resident pages of process pid: statm's second field (file + anon + shmem, as the rss_stat
 * tracepoint counts them). 0 when it cannot be read. */
uint64_t procscan__resident(const char *proc_root, uint32_t pid);

#endif
