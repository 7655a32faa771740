/* slowread.c - a reader thread blocks in read() on a pipe that the writer fills only after
 * sleeping DELAY ms; repeated R times. Usage: slowread [R [DELAY_MS]].
 *
 * The writer starts each sleep when the reader acknowledges the previous byte, just before
 * its next read(), so each read blocks for about DELAY however late the reader got a CPU
 * after its wakeup (under load, 20 ms late once, which cut the next block to 31 ms). */
#include <pthread.h>
#include <time.h>

#include "workload.h"

static int fds[2], acks[2];
static long reps;

static void *reader(void *arg)
{
	char c;

	wl_tid("reader");
	for (long i = 0; i < reps; i++) {
		/* A pipe with room: the ack never blocks. */
		if (i && write(acks[1], "a", 1) != 1)
			wl_die("write ack");
		if (read(fds[0], &c, 1) != 1)
			wl_die("read");
	}
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
	if (pipe(fds) || pipe(acks))
		wl_die("pipe");
	if (pthread_create(&t, NULL, reader, NULL))
		wl_die("pthread_create");
	for (long i = 0; i < reps; i++) {
		struct timespec d = { delay_ms / 1000, delay_ms % 1000 * 1000000 };
		char c;

		if (i && read(acks[0], &c, 1) != 1)
			wl_die("read ack");
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
