/* tgroup.c - a process to attach to: N threads that block until a line arrives on stdin, then
 * M more threads created afterwards, then all exit. A tracer attached (-p) between the start
 * and the line sees the first N as threads alive at start, the M as created while it records.
 * Usage: tgroup [N [M]]. */
#include <pthread.h>

#include "workload.h"

#define MAX_THREADS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int go;

static void *waiter(void *arg)
{
	wl_tid("early");
	pthread_mutex_lock(&lock);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *late(void *arg)
{
	wl_tid("late");
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 4, 0, MAX_THREADS), m = wl_arg(argc, argv, 2, 4, 0, MAX_THREADS);
	static pthread_t early_ts[MAX_THREADS], late_ts[MAX_THREADS];
	char line[16];

	wl_pid();
	wl_tid("main");
	for (long i = 0; i < n; i++)
		if (pthread_create(&early_ts[i], NULL, waiter, NULL))
			wl_die("pthread_create");
	/* The test attaches now; anything on stdin (or its end) says it has. */
	if (!fgets(line, sizeof(line), stdin) && ferror(stdin))
		wl_die("reading stdin");
	for (long i = 0; i < m; i++)
		if (pthread_create(&late_ts[i], NULL, late, NULL))
			wl_die("pthread_create");
	for (long i = 0; i < m; i++)
		pthread_join(late_ts[i], NULL);
	pthread_mutex_lock(&lock);
	go = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (long i = 0; i < n; i++)
		pthread_join(early_ts[i], NULL);
	wl_stat("threads", 1 + n + m);
	return 0;
}
