/* futex_contend.c - T threads take one pthread mutex I times each and hold it for a few
 * microseconds, so the others really wait in futex(FUTEX_WAIT). Each thread reports its
 * voluntary context switches during the loop: they are its futex waits, since it makes no
 * other blocking call there. Usage: futex_contend [T [I]]. */
#include <pthread.h>
#include <time.h>

#include "workload.h"

#define MAX_THREADS 64
#define HOLD_NS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t go;
static long iters;
static volatile unsigned long shared;

struct contender {
	char role[16];
	long long vcsw;
};

/* clock_gettime is a vDSO call: spinning on it makes no syscall. */
static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		shared++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static void *contend(void *arg)
{
	struct contender *c = arg;
	long long v0;

	wl_tid(c->role);
	pthread_barrier_wait(&go);
	v0 = wl_vcsw();
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&lock);
		spin_ns(HOLD_NS);
		pthread_mutex_unlock(&lock);
	}
	c->vcsw = wl_vcsw() - v0;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 4, 2, MAX_THREADS);
	struct contender cs[MAX_THREADS];
	pthread_t ts[MAX_THREADS];
	long long total = 0;

	iters = wl_arg(argc, argv, 2, 500, 1, 10000000);
	wl_pid();
	if (pthread_barrier_init(&go, NULL, (unsigned)n))
		wl_die("pthread_barrier_init");
	for (int i = 0; i < n; i++) {
		snprintf(cs[i].role, sizeof(cs[i].role), "c%d", i);
		if (pthread_create(&ts[i], NULL, contend, &cs[i]))
			wl_die("pthread_create");
	}
	for (int i = 0; i < n; i++) {
		char key[32];

		pthread_join(ts[i], NULL);
		snprintf(key, sizeof(key), "vcsw-c%d", i);
		wl_stat(key, cs[i].vcsw);
		total += cs[i].vcsw;
	}
	wl_stat("vcsw", total);
	return 0;
}
