/* members.h - the threads in a target now, listed without a scan of /proc: those of its
 * processes (/proc/PID/task), or those in its cgroup and the cgroups below it (their
 * cgroup.threads). For the recording to find threads that joined it while asleep. */
#ifndef LXTRACE_USER_TARGET_MEMBERS_H
#define LXTRACE_USER_TARGET_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "user/target/target.h"

/* At most this many: a cgroup another user fills does not grow the list without bound. */
#define MEMBERS_MAX 65536

/* The tids in target t now (not its processes' children: their forks are recorded), in *tids
 * (malloc'd, NULL when none) and *n. 0 or -errno (out of memory); an unreadable directory or
 * file counts no thread. */
int target__threads(const struct target *t, uint32_t **tids, size_t *n);

#endif
