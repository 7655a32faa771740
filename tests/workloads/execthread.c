/* execthread.c - a thread that is not the process's leader execs: the kernel ends the leader
 * and gives the exec'er the leader's tid, with no exit of the exec'er's own tid. The first
 * image reports the exec'er's tid, the new one (this program again, argument `after`) its tid
 * after the exec, which is the pid. Usage: execthread */
#include <pthread.h>

#include "workload.h"

static char *self;

static void *exec_run(void *arg)
{
	(void)arg;
	wl_tid("execer");
	/* The buffer would die with the old image. */
	fflush(stdout);
	execl("/proc/self/exe", self, "after", (char *)NULL);
	perror("execthread: exec /proc/self/exe");
	exit(1);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && !strcmp(argv[1], "after")) {
		wl_tid("after");
		/* Run a little under the new name before exiting. */
		usleep(10000);
		return 0;
	}
	self = argv[0];
	wl_pid();
	if (pthread_create(&t, NULL, exec_run, NULL)) {
		fprintf(stderr, "execthread: pthread_create failed\n");
		return 1;
	}
	/* Ended by the exec. */
	pthread_join(t, NULL);
	return 1;
}
