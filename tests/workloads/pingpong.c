/* pingpong.c - two threads pass one byte back and forth over two pipes N times, so each
 * blocks in read() about N times and is woken by the other. Usage: pingpong [N [apart]
 * [batch]]. `apart` pins ping to the first CPU and pong to the second, so that every wakeup is
 * of a thread on another CPU: enqueued there, after the IPI. `batch` makes both SCHED_BATCH,
 * whose wakeups never preempt the thread running where they land. Each thread also reports
 * the kernel's count of its switches at its loop's end (wl_kernel_switches). */
#include <pthread.h>
#include <sched.h>

#include "workload.h"

struct side {
	const char *role;
	int in, out;		/* read end, write end */
	long n;
	int first;		/* this side sends first */
	int cpu;		/* pinned there, -1: not pinned */
	int policy;		/* its scheduling policy */
	long long vcsw;
};

static void *side_run(void *arg)
{
	struct side *s = arg;
	long long v0;
	char c = 'x';
	cpu_set_t set;

	if (s->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		if ((errno = pthread_setaffinity_np(pthread_self(), sizeof(set), &set)))
			wl_die("pthread_setaffinity_np");
	}
	if (s->policy != SCHED_OTHER &&
	    (errno = pthread_setschedparam(pthread_self(), s->policy, &(struct sched_param){ 0 })))
		wl_die("pthread_setschedparam");
	v0 = wl_vcsw();
	wl_tid(s->role);
	for (long i = 0; i < s->n; i++) {
		if (s->first && write(s->out, &c, 1) != 1)
			wl_die("write");
		if (read(s->in, &c, 1) != 1)
			wl_die("read");
		if (!s->first && write(s->out, &c, 1) != 1)
			wl_die("write");
	}
	s->vcsw = wl_vcsw() - v0;
	wl_kernel_switches(s->role);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 2000, 1, 100000000);
	int apart = 0, policy = SCHED_OTHER;
	int ab[2], ba[2];
	struct side ping, pong;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "apart")) {
			apart = 1;
		} else if (!strcmp(argv[i], "batch")) {
			policy = SCHED_BATCH;
		} else {
			fprintf(stderr, "usage: pingpong [N [apart] [batch]]\n");
			return 2;
		}
	}
	ping = (struct side){ "ping", 0, 0, n, 1, apart ? 0 : -1, policy, 0 };
	pong = (struct side){ "pong", 0, 0, n, 0, apart ? 1 : -1, policy, 0 };
	pthread_t t1, t2;

	wl_pid();
	if (pipe(ab) || pipe(ba))
		wl_die("pipe");
	ping.in = ba[0], ping.out = ab[1];
	pong.in = ab[0], pong.out = ba[1];
	if (pthread_create(&t1, NULL, side_run, &ping) || pthread_create(&t2, NULL, side_run, &pong))
		wl_die("pthread_create");
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	wl_stat("rounds", n);
	wl_stat("vcsw-ping", ping.vcsw);
	wl_stat("vcsw-pong", pong.vcsw);
	return 0;
}
