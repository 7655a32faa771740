/* window.h - the flight recorder's memory: the latest batches of a trace, in the order they
 * were written, held encoded within a fixed number of bytes.
 *
 * A batch is kept exactly as it would stand in a file (Batch header, then its records). When
 * a new batch does not fit, or the oldest batch ends more than `span` ticks before the newest
 * one, the oldest batches go, in order, each handed to the evict callback first: whoever keeps
 * the state of the trace at the window's start (the state tracker) reads them there. So the
 * batches held, read after that state, are always a valid continuation of the trace.
 *
 * Memory: `bytes` is the whole budget (each batch costs its length plus a 24-byte note, rounded
 * up to 8 bytes, and the end of the ring is padded where a batch does not fit) and is never
 * exceeded. Every batch is contiguous. The pages are private: a process forked to write a file
 * from the window sees it as it was. Pages of evicted batches are given back to the kernel in
 * chunks, so the process's memory follows the bytes held, not the budget.
 */
#ifndef LXTRACE_FORMAT_WINDOW_H
#define LXTRACE_FORMAT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_window;

struct gt_window_batch {
	const uint8_t *data;	/* the batch as in a file; valid until the next push */
	size_t len;
	uint32_t p;
	uint64_t first_ts, last_ts;	/* ticks of its first and last event */
};

/* Sees batch b leave the window (oldest first); 0 or a negative errno, which the push that
 * evicted it returns and which fails the window for good. */
typedef int (*gt_window_evict_fn)(void *ctx, const struct gt_window_batch *b);

struct gt_window_opts {
	size_t sz;		/* sizeof(struct gt_window_opts) */
	size_t bytes;		/* the budget: a multiple of the page size */
	uint64_t span;		/* ticks kept behind the newest batch's end; 0: no time limit */
	gt_window_evict_fn evict;	/* may be NULL */
	void *ctx;
};

struct gt_window_stats {
	uint64_t bytes;		/* held now, notes included: never above the budget */
	uint64_t peak_bytes;
	uint64_t batches;	/* held now */
	uint64_t pushed;	/* batches since the start */
	uint64_t evicted;
	uint64_t evicted_bytes;	/* batch bytes only */
	uint64_t oversize;	/* batches larger than the budget, evicted as they came */
	uint64_t resident;	/* memory the ring's pages take now */
};

/* NULL with errno set (EINVAL for a budget that is not a positive multiple of the page
 * size). */
struct gt_window *gt_window__new(const struct gt_window_opts *opts);

/* Adds the batch made of hdr then body, written on P p with events from first_ts to last_ts,
 * after evicting what it needs. A batch larger than the whole budget evicts everything, then
 * itself. Returns 0 or the sticky negative errno of a failed eviction. */
int gt_window__push(struct gt_window *w, uint32_t p, uint64_t first_ts, uint64_t last_ts,
		    const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen);

/* The held batches, oldest first: start with *pos = 0; false after the last. Pushing while
 * iterating invalidates pos. */
bool gt_window__next(const struct gt_window *w, uint64_t *pos, struct gt_window_batch *b);

void gt_window__stats(const struct gt_window *w, struct gt_window_stats *out);

/* Accepts NULL. Held batches are dropped without the callback. */
void gt_window__free(struct gt_window *w);

#endif
