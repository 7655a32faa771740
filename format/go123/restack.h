/* restack.h - a go1.23 trace copied with some of its stacks named again.
 *
 * A go1.19 file can define a stack id again at its end, and the parsers take the last
 * definition for every event (format/go119/writer.h, gt_writer__restack). A go1.23 file cannot:
 * each generation has its own stack table, in the file for good once the generation ends. So
 * the recorder's JIT frames named at its stop (docs/symbolize.md, "Maps written after the
 * stacks") reach a go1.23 file by a copy of it: each generation is read whole, each entry of
 * its stack tables that the caller names anew is written with those frames, and the strings
 * they name that the generation lacks are added to it, in a string table batch of their own
 * at the generation's end. Everything else is copied as it is.
 *
 * Memory: one generation of the input (the writer held it in memory too, gen_bytes) and its
 * strings' index.
 */
#ifndef LXTRACE_FORMAT_GO123_RESTACK_H
#define LXTRACE_FORMAT_GO123_RESTACK_H

#include <stddef.h>
#include <stdint.h>

#include "format/frame.h"

/* The frames the stack written as pcs[0, n) is to have now (n of them), or NULL to keep it. */
typedef const struct gt_frame *(*go123_restack_fn)(void *ctx, const uint64_t *pcs, size_t n);

struct go123_restack_stats {
	uint64_t generations;	/* copied */
	uint64_t stacks;	/* table entries written with new frames */
	uint64_t strings;	/* strings added for them */
};

/* Copies the trace read from in (at its start) to out, stacks named again by fn. 0, or a
 * negative errno with a one-line reason in err (-EINVAL: the input is no whole go1.23
 * trace as lxtrace writes them). */
int go123_restack__copy(int in, int out, go123_restack_fn fn, void *ctx,
		      struct go123_restack_stats *st, char *err, size_t errlen);

#endif
