/* yielder.c - two threads pinned to one CPU call sched_yield() N times each, so every yield
 * hands the CPU to the other. Each reports its involuntary switches in the loop (a yield
 * that switches counts as one). Usage: yielder [N [CPU]]. */
#include <pthread.h>
#include <sched.h>

#include "workload.h"

static long n;
static int cpu;
static pthread_barrier_t go;

struct yielder {
	const char *role;
	long long nivcsw;
};

static long long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nivcsw;
}

static void *yield_run(void *arg)
{
	struct yielder *y = arg;
	cpu_set_t set;
	long long v0;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		wl_die("pthread_setaffinity_np");
	wl_tid(y->role);
	pthread_barrier_wait(&go);
	v0 = nivcsw();
	for (long i = 0; i < n; i++)
		sched_yield();
	y->nivcsw = nivcsw() - v0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct yielder a = { "y0", 0 }, b = { "y1", 0 };
	pthread_t ta, tb;

	n = wl_arg(argc, argv, 1, 1000, 1, 100000000);
	cpu = (int)wl_arg(argc, argv, 2, 1, 0, CPU_SETSIZE - 1);
	wl_pid();
	if (pthread_barrier_init(&go, NULL, 2))
		wl_die("pthread_barrier_init");
	if (pthread_create(&ta, NULL, yield_run, &a) || pthread_create(&tb, NULL, yield_run, &b))
		wl_die("pthread_create");
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	wl_stat("yields", n);
	wl_stat("nivcsw-y0", a.nivcsw);
	wl_stat("nivcsw-y1", b.nivcsw);
	return 0;
}
