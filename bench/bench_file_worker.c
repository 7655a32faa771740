/* bench_file_worker.c - what a job of the file worker (lib/file_worker.h) costs its caller: the
 * worker's start, and µs per job that opens a small local file, against the same open in place.
 * Each distinct binary a recording reads is one job.
 *
 * usage: bench_file_worker [JOBS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/file_worker.h"

#define PATH "/proc/self/exe"

static int open_job(struct file_job *job, const void *arg)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int main(int argc, char **argv)
{
	long jobs = argc > 1 ? atol(argv[1]) : 1000;
	uint64_t t0, t1, t2;

	if (jobs < 1) {
		fprintf(stderr, "usage: bench_file_worker [JOBS]\n");
		return 2;
	}
	t0 = now_ns();
	if (file_worker__start()) {
		fprintf(stderr, "bench_file_worker: cannot start the worker\n");
		return 1;
	}
	t1 = now_ns();
	for (long i = 0; i < jobs; i++) {
		int fd = file_worker__run(open_job, PATH, sizeof(PATH), 0, 0, NULL);

		if (fd < 0) {
			fprintf(stderr, "bench_file_worker: job: %d\n", fd);
			return 1;
		}
		close(fd);
	}
	t2 = now_ns();
	for (long i = 0; i < jobs; i++)
		close(open(PATH, O_RDONLY | O_CLOEXEC));
	printf("worker start: %.0f us\n", (t1 - t0) / 1e3);
	printf("job (open in the worker, descriptor back): %.1f us\n", (t2 - t1) / 1e3 / jobs);
	printf("the same open in place: %.2f us\n", (now_ns() - t2) / 1e3 / jobs);
	return 0;
}
