/* schedstat.c - every thread's scheduler counters from /proc (schedstat.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/clock.h"
#include "tests/lib/schedstat.h"

size_t schedstat__snapshot(struct schedstat *out, size_t max)
{
	DIR *procs = opendir("/proc");
	struct dirent *p, *t;
	size_t n = 0;

	if (!procs)
		return 0;
	while ((p = readdir(procs)) && n < max) {
		char path[300];
		DIR *tasks;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks)) && n < max) {
			unsigned long long run, delay, count;
			char sp[560];
			FILE *f;

			if (t->d_name[0] < '1' || t->d_name[0] > '9')
				continue;
			snprintf(sp, sizeof(sp), "/proc/%s/task/%s/schedstat", p->d_name, t->d_name);
			f = fopen(sp, "r");
			if (!f)
				continue;
			if (fscanf(f, "%llu %llu %llu", &run, &delay, &count) == 3)
				out[n++] = (struct schedstat){ atoi(p->d_name), atoi(t->d_name), delay,
							       count, now_ns() };
			fclose(f);
		}
		if (tasks)
			closedir(tasks);
	}
	closedir(procs);
	return n;
}

const struct schedstat *schedstat__find(const struct schedstat *s, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].tid == tid)
			return &s[i];
	return NULL;
}
