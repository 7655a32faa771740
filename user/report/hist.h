/* hist.h - a distribution of durations in memory that follows its spread, not its count: exact
 * count, sum, min and max (and when the max was), and a log-linear histogram of 16 buckets per
 * power of two (each bucket 1/16 of its octave wide), kept only over the octaves seen. Its
 * quantiles are a bucket's middle, within 1/32 (3%) of the true value; its log2 buckets are
 * exact, as `runqlat` prints them. */
#ifndef LXTRACE_USER_REPORT_HIST_H
#define LXTRACE_USER_REPORT_HIST_H

#include <stdint.h>

#define HIST_SUB 16		/* buckets per power of two */
#define HIST_LOG2 64		/* log2 buckets: [2^k, 2^(k+1)) for k < 64, k = 0 holding 0 and 1 */

struct hist {
	uint64_t count, sum, min, max;
	uint64_t max_at;	/* what hist__add was given with the max (a time) */
	int lo, hi;		/* rows (octaves) held: [lo, hi) */
	uint32_t *rows;		/* (hi - lo) * HIST_SUB counts */
};

/* Adds v (at `at`, kept for the max). 0 or -ENOMEM (the value then counted nowhere). */
int hist__add(struct hist *h, uint64_t v, uint64_t at);

/* The q-quantile (0 <= q <= 1) by rank ceil(q * count); 0 when empty. */
uint64_t hist__quantile(const struct hist *h, double q);

/* Counts in log2 buckets: out[k] for [2^k, 2^(k+1)), out[0] holding 0 and 1. */
void hist__log2(const struct hist *h, uint64_t out[HIST_LOG2]);

/* Frees what it holds and empties it. */
void hist__free(struct hist *h);

#endif
