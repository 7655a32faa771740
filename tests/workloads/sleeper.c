/* sleeper.c - one thread sleeps K times for 10 ms in nanosleep() (clock_nanosleep in glibc).
 * Usage: sleeper [K]. */
#include <time.h>

#include "workload.h"

int main(int argc, char **argv)
{
	long k = wl_arg(argc, argv, 1, 20, 1, 1000000);
	const struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	wl_pid();
	wl_tid("sleeper");
	for (long i = 0; i < k; i++) {
		struct timespec left = ten_ms;

		/* A signal would split one sleep into two syscalls: finish the interval. */
		while (nanosleep(&left, &left))
			if (errno != EINTR)
				wl_die("nanosleep");
	}
	wl_stat("sleeps", k);
	return 0;
}
