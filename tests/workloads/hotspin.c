/* hotspin.c - CPU-bound code whose sampled stacks the tests know in advance. Built with -O1 -g
 * -fno-omit-frame-pointer, as every workload is.
 *
 *   hotspin chain MS   spins for MS ms in main -> hot_outer -> hot_middle -> hot_inner, the
 *                      last one inlined into hot_middle: nearly every sample is that chain
 *   hotspin split MS   spins for MS ms, 90% of the time in work_a and 10% in work_b
 *   ... MS cpu         MS ms of its own CPU time, not of the clock: as many samples however
 *                      busy the machine (a test's count of them), where the clock's MS give
 *                      fewer the more other work shares the CPU (a benchmark's rounds)
 *
 * Reports the source lines a correct symbolization gives: inner_lo..inner_hi (hot_inner's
 * loop), middle_call (hot_middle's call of hot_inner), outer_call (hot_outer's call of
 * hot_middle).
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "workload.h"

#define ROUND 200000	/* iterations between clock reads: the clock stays out of the samples */

/* One step of a generator: code the compiler cannot drop or fold. */
#define STEP(acc) ((acc) * 6364136223846793005ul + 1442695040888963407ul)

static const int inner_lo = __LINE__ + 3;
static inline __attribute__((always_inline)) unsigned long hot_inner(unsigned long acc)
{
	for (int i = 0; i < ROUND; i++) {
		acc = STEP(acc);
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}
static const int inner_hi = __LINE__ - 2;

static volatile unsigned long rounds;

/* Keeps hot_middle from being a leaf: GCC 12 gives leaf functions no frame pointer even with
 * -fno-omit-frame-pointer (-mno-omit-leaf-frame-pointer is ignored), and a sample in a
 * frameless leaf loses its caller in a frame-pointer walk. */
__attribute__((noinline)) static void count_round(void)
{
	rounds++;
}

static const int middle_call = __LINE__ + 3;
__attribute__((noinline)) static unsigned long hot_middle(unsigned long x)
{
	unsigned long r = hot_inner(x) + 1;

	count_round();
	return r;
}

static const int outer_call = __LINE__ + 3;
__attribute__((noinline)) static unsigned long hot_outer(unsigned long x)
{
	return hot_middle(x) ^ 3;
}

/* work_a and work_b spin 90 and 10 units of (16 + k) * ROUND / 160 iterations. */
__attribute__((noinline)) static unsigned long work_a(unsigned long acc, unsigned k)
{
	for (unsigned long i = 0; i < 90 * (16 + k) * (ROUND / 160) / 16; i++) {
		acc = STEP(acc);
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}

__attribute__((noinline)) static unsigned long work_b(unsigned long acc, unsigned k)
{
	for (unsigned long i = 0; i < 10 * (16 + k) * (ROUND / 160) / 16; i++) {
		acc = STEP(acc);
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}

static double now_ms(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	bool split = argc > 1 && !strcmp(argv[1], "split");
	long ms = wl_arg(argc, argv, 2, 1000, 1, 600000);
	clockid_t clock = argc > 3 && !strcmp(argv[3], "cpu") ? CLOCK_THREAD_CPUTIME_ID :
								 CLOCK_MONOTONIC;
	double end;
	unsigned long acc = 1, len = 1;

	if (argc < 2 || (!split && strcmp(argv[1], "chain"))) {
		fprintf(stderr, "usage: hotspin chain|split [MS [cpu]]\n");
		return 2;
	}
	wl_pid();
	wl_tid("spinner");
	end = now_ms(clock) + ms;
	while (now_ms(clock) < end) {
		/* Rounds of random length, so that no sampling period locks onto their phase. */
		len = STEP(len);
		acc = split ? work_b(work_a(acc, len >> 60), len >> 60) : hot_outer(acc);
		count_round();
	}
	wl_stat("inner_lo", inner_lo);
	wl_stat("inner_hi", inner_hi);
	wl_stat("middle_call", middle_call);
	wl_stat("outer_call", outer_call);
	wl_stat("rounds", (long long)rounds);
	wl_stat("acc", (long long)(acc & 0xff));
	return 0;
}
