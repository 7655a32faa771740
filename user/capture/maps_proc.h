/* maps_proc.h - what a kernel without the VMA iterator (before 6.7) cannot tell BPF: a
 * process's code mappings, read from /proc/PID/maps by user space instead.
 *
 * The BPF side asks (LX_REC_MAPS_WANT) whenever a traced process's code changes (its mmap
 * lock released with mm->exec_vm not what was asked last), and once per process at the
 * start; on kernels without even the mmap_lock tracepoints (before 5.11) an exec is the
 * ask. Requests are gathered while the rings are read and answered once per process and
 * round: one read of its maps fills the unwinder's table for it (when the unwinder runs in BPF)
 * and reports each mapping not reported before as an LX_REC_MMAP record, stamped with the
 * request's time, into the record stream, as the kernel-side tables would have. The
 * consumers (symbolizer, row loader) cannot tell the difference, but for the delay: stacks
 * taken between a change and its answer stop at the new code.
 */
#ifndef LXTRACE_USER_CAPTURE_MAPS_PROC_H
#define LXTRACE_USER_CAPTURE_MAPS_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"

/* Puts a record made here into CPU cpu's stream, as if read from its ring. */
typedef int (*maps_proc_emit_fn)(void *ctx, uint32_t cpu, const void *rec, size_t size);

struct maps_proc_opts {
	size_t sz;			/* sizeof(struct maps_proc_opts) */
	const char *proc_root;		/* "/proc", or a test's fake */
	int tables_fd;			/* proc_maps, the unwinder's tables; -1: none to fill */
	volatile uint64_t *versions;	/* pmaps_vers[LX_PMAPS_VERS], bumped after each table */
	maps_proc_emit_fn emit;
	void *ctx;
};

struct maps_proc_stats {
	uint64_t asked, answered, gone, reported;
};

struct maps_proc;

/* NULL with errno set. */
struct maps_proc *maps_proc__new(const struct maps_proc_opts *o);

/* A request read from cpu's ring: kept until maps_proc__answer. 0 or -ENOMEM. */
int maps_proc__want(struct maps_proc *mp, const struct lx_maps_want *w);

/* An exec on a kernel that reports no later change: its process's mappings are read at the
 * next answer, and reported as a snapshot (LX_MMAP_SNAPSHOT). 0 or -ENOMEM. */
int maps_proc__exec(struct maps_proc *mp, const struct lx_exec *e);

/* Process pid is gone: what was reported of it is forgotten. */
void maps_proc__gone(struct maps_proc *mp, uint32_t pid);

/* Answers every request kept: one read of /proc/PID/maps per process. 0, or the first
 * negative return of emit or of the table update. */
int maps_proc__answer(struct maps_proc *mp);

void maps_proc__stats(const struct maps_proc *mp, struct maps_proc_stats *out);

/* Accepts NULL. */
void maps_proc__free(struct maps_proc *mp);

#endif
