/* triggered.c - a program that asks a flight recorder for its window: it idles IDLE_MS, calls
 * lxtrace_trigger(REASON) COUNT times PERIOD_MS apart, and idles IDLE_MS more.
 *
 * usage: triggered [IDLE_MS [COUNT [PERIOD_MS]]]   (default 500 1 100)
 * Reports: tid main, stat triggers, stat trigger_ns (CLOCK_MONOTONIC of the first call). */
#include <lxtrace/annotate.h>
#include <time.h>

#include "tests/workloads/workload.h"

#define REASON "triggered: the workload asked"

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&d, &d))
		if (errno != EINTR)
			wl_die("nanosleep");
}

int main(int argc, char **argv)
{
	long idle_ms = wl_arg(argc, argv, 1, 500, 0, 600000);
	long count = wl_arg(argc, argv, 2, 1, 1, 1000);
	long period_ms = wl_arg(argc, argv, 3, 100, 0, 600000);
	long long first = 0;

	wl_pid();
	wl_tid("main");
	sleep_ms(idle_ms);
	for (long i = 0; i < count; i++) {
		if (i)
			sleep_ms(period_ms);
		else
			first = now_ns();
		lxtrace_trigger(REASON);
	}
	sleep_ms(idle_ms);
	wl_stat("triggers", count);
	wl_stat("trigger_ns", first);
	return 0;
}
