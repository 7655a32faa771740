/* bench_annotate.c - what include/lxtrace/annotate.h costs a program that is not traced: a loop
 * of N region begin/end pairs (and N task begin/end pairs) against the same loop without the
 * annotations, best of REPEATS runs of each, alternated. Run it under
 * `lxtrace record --usdt build/bench/bench_annotate` to see what a traced probe costs instead.
 *
 * Both loops do the same small amount of work per iteration (a dependent multiply-add the
 * compiler cannot drop), so the difference is the annotations alone.
 *
 * usage: bench_annotate [N [REPEATS]]   (default 10000000 5)
 */
#include <lxtrace/annotate.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/clock.h"

/* One step of work the optimiser must keep. */
static inline unsigned long step(unsigned long x, unsigned long i)
{
	x = x * 6364136223846793005ul + i;
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline)) static unsigned long plain(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = step(x, i);
	return x;
}

__attribute__((noinline)) static unsigned long regions(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) {
		struct lxtrace_region r = lxtrace_region_begin(LXTRACE_BACKGROUND, "bench");

		x = step(x, i);
		lxtrace_region_end(r);
	}
	return x;
}

__attribute__((noinline)) static unsigned long tasks(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) {
		lxtrace_task_t t = lxtrace_task_begin(LXTRACE_BACKGROUND, "bench");

		x = step(x, i);
		lxtrace_task_end(t);
	}
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000;
	int repeats = argc > 2 ? atoi(argv[2]) : 5;
	unsigned long (*const fns[])(unsigned long) = { plain, regions, tasks };
	const char *const names[] = { "plain loop", "region begin/end", "task begin/end" };
	double best[3] = { 1e30, 1e30, 1e30 };
	unsigned long sink = 0;

	if (!n || repeats < 1) {
		fprintf(stderr, "usage: bench_annotate [N [REPEATS]]\n");
		return 2;
	}
	for (int r = 0; r < repeats; r++) {
		for (int k = 0; k < 3; k++) {
			double t0 = now_ns() / 1e9;

			sink += fns[k](n);
			t0 = now_ns() / 1e9 - t0;
			if (t0 < best[k])
				best[k] = t0;
		}
	}
	printf("%lu iterations, best of %d (sink %lu)\n", n, repeats, sink & 1);
	for (int k = 0; k < 3; k++)
		printf("  %-18s %8.3f ns/iteration  ratio to plain %.3f\n", names[k],
		       best[k] / n * 1e9, best[k] / best[0]);
	return 0;
}
