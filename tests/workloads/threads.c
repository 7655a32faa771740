/* threads.c - creates M threads, each naming itself "wk-NNN" before anything else, and joins
 * them. A tracer sees a thread's birth (clone) with its creator's name; the rename comes
 * after. Usage: threads [M]. */
#include <pthread.h>

#include "workload.h"

#define MAX_THREADS 4096

struct child {
	char name[16];
};

static void *child_run(void *arg)
{
	struct child *c = arg;

	pthread_setname_np(pthread_self(), c->name);
	wl_tid(c->name);
	return NULL;
}

int main(int argc, char **argv)
{
	long m = wl_arg(argc, argv, 1, 50, 0, MAX_THREADS);
	static struct child cs[MAX_THREADS];
	static pthread_t ts[MAX_THREADS];

	wl_pid();
	wl_tid("main");
	for (int i = 0; i < m; i++) {
		snprintf(cs[i].name, sizeof(cs[i].name), "wk-%03d", i);
		if (pthread_create(&ts[i], NULL, child_run, &cs[i]))
			wl_die("pthread_create");
	}
	for (long i = 0; i < m; i++)
		pthread_join(ts[i], NULL);
	wl_stat("threads", m);
	return 0;
}
