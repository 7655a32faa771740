/* target.c - the processes or the cgroup `lxtrace record` traces: validated here, matched in BPF.
 *
 * A cgroup v2 is identified in the kernel by its kernfs node id, which is the inode number of
 * its directory, and matched in BPF as the ancestor at its level of a task's default-hierarchy
 * cgroup. Its level is its depth below the root of the cgroup2 mount, counted here by walking
 * up the directories; inside a cgroup namespace that root is not the kernel's root cgroup, and
 * the level would be off (not supported).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "lib/grow.h"
#include "user/target/target.h"

#define PREFIX "lxtrace record: "

struct target {
	enum lx_target_mode mode;
	uint32_t *pids;
	size_t npids, cap;
	uint64_t cgroup_id;
	uint32_t cgroup_level;
	char *cgroup_path;	/* as /proc/PID/cgroup shows it: "/" for the root, "/a/b" below */
	char *cgroup_dir;	/* the directory --cgroup named */
};

struct target *target__new_pids(void)
{
	struct target *t = calloc(1, sizeof(*t));

	if (t)
		t->mode = LX_TARGET_PIDS;
	return t;
}

int target__add_pid(struct target *t, uint32_t pid)
{
	for (size_t i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return 0;
	if (grow_array((void **)&t->pids, &t->cap, t->npids + 1, sizeof(*t->pids), 8))
		return -ENOMEM;
	t->pids[t->npids++] = pid;
	return 0;
}

bool target__pid_list_ok(const char *list)
{
	const char *p = list;

	do {
		unsigned long v;
		char *end;

		errno = 0;
		if (*p < '0' || *p > '9')
			return false;
		v = strtoul(p, &end, 10);
		if (errno || (*end && *end != ',') || !v || v > INT32_MAX)
			return false;
		p = *end ? end + 1 : end;
	} while (*p);
	return true;
}

int target__add_pids(struct target *t, const char *list)
{
	const char *p = list;

	if (!target__pid_list_ok(list)) {
		fprintf(stderr, PREFIX "-p: '%s' is not a list of process ids (PID[,PID...])\n",
			list);
		return -EINVAL;
	}
	do {
		struct procscan_thread info;
		unsigned long v;
		char *end;
		int err;

		v = strtoul(p, &end, 10);
		err = procscan__thread("/proc", (uint32_t)v, &info);
		if (!err && (info.state == 'Z' || info.state == 'X'))
			err = -ESRCH;
		if (err) {
			fprintf(stderr, PREFIX "-p %lu: %s\n", v,
				err == -ENOENT || err == -ESRCH ? "no such process" :
				strerror(-err));
			return err == -ENOENT ? -ESRCH : err;
		}
		err = target__add_pid(t, info.pid);
		if (err)
			return err;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/* Depth of dir below the root of its cgroup2 mount, and its path from that root ("/a/b"). */
static int cgroup_place(const char *dir, uint32_t *level, char **rel)
{
	char path[PATH_MAX], *slash;
	struct stat st, up;
	size_t root_len;

	if (!realpath(dir, path))
		return -errno;
	*level = 0;
	for (;;) {
		char parent[PATH_MAX + 4];
		struct statfs fs;

		snprintf(parent, sizeof(parent), "%s/..", path);
		if (stat(path, &st) || stat(parent, &up) || statfs(parent, &fs))
			return -errno;
		/* The mount root: its parent is another filesystem (or itself at "/"). */
		if (fs.f_type != CGROUP2_SUPER_MAGIC || up.st_dev != st.st_dev ||
		    up.st_ino == st.st_ino)
			break;
		(*level)++;
		slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
	}
	/* path is now the mount root; the cgroup's path is what the full path adds to it. */
	root_len = strlen(path);
	if (!realpath(dir, path))
		return -errno;
	*rel = strdup(path[root_len] ? path + root_len : "/");
	return *rel ? 0 : -ENOMEM;
}

struct target *target__new_cgroup(const char *path)
{
	struct target *t = calloc(1, sizeof(*t));
	struct statfs fs;
	struct stat st;
	int err;

	if (!t)
		return NULL;
	t->mode = LX_TARGET_CGROUP;
	if (statfs(path, &fs) || stat(path, &st)) {
		err = -errno;
		fprintf(stderr, PREFIX "--cgroup %s: %s\n", path, strerror(-err));
		goto fail;
	}
	if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode)) {
		err = -EINVAL;
		fprintf(stderr, PREFIX "--cgroup %s: not a cgroup v2 directory (cgroup2 is usually "
			"mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified)\n", path);
		goto fail;
	}
	t->cgroup_id = st.st_ino;
	t->cgroup_dir = strdup(path);
	err = t->cgroup_dir ? cgroup_place(path, &t->cgroup_level, &t->cgroup_path) : -ENOMEM;
	if (err) {
		fprintf(stderr, PREFIX "--cgroup %s: %s\n", path, strerror(-err));
		goto fail;
	}
	return t;
fail:
	target__free(t);
	errno = -err;
	return NULL;
}

const char *target__cgroup_dir(const struct target *t)
{
	return t->cgroup_dir;
}

enum lx_target_mode target__mode(const struct target *t)
{
	return t->mode;
}

size_t target__npids(const struct target *t)
{
	return t->npids;
}

uint32_t target__pid(const struct target *t, size_t i)
{
	return t->pids[i];
}

uint64_t target__cgroup_id(const struct target *t)
{
	return t->cgroup_id;
}

uint32_t target__cgroup_level(const struct target *t)
{
	return t->cgroup_level;
}

/* Whether the thread's cgroup v2 (the "0::PATH" line of its cgroup file) is ours or below. */
static bool thread_in_cgroup(const struct target *t, const struct procscan_thread *pt)
{
	char path[96], line[4096];
	size_t len = strlen(t->cgroup_path);
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/cgroup", pt->pid, pt->tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *cg = line + 3;

		if (strncmp(line, "0::", 3))
			continue;
		cg[strcspn(cg, "\n")] = '\0';
		in = !strcmp(t->cgroup_path, "/") ||
		     (!strncmp(cg, t->cgroup_path, len) && (cg[len] == '\0' || cg[len] == '/'));
		break;
	}
	fclose(f);
	return in;
}

bool target__keep(void *ctx, const struct procscan_thread *pt)
{
	const struct target *t = ctx;

	if (t->mode == LX_TARGET_CGROUP)
		return thread_in_cgroup(t, pt);
	for (size_t i = 0; i < t->npids; i++)
		if (t->pids[i] == pt->pid)
			return true;
	return t->mode == LX_TARGET_ALL;
}

bool target__pid_gone(uint32_t pid)
{
	struct procscan_thread info;

	return procscan__thread("/proc", pid, &info) || info.state == 'Z' || info.state == 'X';
}

void target__free(struct target *t)
{
	if (!t)
		return;
	free(t->pids);
	free(t->cgroup_path);
	free(t->cgroup_dir);
	free(t);
}
