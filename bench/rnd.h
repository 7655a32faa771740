/* rnd.h - the benchmarks' fixed-seed xorshift generator: the same workload every run. */
#ifndef LXTRACE_BENCH_RND_H
#define LXTRACE_BENCH_RND_H

static unsigned long long rnd_state = 88172645463325252ULL;

/* A pseudo-random number in [0, n). */
static inline unsigned rnd(unsigned n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (unsigned)(rnd_state % n);
}

#endif
