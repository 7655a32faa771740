/* tcgroup.h - cgroup v2 directories the tests make for --cgroup targets, and remove. */
#ifndef LXTRACE_TESTS_TCGROUP_H
#define LXTRACE_TESTS_TCGROUP_H

#include <stddef.h>
#include <sys/types.h>

/* Makes a new cgroup under the cgroup2 mount (/sys/fs/cgroup on a unified system,
 * /sys/fs/cgroup/unified on a hybrid) and puts its path in path. 0, -ENOENT without a cgroup2
 * mount, or -errno. */
int tcgroup_make(char *path, size_t len);

/* The cgroup v2 directory this process is in, in path (to move it back there). 0, -ENOENT
 * without a cgroup2 mount, or -errno. */
int tcgroup_current(char *path, size_t len);

/* Moves process pid, every thread of it, into the cgroup at path. 0 or -errno. */
int tcgroup_move(const char *path, pid_t pid);

/* Removes the cgroup at path once its killed tasks have left it (they do when reaped, just
 * after the kill): retries for up to 2 s. 0 or -errno. */
int tcgroup_remove(const char *path);

#endif
