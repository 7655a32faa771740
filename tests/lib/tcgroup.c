/* tcgroup.c - test cgroups (tcgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tcgroup.h"

static bool cgroup2_root(char *out, size_t len)
{
	char line[1024], mnt[512], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1)
			continue;
		snprintf(out, len, "%s", mnt);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

int tcgroup_make(char *path, size_t len)
{
	static unsigned made;
	char root[512];

	if (!cgroup2_root(root, sizeof(root)))
		return -ENOENT;
	snprintf(path, len, "%s/lxtrace-test-%d-%u", root, (int)getpid(), made++);
	return mkdir(path, 0755) ? -errno : 0;
}

int tcgroup_current(char *path, size_t len)
{
	char root[512], line[1024];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* The v2 hierarchy's line: "0::/PATH". */
		if (!strncmp(line, "0::", 3) && cgroup2_root(root, sizeof(root))) {
			snprintf(path, len, "%s%s", root, strcmp(line + 3, "/") ? line + 3 : "");
			err = 0;
		}
	}
	fclose(f);
	return err;
}

int tcgroup_move(const char *path, pid_t pid)
{
	char procs[1024], text[32];
	int fd, len, err = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	len = snprintf(text, sizeof(text), "%d\n", (int)pid);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)len) != len)
		err = -errno;
	close(fd);
	return err;
}

int tcgroup_remove(const char *path)
{
	for (int i = 0; i < 100; i++) {
		if (!rmdir(path))
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(20000);
	}
	return -EBUSY;
}
