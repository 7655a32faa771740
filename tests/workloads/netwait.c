/* netwait.c - a reader thread waits K times in poll() and K times in recv() on a socketpair
 * that the writer feeds every 20 ms, so each wait really blocks.
 * Usage: netwait [K]. */
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "workload.h"

static int sv[2];
static long k;

static void *reader(void *arg)
{
	char c;

	wl_tid("reader");
	for (long i = 0; i < k; i++) {
		struct pollfd pfd = { sv[1], POLLIN, 0 };

		/* First message: waited for in poll(), then read at once. */
		if (poll(&pfd, 1, -1) != 1 || recv(sv[1], &c, 1, 0) != 1)
			wl_die("poll/recv");
		/* Second message: waited for in recv(). */
		if (recv(sv[1], &c, 1, 0) != 1)
			wl_die("recv");
	}
	return arg;
}

int main(int argc, char **argv)
{
	const struct timespec twenty_ms = { 0, 20 * 1000 * 1000 };
	pthread_t t;

	k = wl_arg(argc, argv, 1, 5, 1, 100000);
	wl_pid();
	wl_tid("writer");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		wl_die("socketpair");
	if (pthread_create(&t, NULL, reader, NULL))
		wl_die("pthread_create");
	for (long i = 0; i < 2 * k; i++) {
		struct timespec d = twenty_ms;

		while (nanosleep(&d, &d))
			if (errno != EINTR)
				wl_die("nanosleep");
		if (send(sv[0], "x", 1, 0) != 1)
			wl_die("send");
	}
	pthread_join(t, NULL);
	wl_stat("polls", k);
	wl_stat("recvs", k);
	return 0;
}
