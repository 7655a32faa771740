/* maps_proc.h - what a kernel without the VMA iterator (before 6.7) cannot tell BPF: a
 * process's code mappings, read from /proc/PID/maps by user space instead.
 *
 * The BPF side asks (LX_REC_MAPS_WANT, in a ring of its own) whenever a traced process's code
 * changes (its mmap lock released with mm->exec_vm not what was asked last), and once per
 * process at the start; on kernels without even the mmap_lock tracepoints (before 5.11) an
 * exec record is the ask. A thread of its own waits on that ring and answers: once per process
 * and wakeup, one read of its maps fills the unwinder's table for it (when the unwinder runs in
 * BPF) and makes an LX_REC_MMAP record of each mapping not reported before, stamped with the
 * request's time, as the kernel-side tables would have reported it. The reader puts those into
 * the record stream (maps_proc__flush), holding the records after an open ask back until its
 * answer is in (maps_proc__oldest_open; at most a quarter of a second), so the consumers (symbolizer,
 * row loader) cannot tell the difference but for the delay: BPF's walks between a change and
 * its answer stop at the new code and are finished from their copies with the answer's
 * mappings. A process that exits before its maps are read has none left: counted gone. The thread is also what waits when a process's maps cannot be read at once (its
 * mmap lock held by a stalled fault): the recording goes on.
 */
#ifndef LXTRACE_USER_CAPTURE_MAPS_PROC_H
#define LXTRACE_USER_CAPTURE_MAPS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"

/* Puts a record made here into CPU cpu's stream, as if read from its ring. */
typedef int (*maps_proc_emit_fn)(void *ctx, uint32_t cpu, const void *rec, size_t size);

struct maps_proc_opts {
	size_t sz;			/* sizeof(struct maps_proc_opts) */
	const char *proc_root;		/* "/proc", or a test's fake */
	int ring_fd;			/* maps_ring, the asks; -1: only execs ask */
	int tables_fd;			/* proc_maps, the unwinder's tables; -1: none to fill */
	volatile uint64_t *versions;	/* pmaps_vers[LX_PMAPS_VERS], bumped after each table */
	maps_proc_emit_fn emit;		/* called by maps_proc__flush only */
	void *ctx;
};

struct maps_proc_stats {
	uint64_t asked;			/* requests (each a process whose code changed) */
	uint64_t answered;		/* reads of /proc/PID/maps */
	uint64_t gone;			/* processes gone before the answer (reaped, or exited:
					 * no mapping left) */
	uint64_t reported;		/* mappings made into LX_REC_MMAP records */
	uint64_t tables_full;		/* tables the unwinder's map had no room for */
};

struct maps_proc;

/* Starts the answering thread. NULL with errno set. */
struct maps_proc *maps_proc__new(const struct maps_proc_opts *o);

/* An exec on a kernel that reports no later change: its process's mappings are read at once,
 * and reported as a snapshot (LX_MMAP_SNAPSHOT). 0 or -ENOMEM. */
int maps_proc__exec(struct maps_proc *mp, const struct lx_exec *e);

/* Hands the records answered since the last call to emit, on the caller's thread. 0, or the
 * first negative return of emit. */
int maps_proc__flush(struct maps_proc *mp);

/* The time of the oldest ask whose answer maps_proc__flush has not handed on yet (UINT64_MAX:
 * none), and in *unread whether the ring holds asks the thread has not read yet (their times
 * unknown). The answers are stamped with their asks' times, so the records after an ask wait
 * for its answer to come in order (capture.c). */
uint64_t maps_proc__oldest_open(struct maps_proc *mp, bool *unread);

void maps_proc__stats(struct maps_proc *mp, struct maps_proc_stats *out);

/* Stops the thread. Accepts NULL. */
void maps_proc__free(struct maps_proc *mp);

#endif
