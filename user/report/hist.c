/* hist.c - log-linear histograms over the octaves seen (hist.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/report/hist.h"

/* Values below 16 have a bucket each (row 0); from 16 on, row r holds [2^(r+3), 2^(r+4)). */
static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return (e - 3) * HIST_SUB + (unsigned)((v >> (e - 4)) & (HIST_SUB - 1));
}

/* The smallest value of bucket b, and the width of its bucket. */
static uint64_t bucket_low(unsigned b, uint64_t *width)
{
	unsigned row = b / HIST_SUB, sub = b % HIST_SUB;

	if (row == 0) {
		*width = 1;
		return sub;
	}
	*width = 1ull << (row - 1);
	return (uint64_t)(HIST_SUB + sub) << (row - 1);
}

/* Makes rows [lo, hi) include row r. */
static int cover(struct hist *h, int r)
{
	int lo = h->rows ? (r < h->lo ? r : h->lo) : r;
	int hi = h->rows ? (r + 1 > h->hi ? r + 1 : h->hi) : r + 1;
	uint32_t *n;

	if (h->rows && lo == h->lo && hi == h->hi)
		return 0;
	n = calloc((size_t)(hi - lo) * HIST_SUB, sizeof(*n));
	if (!n)
		return -ENOMEM;
	if (h->rows)
		memcpy(n + (size_t)(h->lo - lo) * HIST_SUB, h->rows,
		       (size_t)(h->hi - h->lo) * HIST_SUB * sizeof(*n));
	free(h->rows);
	h->rows = n;
	h->lo = lo;
	h->hi = hi;
	return 0;
}

int hist__add(struct hist *h, uint64_t v, uint64_t at)
{
	unsigned b = bucket_of(v);
	int err = cover(h, (int)(b / HIST_SUB));

	if (err)
		return err;
	h->rows[b - (unsigned)h->lo * HIST_SUB]++;
	if (!h->count || v < h->min)
		h->min = v;
	if (!h->count || v > h->max) {
		h->max = v;
		h->max_at = at;
	}
	h->count++;
	h->sum += v;
	return 0;
}

uint64_t hist__quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0, width, low, mid;
	unsigned nb;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank >= h->count)
		return h->max;
	nb = (unsigned)(h->hi - h->lo) * HIST_SUB;
	for (unsigned i = 0; i < nb; i++) {
		seen += h->rows[i];
		if (seen < rank)
			continue;
		low = bucket_low((unsigned)h->lo * HIST_SUB + i, &width);
		mid = low + width / 2;
		return mid < h->min ? h->min : mid > h->max ? h->max : mid;
	}
	return h->max;
}

void hist__log2(const struct hist *h, uint64_t out[HIST_LOG2])
{
	unsigned nb = h->rows ? (unsigned)(h->hi - h->lo) * HIST_SUB : 0;

	memset(out, 0, HIST_LOG2 * sizeof(out[0]));
	for (unsigned i = 0; i < nb; i++) {
		uint64_t width, low = bucket_low((unsigned)h->lo * HIST_SUB + i, &width);

		out[low < 2 ? 0 : 63 - __builtin_clzll(low)] += h->rows[i];
	}
}

void hist__free(struct hist *h)
{
	free(h->rows);
	memset(h, 0, sizeof(*h));
}
