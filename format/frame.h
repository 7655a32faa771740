/* frame.h - what both encoders take from the stack makers (user/stacks/): a frame, the
 * longest stack both Go parsers of either format accept, and the default budget of a
 * bounded string or stack table (dedup.h). Kept apart from either writer so that a format's
 * folder needs nothing of the other's. */
#ifndef LXTRACE_FORMAT_FRAME_H
#define LXTRACE_FORMAT_FRAME_H

#include <stdint.h>

/* Both parsers refuse a stack of more frames than this. */
#define GT_MAX_STACK_FRAMES 1000

/* A generation of stacks of ~15 frames (~200 bytes each) is ~20,000 stacks. */
#define GT_WRITER_TABLE_BUDGET (4u << 20)

/* One symbolized frame. Strings are copied (interned) by the writer. */
struct gt_frame {
	uint64_t pc;
	const char *func;
	const char *file;
	uint64_t line;
};

#endif
