/* fuzz_merge.c - libFuzzer target: the reorder engine (user/capture/merge.h) takes whatever the
 * rings hand it (records of any size and time, torn syscall chunks, loss reports) and its
 * consumer's refusals without a crash, a leak or an out-of-bounds access; it delivers every
 * record it staged exactly once, none later than the delivery's bound, and counts as out of
 * order exactly those older than one delivered before.
 *
 * Input: byte 0 picks the CPUs (1..8) and whether the consumer holds some records (-EBUSY) or
 * fails on some; then operations, each a byte (low two bits the kind, the rest the CPU):
 * 0 a record (u16 size, then its bytes), 1 a loss report (u64 time, u8 count), 2 a delivery up
 * to the watermark at a time (u64), 3 a delivery up to a time (u64). At the end everything is
 * delivered, the consumer taking all. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct consumer {
	bool hold, fail, take_all;
	uint64_t upto;		/* the bound of the delivery under way */
	uint64_t delivered;	/* records and loss reports handed on */
	uint64_t last_ts, out_of_order;	/* as merge.c counts them */
	uint8_t sum;
};

static void order(struct consumer *c, uint64_t ts)
{
	if (ts > c->upto)
		abort();
	if (ts < c->last_ts)
		c->out_of_order++;
	else
		c->last_ts = ts;
	c->delivered++;
}

static int on_record(void *ctx, const struct lx_rec *r, size_t size)
{
	struct consumer *c = ctx;

	if (size < sizeof(*r))
		abort();
	if (!c->take_all && c->hold && (r->tid & 7) == 0)
		return -EBUSY;
	for (size_t i = 0; i < size; i++)	/* every byte readable */
		c->sum += ((const uint8_t *)r)[i];
	order(c, r->ts);
	return !c->take_all && c->fail && (r->tid & 15) == 1 ? -EIO : 0;
}

static int on_lost(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	(void)cpu;
	(void)n;
	order(ctx, ts);
	return 0;
}

static uint64_t take(const uint8_t **p, const uint8_t *end, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && *p < end; i++)
		v |= (uint64_t)*(*p)++ << (8 * i);
	return v;
}

/* Records and loss reports merge__add stages for size bytes at rec. */
static uint64_t staged(const uint8_t *rec, size_t size)
{
	struct lx_syscalls chunk;
	size_t head = offsetof(struct lx_syscalls, e);

	if (size < sizeof(struct lx_rec))
		return 1;	/* dropped, reported lost */
	memcpy(&chunk, rec, size < sizeof(chunk) ? size : sizeof(chunk));
	if (chunk.h.type != LX_REC_SYSCALLS)
		return 1;
	if (size < head || chunk.n > LX_SYSCALLS_MAX || size != head + chunk.n * sizeof(chunk.e[0]))
		return 1;	/* a torn chunk: reported lost */
	return chunk.n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data + 1, *end = data + size;
	struct consumer c = { .upto = UINT64_MAX };
	struct merge_stats st;
	uint64_t expected = 0;
	struct merge *mg;
	uint32_t ncpus;
	int ret;

	if (!size)
		return 0;
	ncpus = 1 + (data[0] & 7);
	c.hold = data[0] & 8;
	c.fail = data[0] & 16;
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = ncpus,
					      .on_record = on_record, .on_lost = on_lost, .ctx = &c });
	if (!mg)
		abort();
	while (p < end) {
		uint8_t op = *p++;
		uint32_t cpu = (uint32_t)(op >> 2) % ncpus;
		size_t len;

		switch (op & 3) {
		case 0: {
			void *rec;

			len = (size_t)take(&p, end, 2);
			if (len > (size_t)(end - p))
				len = (size_t)(end - p);
			/* A copy of its own: a ring's record is aligned and exactly its size. */
			rec = malloc(len ? len : 1);
			if (!rec)
				abort();
			memcpy(rec, p, len);
			ret = merge__add(mg, cpu, rec, len);
			free(rec);
			if (ret)
				abort();
			expected += staged(p, len);
			p += len;
			break;
		}
		case 1: {
			uint64_t ts = take(&p, end, 8);

			if (merge__add_lost(mg, cpu, ts, take(&p, end, 1)))
				abort();
			expected++;
			break;
		}
		case 2:
		case 3:
			c.upto = take(&p, end, 8);
			if ((op & 3) == 2)
				c.upto = merge__watermark(mg, c.upto);
			ret = merge__deliver(mg, c.upto);
			if (ret && ret != -EBUSY && ret != -EIO)
				abort();
			break;
		}
	}
	c.take_all = true;
	c.upto = UINT64_MAX;
	if (merge__deliver(mg, UINT64_MAX))
		abort();
	merge__stats(mg, &st);
	if (c.delivered != expected || st.out_of_order != c.out_of_order || st.records > c.delivered)
		abort();
	/* Nothing left: a second delivery hands on nothing. */
	if (merge__deliver(mg, UINT64_MAX) || c.delivered != expected)
		abort();
	merge__free(mg);
	return 0;
}
