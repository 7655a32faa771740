/* startstate.h - the stacks of the threads asleep or waiting for a CPU when a recording
 * starts, read once by the task iterator of bpf/sleepers.bpf.c (its records: bpf/sleepers.h).
 * A thread asleep through the whole recording sends no record, so this is the only stack it
 * gets; one waiting for a CPU is shown waiting at it.
 *
 * Per kernel (features.h): with FEAT_TASK_COPY (5.18+) each stack is the kernel's frames and
 * a copy of the top of the user stack with the registers the thread entered the kernel with,
 * which the daemon walks as a walk BPF stopped at first sight (LX_USTACK_COPY,
 * user/stacks/late_walk.h), with a Python thread's Python frames; without it, or where the
 * kernel refuses that program, the kernel frames alone.
 */
#ifndef LXTRACE_USER_CAPTURE_STARTSTATE_H
#define LXTRACE_USER_CAPTURE_STARTSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"
#include "bpf/python.h"
#include "user/capture/features.h"

struct startstate;

/* The maps of lxtrace.bpf.c's Python walk (bpf/python_walk.bpf.h): the threads user space
 * gave it, read at the start too. */
struct startstate_py {
	int threads_fd, layouts_fd;
};

/* Reads the stacks of the threads tids (those the recording keeps; NULL: every thread) not
 * running now: their kernel frames with kern, a copy of their user stacks with user where f
 * allows, and with the copy the Python frames of the threads py's maps name (py NULL: none).
 * NULL with errno set when no program loads, with the kernel's refusal in why; a refusal of
 * the copying program alone is in why too, with a result. */
struct startstate *startstate__read(const struct features *f, const uint32_t *tids, size_t n,
				    bool kern, bool user, const struct startstate_py *py, char *why,
				    size_t why_size);

/* Thread tid's stack and its size in bytes (a struct lx_stack and what follows it), or NULL
 * when it was running when read (or exited); *runnable when it was waiting for a CPU, not
 * asleep. With py, its Python frames there, or NULL. */
const struct lx_stack *startstate__stack(const struct startstate *s, uint32_t tid,
					 bool *runnable, size_t *size,
					 const struct lx_pystack **py);

/* The stacks read; of which with a copy of the user stack. */
size_t startstate__count(const struct startstate *s, size_t *with_user);

/* Accepts NULL. */
void startstate__free(struct startstate *s);

#endif
