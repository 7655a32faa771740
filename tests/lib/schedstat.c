/* schedstat.c - every thread's scheduler counters from /proc (schedstat.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

long long schedstat__cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* After the name: state, then fields 4-13, then utime and stime. */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (long long)((ut + st) * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}
