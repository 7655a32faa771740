/* slowread.c - a reader thread blocks in read() on a pipe that the writer fills only after
 * sleeping DELAY ms; repeated R times. Usage: slowread [R [DELAY_MS]]. */
#include <pthread.h>
#include <time.h>

#include "workload.h"

static int fds[2];
static long reps;

static void *reader(void *arg)
{
	char c;

	wl_tid("reader");
	for (long i = 0; i < reps; i++)
		if (read(fds[0], &c, 1) != 1)
			wl_die("read");
	return NULL;
}

int main(int argc, char **argv)
{
	long delay_ms;
	pthread_t t;

	reps = wl_arg(argc, argv, 1, 1, 1, 10000);
	delay_ms = wl_arg(argc, argv, 2, 50, 1, 10000);
	wl_pid();
	wl_tid("writer");
	if (pipe(fds))
		wl_die("pipe");
	if (pthread_create(&t, NULL, reader, NULL))
		wl_die("pthread_create");
	for (long i = 0; i < reps; i++) {
		struct timespec d = { delay_ms / 1000, delay_ms % 1000 * 1000000 };

		while (nanosleep(&d, &d))
			if (errno != EINTR)
				wl_die("nanosleep");
		if (write(fds[1], "x", 1) != 1)
			wl_die("write");
	}
	pthread_join(t, NULL);
	wl_stat("reads", reps);
	wl_stat("delay_ms", delay_ms);
	return 0;
}
