/* stress.c - hackbench-like load for a bounded time: G groups of F senders and F receivers,
 * every sender writing 100-byte messages to every receiver of its group over AF_UNIX stream
 * sockets, plus one thread creating and joining short-lived threads (thread churn).
 * Threads only, so killing the process leaves nothing behind.
 * Usage: stress [SECONDS_MS [G [F]]] (duration in milliseconds). */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>

#include "workload.h"

#define MSG 100
#define MAX_GROUPS 32
#define MAX_FDS 32

static atomic_int stop;
static atomic_llong messages, churned;

struct group {
	int nfds;
	int socks[MAX_FDS][2];	/* [r][0] written by senders, [r][1] read by receiver r */
};

struct receiver {
	struct group *g;
	int r;
};

static void *sender(void *arg)
{
	struct group *g = arg;
	char buf[MSG] = { 0 };
	long long sent = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int r = 0; r < g->nfds; r++)
			if (write(g->socks[r][0], buf, MSG) != MSG)
				wl_die("write");
		sent += g->nfds;
	}
	atomic_fetch_add(&messages, sent);
	return NULL;
}

static void *receiver(void *arg)
{
	struct receiver *rv = arg;
	char buf[MSG * 4];
	ssize_t n;

	while ((n = read(rv->g->socks[rv->r][1], buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		wl_die("read");
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

static void *churn(void *arg)
{
	long long n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL))
			wl_die("pthread_create");
		pthread_join(t, NULL);
		n++;
	}
	atomic_store(&churned, n);
	return arg;
}

int main(int argc, char **argv)
{
	long ms = wl_arg(argc, argv, 1, 2000, 1, 3600000);
	long ng = wl_arg(argc, argv, 2, 4, 1, MAX_GROUPS);
	long nf = wl_arg(argc, argv, 3, 5, 1, MAX_FDS);
	static struct group groups[MAX_GROUPS];
	static struct receiver rvs[MAX_GROUPS][MAX_FDS];
	static pthread_t snd[MAX_GROUPS][MAX_FDS], rcv[MAX_GROUPS][MAX_FDS];
	struct timespec d = { ms / 1000, ms % 1000 * 1000000 };
	pthread_t ch;

	wl_pid();
	for (long g = 0; g < ng; g++) {
		groups[g].nfds = (int)nf;
		for (long r = 0; r < nf; r++) {
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, groups[g].socks[r]))
				wl_die("socketpair");
			rvs[g][r] = (struct receiver){ &groups[g], (int)r };
			if (pthread_create(&rcv[g][r], NULL, receiver, &rvs[g][r]))
				wl_die("pthread_create");
		}
		for (long s = 0; s < nf; s++)
			if (pthread_create(&snd[g][s], NULL, sender, &groups[g]))
				wl_die("pthread_create");
	}
	if (pthread_create(&ch, NULL, churn, NULL))
		wl_die("pthread_create");
	while (nanosleep(&d, &d))
		if (errno != EINTR)
			wl_die("nanosleep");
	atomic_store(&stop, 1);
	pthread_join(ch, NULL);
	for (long g = 0; g < ng; g++) {
		for (long s = 0; s < nf; s++)
			pthread_join(snd[g][s], NULL);
		/* Senders are done: closing the write ends gives each receiver its EOF. */
		for (long r = 0; r < nf; r++)
			close(groups[g].socks[r][0]);
		for (long r = 0; r < nf; r++)
			pthread_join(rcv[g][r], NULL);
	}
	wl_stat("messages", atomic_load(&messages));
	wl_stat("threads_churned", atomic_load(&churned));
	return 0;
}
