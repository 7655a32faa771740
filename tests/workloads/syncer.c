/* syncer.c - one thread writes a page to a file and calls fdatasync N times, each call timed by
 * the thread itself (CLOCK_MONOTONIC, from the vDSO: no syscall of its own) around it: a
 * syscall that blocks on the disk, often several times a call (the data, then the journal's
 * commit). The file is made in DIR and removed at the end. Usage: syncer [N [DIR]]. Reports
 * the count, the sum and the largest of the measured lengths, in ns. */
#include <fcntl.h>

#include "workload.h"

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 200, 1, 100000);
	const char *dir = argc > 2 ? argv[2] : "/var/tmp";
	char path[4096], page[4096];
	long long sum = 0, max = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/lxtrace-syncer-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		wl_die("mkstemp");
	memset(page, 'x', sizeof(page));
	wl_pid();
	wl_tid("syncer");
	fflush(stdout);
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
	return 0;
}
