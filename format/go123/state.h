/* state.h - the scheduler state of a go1.23 trace ("go 1.23 trace") followed as Go 1.23's
 * reader follows it, so that what it refuses is refused here too (docs/format.md §18.11).
 *
 * Go 1.23 orders a generation's events across its Ms: each M's batches are read in file order,
 * the M whose next event is earliest goes first, and an event whose state is not there yet
 * (a GoStart before the GoUnblock that makes its goroutine runnable, a ProcStart before the
 * P's steal) waits while the other Ms go on. The tracker does the same and checks every event
 * against the goroutines', Ps', Ms' states, their sequence numbers, the GC's, the ranges and
 * regions in flight and the tasks alive, and refuses the generation with the first error, or
 * when no M can go on. The state carries from one generation to the next, as Go's does.
 *
 * Where Go leaves a choice to chance (Ms whose next events have the same time are tried in its
 * map's random order) the tracker tries the lower M first; region names are compared by a
 * 64-bit hash of their bytes and their length, not the bytes.
 *
 * Memory: per goroutine, P, M and task alive, their regions and ranges, at most the budget
 * given (then -EFBIG); per generation, a cursor per M and an index of its batches.
 */
#ifndef LXTRACE_FORMAT_GO123_STATE_H
#define LXTRACE_FORMAT_GO123_STATE_H

#include <stddef.h>
#include <stdint.h>

/* One event batch of the generation, in file order. */
struct go123_state_batch {
	uint64_t m;		/* GO123_NO_THREAD: none */
	uint64_t base;		/* its time, ticks */
	uint64_t body;		/* file offset of its first event */
	const uint8_t *data;	/* its events, decodable (the reader has checked them) */
	size_t len;
};

/* String id of the generation: its bytes and length, NULL when not defined. */
typedef const char *go123_state_string_fn(void *ctx, uint64_t id, size_t *len);

struct go123_state;

#define GO123_STATE_BUDGET (64u << 20)

/* budget: bytes the state may take; 0: GO123_STATE_BUDGET. NULL with errno set on failure. */
struct go123_state *go123_state__new(size_t budget);

/* Orders generation gen's batches b[0..nb) at freq ticks per second and checks every event: 0,
 * or -EINVAL (Go 1.23 refuses the generation), -EFBIG (over the budget), -ENOMEM, with one line
 * naming the byte offset and the cause in msg. The state is then past the generation; after an
 * error it is not to be used again. */
int go123_state__generation(struct go123_state *s, uint64_t gen, uint64_t freq,
			  const struct go123_state_batch *b, size_t nb, go123_state_string_fn *str,
			  void *ctx, char *msg, size_t msglen);

/* Accepts NULL. */
void go123_state__free(struct go123_state *s);

#endif
