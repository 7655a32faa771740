/* allocator.c - grows its resident memory in steps: STEPS times, maps MIB MiB, writes every
 * page (so it is resident, not just reserved) and pauses PAUSE ms, then exits. What a heap
 * counter fed from rss_stat must follow. Usage: allocator [STEPS [MIB [PAUSE]]]. */
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "workload.h"

int main(int argc, char **argv)
{
	long steps = wl_arg(argc, argv, 1, 10, 1, 1000), mib = wl_arg(argc, argv, 2, 20, 1, 4096);
	long pause_ms = wl_arg(argc, argv, 3, 50, 0, 10000);
	struct timespec pause = { pause_ms / 1000, pause_ms % 1000 * 1000000 };

	wl_pid();
	wl_tid("main");
	for (long i = 0; i < steps; i++) {
		size_t len = (size_t)mib << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			wl_die("mmap");
		memset(p, 1, len);
		nanosleep(&pause, NULL);
	}
	wl_stat("resident_mib", steps * mib);
	return 0;
}
