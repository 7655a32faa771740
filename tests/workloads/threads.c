/* threads.c - creates M threads, each named "wk-NNN", and joins them.
 *
 * A thread's comm at clone time is its creator's, and that is the name a tracer sees at fork.
 * So the creator names itself "wk-NNN" just before each pthread_create (the child inherits
 * the name), the child names itself again first thing (in case the creator's rename came too
 * late), and the creator takes back its own name at the end.
 * Usage: threads [M]. */
#include <pthread.h>
#include <sys/prctl.h>

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
	char self[16];

	wl_pid();
	wl_tid("main");
	if (prctl(PR_GET_NAME, self))
		wl_die("prctl");
	for (int i = 0; i < m; i++) {
		snprintf(cs[i].name, sizeof(cs[i].name), "wk-%03d", i);
		if (prctl(PR_SET_NAME, cs[i].name))
			wl_die("prctl");
		if (pthread_create(&ts[i], NULL, child_run, &cs[i]))
			wl_die("pthread_create");
	}
	if (prctl(PR_SET_NAME, self))
		wl_die("prctl");
	for (long i = 0; i < m; i++)
		pthread_join(ts[i], NULL);
	wl_stat("threads", m);
	return 0;
}
