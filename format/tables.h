/* tables.h - where stacks and strings get the ids that events name them by, behind one
 * interface, so that the stack makers (user/stacks/) and the model serve either encoder: the
 * go1.19 writer's own tables (format/go119/tables.h), which define each string and stack in the
 * batch of the P passed, or the content table of format/go123/tables.h, which keeps each by id
 * for the go1.23 writer, which takes stacks and strings by content.
 *
 * Both hand out ids > 0 (0 with errno set on failure), and both forget what a generation of
 * theirs left unused: a caller that keeps an id uses it again only while it is current, and
 * asks for it anew otherwise (format/dedup.h).
 */
#ifndef LXTRACE_FORMAT_TABLES_H
#define LXTRACE_FORMAT_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/frame.h"

struct gt_tables_ops {
	uint64_t (*string)(void *ctx, uint32_t p, const char *s);
	uint64_t (*stack)(void *ctx, uint32_t p, const struct gt_frame *frames, size_t n);
	bool (*live)(const void *ctx, bool stack, uint64_t id);
	bool (*current)(const void *ctx, bool stack, uint64_t id);
	int (*restack)(void *ctx, uint32_t p, uint64_t id, const struct gt_frame *frames, size_t n);
};

struct gt_tables {
	const struct gt_tables_ops *ops;
	void *ctx;
};

/* s (non-empty) for an event on P p. */
static inline uint64_t gt_tables__string(const struct gt_tables *t, uint32_t p, const char *s)
{
	return t->ops->string(t->ctx, p, s);
}

/* A stack, leaf first (1 <= n <= GT_MAX_STACK_FRAMES), for an event on P p; the 1.19
 * writer's can fail with E2BIG (format/go119/writer.h). */
static inline uint64_t gt_tables__stack(const struct gt_tables *t, uint32_t p,
					const struct gt_frame *frames, size_t n)
{
	return t->ops->stack(t->ctx, p, frames, n);
}

static inline bool gt_tables__live(const struct gt_tables *t, bool stack, uint64_t id)
{
	return t->ops->live(t->ctx, stack, id);
}

static inline bool gt_tables__current(const struct gt_tables *t, bool stack, uint64_t id)
{
	return t->ops->current(t->ctx, stack, id);
}

/* Defines stack id again as frames, for every event that names it (format/go119/writer.h,
 * gt_writer__restack); 0, or -ENOTSUP where the encoder cannot (go1.23: a generation's stack
 * table is final once written), or a negative errno. */
static inline int gt_tables__restack(const struct gt_tables *t, uint32_t p, uint64_t id,
				     const struct gt_frame *frames, size_t n)
{
	return t->ops->restack(t->ctx, p, id, frames, n);
}

#endif
