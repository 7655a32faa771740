/* triggered.c - a program that asks a flight recorder for its window: it idles IDLE_MS, calls
 * lxtrace_trigger(REASON) COUNT times PERIOD_MS apart, and idles IDLE_MS more.
 *
 * usage: triggered [IDLE_MS [COUNT [PERIOD_MS]]]   (default 500 1 100)
 * Reports: tid main, stat triggers, stat trigger_ns (CLOCK_MONOTONIC of the first call). */
#include <lxtrace/annotate.h>

#include "tests/workloads/workload.h"

#define REASON "triggered: the workload asked"

int main(int argc, char **argv)
{
	long idle_ms = wl_arg(argc, argv, 1, 500, 0, 600000);
	long count = wl_arg(argc, argv, 2, 1, 1, 1000);
	long period_ms = wl_arg(argc, argv, 3, 100, 0, 600000);
	long long first = 0;

	wl_pid();
	wl_tid("main");
	wl_sleep_ms(idle_ms);
	for (long i = 0; i < count; i++) {
		if (i)
			wl_sleep_ms(period_ms);
		else
			first = wl_now_ns();
		lxtrace_trigger(REASON);
	}
	wl_sleep_ms(idle_ms);
	wl_stat("triggers", count);
	wl_stat("trigger_ns", first);
	return 0;
}
