/* syslen.c - one thread makes exactly N readv() calls of SIZE KiB from /dev/zero, syscalls
 * that run on the CPU for a length the thread measures itself (CLOCK_MONOTONIC, from the vDSO:
 * no syscall of its own) around each one. readv, which the dynamic loader does not call (it
 * reads the libraries with read), so that every one in a trace is the loop's. Usage: syslen
 * [N [SIZE_KIB]]. Reports the sum and the largest of the measured lengths, in ns. */
#include <fcntl.h>
#include <sys/uio.h>
#include <time.h>

#include "workload.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 200, 1, 100000);
	size_t size = (size_t)wl_arg(argc, argv, 2, 4096, 1, 65536) * 1024;
	long long sum = 0, max = 0;
	char *buf = malloc(size);
	int fd = open("/dev/zero", O_RDONLY);

	if (!buf || fd < 0)
		wl_die("open /dev/zero");
	/* Touched first: no read takes a page fault of the buffer. */
	memset(buf, 1, size);
	wl_pid();
	wl_tid("reader");
	fflush(stdout);
	for (long i = 0; i < n; i++) {
		struct iovec iov = { buf, size };
		long long t0 = now_ns(), d;

		if (readv(fd, &iov, 1) != (ssize_t)size)
			wl_die("readv");
		d = now_ns() - t0;
		sum += d;
		max = d > max ? d : max;
	}
	wl_stat("reads", n);
	wl_stat("read_ns", sum);
	wl_stat("read_max_ns", max);
	return 0;
}
