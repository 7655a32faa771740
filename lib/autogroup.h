/* autogroup.h - the share of the CPUs a process's session gets where the kernel schedules by
 * session (CONFIG_SCHED_AUTOGROUP with kernel.sched_autogroup_enabled = 1, Debian's default).
 *
 * There every session is a group of its own, and the groups share the CPUs equally whatever
 * their tasks' nice: a task's nice orders it among its own session's tasks only. So a reader
 * raised to nice -10 gets no more than any CPU hog that runs in a session of its own (each
 * command of a script started with setsid, each service, each terminal). The group's own nice
 * (/proc/PID/autogroup, sched(7)) weighs it against the others; it is the session's, so it
 * raises every process of it, and outlives the process that set it unless given back.
 */
#ifndef LXTRACE_LIB_AUTOGROUP_H
#define LXTRACE_LIB_AUTOGROUP_H

#include <stdbool.h>

struct autogroup {
	bool raised;	/* the session's nice was changed, and is to be given back */
	int was;	/* its nice before */
};

/* Raises the calling process's session to nice when the kernel schedules by session and the
 * session's nice is higher: 0 (also when there is nothing to do), or -errno (nothing changed;
 * -EPERM without CAP_SYS_NICE). proc_root: "/proc" unless a test substitutes one. */
int autogroup__raise(struct autogroup *g, const char *proc_root, int nice);

/* Gives the session the nice it had, if autogroup__raise changed it. */
void autogroup__restore(struct autogroup *g, const char *proc_root);

#endif
