/* late_walk.h - finishes in the daemon the user-stack walks BPF had to stop (LX_USTACK_COPY):
 * at a frame of a file whose unwind rows were not loaded yet, or in a process without a mapping
 * table. The record carries that frame's registers and a copy of the stack above it (struct
 * lx_ucopy); the walk goes on over the copy with the same rows and the same rules as
 * bpf/unwind.bpf.h, taking the mappings from the symbolizer and the rows from the loader, once
 * it has them. The copy is sent only at first sight, so the common path keeps its cost
 * (docs/stacks.md, "First sight").
 */
#ifndef LXTRACE_USER_STACKS_LATE_WALK_H
#define LXTRACE_USER_STACKS_LATE_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/lxtrace.h"

struct symbolizer;
struct cfi_loader;

/* Why a finished walk still ends early (it is then marked truncated). */
enum late_walk_end {
	LATE_WALK_WHOLE = 0,	/* it reached the outermost frame */
	LATE_WALK_NOT_CODE,	/* a frame that cannot be code, or a step that does not rise */
	LATE_WALK_COPY_SHORT,	/* the next frame is above the copied part of the stack */
	LATE_WALK_NO_ROWS,	/* a file's rows did not come in time (or could not be read) */
	LATE_WALK_DEEP,		/* LX_STACK_USER_MAX frames */
};

struct late_walk {
	struct symbolizer *sym;
	struct cfi_loader *cfi;		/* NULL: no rows (frame pointers only) */
	uint64_t proc;			/* the process image (symbolize.h) */
};

/* Walks on from c's frame, appending frames (LX_PC_EXACT on an interrupted instruction) to
 * pcs[*n..LX_STACK_USER_MAX). With wait, returns -EAGAIN as soon as it meets a file whose rows
 * are not there yet (asking the loader for them, first in its queue); without, such a file ends
 * the walk. Otherwise 0 with how it ended in *end. */
int late_walk__finish(const struct late_walk *lw, const struct lx_ucopy *c, uint64_t *pcs,
		      unsigned *n, bool wait, enum late_walk_end *end);

#endif
