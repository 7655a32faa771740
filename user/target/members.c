/* members.c - the threads in a target now (members.h). */
#include <dirent.h>
#include <errno.h>
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/target/members.h"

struct list {
	uint32_t *tids;
	size_t n, cap;
};

static int add(struct list *l, unsigned long tid)
{
	if (l->n >= MEMBERS_MAX || !tid || tid > UINT32_MAX)
		return 0;
	if (grow_array((void **)&l->tids, &l->cap, l->n + 1, sizeof(*l->tids), 64))
		return -ENOMEM;
	l->tids[l->n++] = (uint32_t)tid;
	return 0;
}

/* The entries of /proc/PID/task. */
static int process_threads(uint32_t pid, struct list *l)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	while (dir && !err && (d = readdir(dir)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			err = add(l, strtoul(d->d_name, NULL, 10));
	if (dir)
		closedir(dir);
	return err;
}

/* The lines of dir/cgroup.threads. */
static int cgroup_threads(const char *dir, struct list *l)
{
	char path[4096];
	unsigned long tid;
	FILE *f;
	int err = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.threads", dir) >= sizeof(path))
		return 0;
	f = fopen(path, "re");
	while (f && !err && fscanf(f, "%lu", &tid) == 1)
		err = add(l, tid);
	if (f)
		fclose(f);
	return err;
}

int target__threads(const struct target *t, uint32_t **tids, size_t *n)
{
	struct list l = { 0 };
	int err = 0;

	if (target__mode(t) == LX_TARGET_PIDS) {
		for (size_t i = 0; !err && i < target__npids(t); i++)
			err = process_threads(target__pid(t, i), &l);
	} else if (target__cgroup_dir(t)) {
		/* Without following links, without recursion of our own: a tree another user
		 * made deep costs no stack. */
		char *roots[] = { (char *)target__cgroup_dir(t), NULL };
		FTS *fts =
			fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV | FTS_NOSTAT, NULL);
		FTSENT *e;

		while (fts && !err && l.n < MEMBERS_MAX && (e = fts_read(fts)))
			if (e->fts_info == FTS_D)
				err = cgroup_threads(e->fts_path, &l);
		if (fts)
			fts_close(fts);
	}
	if (err) {
		free(l.tids);
		l = (struct list){ 0 };
	}
	*tids = l.tids;
	*n = l.n;
	return err;
}
