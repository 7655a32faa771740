/* sleepers.h - the threads asleep or waiting for a CPU when a recording starts, as
 * sleepers.bpf.c writes them to its task iterator's output and user/capture/startstate.c reads
 * them: one record per thread, each a struct lx_start and the thread's struct lx_stack
 * (lxtrace.h). The stack has the kernel frames; where the kernel lets BPF read another task's
 * memory (5.18+) no user frames but LX_USTACK_COPY and the copy of the user stack from the
 * registers the thread entered the kernel with, walked by the daemon as a walk BPF stopped at
 * first sight, and for a Python thread the daemon gave the walk, its Python frames
 * (bpf/python.h) at the end. */
#ifndef LXTRACE_BPF_SLEEPERS_H
#define LXTRACE_BPF_SLEEPERS_H

#include "lxtrace.h"
#include "python.h"

struct lx_start {
	__u32 tid;
	__u32 pid;
	__u32 state;	/* the task's state (TASK_INTERRUPTIBLE, ...) when it was read;
			 * LX_START_RUNNABLE: waiting for a CPU */
	__u32 size;	/* of the record, this header and what follows */
	__u32 pysize;	/* the bytes that end the record with the thread's Python frames (a
			 * struct lx_pystack and its frames), 0: none */
	__u32 pad;
};

/* TASK_RUNNING, of a thread not on a CPU. */
#define LX_START_RUNNABLE 0

/* The Python frames at their most. */
#define LX_START_PY_MAX (sizeof(struct lx_pystack) + LX_PY_FRAMES_MAX * sizeof(struct lx_pyframe))

/* The largest record: no user frames, the copy at its longest, the Python frames too. */
#define LX_START_MAX (sizeof(struct lx_start) + sizeof(struct lx_stack) + \
		      LX_STACK_KERN_MAX * 8 + sizeof(struct lx_ucopy) + LX_UCOPY_MAX + \
		      LX_START_PY_MAX)

#endif
