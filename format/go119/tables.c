/* tables.c - the go1.19 writer's string and stack tables as struct gt_tables (tables.h). */
#include "format/go119/tables.h"

static uint64_t w_string(void *ctx, uint32_t p, const char *s)
{
	return gt_writer__string(ctx, p, s);
}

static uint64_t w_stack(void *ctx, uint32_t p, const struct gt_frame *frames, size_t n)
{
	return gt_writer__stack(ctx, p, frames, n);
}

static bool w_live(const void *ctx, bool stack, uint64_t id)
{
	return gt_writer__live(ctx, stack, id);
}

static bool w_current(const void *ctx, bool stack, uint64_t id)
{
	return gt_writer__current(ctx, stack, id);
}

static int w_restack(void *ctx, uint32_t p, uint64_t id, const struct gt_frame *frames, size_t n)
{
	return gt_writer__restack(ctx, p, id, frames, n);
}

static const struct gt_tables_ops writer_ops = { w_string, w_stack, w_live, w_current, w_restack };

void gt_tables__writer(struct gt_tables *out, struct gt_writer *w)
{
	*out = (struct gt_tables){ &writer_ops, w };
}
