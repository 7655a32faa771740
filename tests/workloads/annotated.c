/* annotated.c - a program annotated with include/lxtrace/annotate.h, after Go's
 * TestUserTaskRegion: per round, task "task0" is begun on the main thread with a child task
 * "task1"; a worker thread opens region "region0" and inside it "region1" in task0, logs
 * ("key0", "0123456789abcdef") inside both, closes them, and ends task1 and task0 (begun on
 * another thread); then the main thread opens and closes "background region" in the
 * background task. The last round also logs a name and a message too long for the trace.
 * At the end the main thread logs ("cold", "page") in the background task, both strings in a
 * page of a file mapped and never touched: the probe must fault it in to read them.
 *
 * usage: annotated [ROUNDS]   (default 1)
 * Reports: tid main, tid worker-N, stat rounds. */
#include <lxtrace/annotate.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/workloads/workload.h"

struct round {
	lxtrace_task_t task0, task1;
	int n;
	int last;
};

static void *worker(void *arg)
{
	struct round *r = arg;
	struct lxtrace_region r0, r1;
	char role[32], name[100], msg[400];

	snprintf(role, sizeof(role), "worker-%d", r->n);
	wl_tid(role);
	r0 = lxtrace_region_begin(r->task0, "region0");
	r1 = lxtrace_region_begin(r->task0, "region1");
	lxtrace_log(r->task0, "key0", "0123456789abcdef");
	if (r->last) {
		memset(name, 'n', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		memset(msg, 'm', sizeof(msg) - 1);
		msg[sizeof(msg) - 1] = '\0';
		lxtrace_log(r->task1, name, msg);
	}
	lxtrace_region_end(r1);
	lxtrace_region_end(r0);
	lxtrace_task_end(r->task1);
	lxtrace_task_end(r->task0);
	return NULL;
}

static void cold_log(void)
{
	static const char text[] = "cold\0page";
	char path[] = "/tmp/annotated-XXXXXX";
	int fd = mkstemp(path);
	const char *p;

	if (fd < 0 || write(fd, text, sizeof(text)) != sizeof(text))
		wl_die("cold page file");
	p = mmap(NULL, sizeof(text), PROT_READ, MAP_PRIVATE, fd, 0);
	unlink(path);
	close(fd);
	if (p == MAP_FAILED)
		wl_die("mmap");
	lxtrace_log(LXTRACE_BACKGROUND, p, p + 5);
	munmap((void *)p, sizeof(text));
}

int main(int argc, char **argv)
{
	long rounds = wl_arg(argc, argv, 1, 1, 1, 100000);
	struct lxtrace_region bg;
	pthread_t th;

	wl_pid();
	wl_tid("main");
	for (long i = 0; i < rounds; i++) {
		struct round r = { .n = (int)i, .last = i == rounds - 1 };

		r.task0 = lxtrace_task_begin(LXTRACE_BACKGROUND, "task0");
		r.task1 = lxtrace_task_begin(r.task0, "task1");
		errno = pthread_create(&th, NULL, worker, &r);
		if (errno)
			wl_die("pthread_create");
		errno = pthread_join(th, NULL);
		if (errno)
			wl_die("pthread_join");
		bg = lxtrace_region_begin(LXTRACE_BACKGROUND, "background region");
		lxtrace_region_end(bg);
	}
	cold_log();
	wl_stat("rounds", rounds);
	return 0;
}
