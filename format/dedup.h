/* dedup.h - both encoders' string and stack tables: each distinct key is defined once under an
 * id, in memory bounded by a budget however long the trace runs.
 *
 * A trace names a string or a stack by the id of its definition, which the file keeps to its
 * end. The writer must know which keys it has defined, and where (the batch holding a
 * definition goes out before every batch that uses it). Remembering every key for the whole
 * file grows with the file: a machine that starts new processes for hours makes new stacks
 * (new pids, new addresses) for hours. So a table remembers two generations: the keys defined
 * or used in the current one, and those of the previous one. When the current generation
 * holds its budget of bytes, the previous one is forgotten and the current one becomes the
 * previous one; a key that comes back after a whole generation unused is defined again under
 * a new id. Both Go parsers take any number of ids for the same content. The old id stays
 * valid in the file, but callers that keep ids use them again only while the table knows
 * them (gt_dedup__live): so no output after a rotation names what it forgot, and a reader
 * that holds definitions in memory (the flight recorder's, user/flight/flight.h) can drop
 * them too.
 *
 * Where definitions are: the table keeps the location (the writer's batch) of the definitions
 * made in the current generation only. The caller must have written every one of them before
 * gt_dedup__rotate(), so an id the table has no location for is in the file already.
 */
#ifndef LXTRACE_FORMAT_DEDUP_H
#define LXTRACE_FORMAT_DEDUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* No location: the definition is written. */
#define GT_DEDUP_WRITTEN UINT64_MAX

struct gt_dedup;

struct gt_dedup_stats {
	uint64_t defined;	/* ids handed out */
	uint64_t forgotten;	/* keys dropped with a generation (not counting those still in
				 * use, which moved to the next one) */
	uint64_t generations;	/* generations dropped */
	uint64_t bytes;		/* held now, for the budget */
};

/* Ids start above base. budget: bytes of one generation (the table holds about twice that at
 * most). NULL with errno set. */
struct gt_dedup *gt_dedup__new(uint64_t base, size_t budget);

/* The id of key, or 0 when the table does not remember it. A key of the previous generation
 * moves to the current one, while that has room. */
uint64_t gt_dedup__find(struct gt_dedup *d, const void *key, size_t len);

/* The id the next gt_dedup__add gives. */
uint64_t gt_dedup__next(const struct gt_dedup *d);

/* The current generation holds its budget: write every definition made in it, then
 * gt_dedup__rotate() before the next gt_dedup__add(). */
bool gt_dedup__full(const struct gt_dedup *d);
/* Called by gt_dedup__rotate() with each id it forgets for good: find() never gives it again. */
typedef void (*gt_dedup_forgot)(void *ctx, uint64_t id);
void gt_dedup__rotate(struct gt_dedup *d, gt_dedup_forgot forgot, void *ctx);

/* Whether the table still knows id (in either generation), and whether it is in the current
 * one. A caller that keeps an id to use it again asks for it anew by its key unless it is
 * current (find() then moves it to the current generation, same id, or it is defined again):
 * an id the table forgot is one nothing written after the rotation uses, which is what lets
 * a reader of the output forget its definition too. */
bool gt_dedup__live(const struct gt_dedup *d, uint64_t id);
bool gt_dedup__current(const struct gt_dedup *d, uint64_t id);

/* Defines key, which find() did not know, at location loc; returns its id, or 0 with errno =
 * ENOMEM. */
uint64_t gt_dedup__add(struct gt_dedup *d, const void *key, size_t len, uint64_t loc);

/* The location of id's definition, GT_DEDUP_WRITTEN when written already, or -EINVAL when the
 * table never gave id. */
int gt_dedup__loc(const struct gt_dedup *d, uint64_t id, uint64_t *loc);

/* The largest id handed out (base when none). */
uint64_t gt_dedup__max_id(const struct gt_dedup *d);

void gt_dedup__stats(const struct gt_dedup *d, struct gt_dedup_stats *out);

/* Accepts NULL. */
void gt_dedup__free(struct gt_dedup *d);

#endif
