/* syncer.c - one thread writes a page to a file and calls fdatasync N times, each call timed by
 * the thread itself (CLOCK_MONOTONIC, from the vDSO: no syscall of its own) around it: a
 * syscall that blocks on the disk, often several times a call (the data, then the journal's
 * commit). The file is made in DIR and removed at the end. Usage: syncer [N [DIR]]. Reports
 * the count, the sum and the largest of the measured lengths, in ns, and the thread's run delay
 * over the loop (the kernel's: /proc/thread-self/schedstat), in which a busy machine's
 * preemptions between a clock read and the call fall. */
#include <fcntl.h>

#include "workload.h"

/* The calling thread's time waiting on a run queue so far, in ns (-1: unknown). */
static long long run_delay_ns(void)
{
	unsigned long long on_cpu, delay;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &on_cpu, &delay);
	fclose(f);
	return n == 2 ? (long long)delay : -1;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 200, 1, 100000);
	const char *dir = argc > 2 ? argv[2] : "/var/tmp";
	char path[4096], page[4096];
	long long sum = 0, max = 0, delay0, delay1;
	int fd;

	snprintf(path, sizeof(path), "%s/lxtrace-syncer-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		wl_die("mkstemp");
	memset(page, 'x', sizeof(page));
	wl_pid();
	wl_tid("syncer");
	fflush(stdout);
	delay0 = run_delay_ns();
	for (long i = 0; i < n; i++) {
		long long t0, d;

		if (pwrite(fd, page, sizeof(page), (off_t)(i % 256) * (off_t)sizeof(page)) !=
		    (ssize_t)sizeof(page))
			wl_die("pwrite");
		t0 = wl_now_ns();
		if (fdatasync(fd))
			wl_die("fdatasync");
		d = wl_now_ns() - t0;
		sum += d;
		max = d > max ? d : max;
	}
	close(fd);
	unlink(path);
	wl_stat("syncs", n);
	wl_stat("sync_ns", sum);
	wl_stat("sync_max_ns", max);
	delay1 = run_delay_ns();
	wl_stat("run_delay_ns", delay0 < 0 || delay1 < 0 ? -1 : delay1 - delay0);
	return 0;
}
