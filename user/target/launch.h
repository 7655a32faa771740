/* launch.h - the command of `lxtrace record -- COMMAND [ARGS...]`: started as a child that waits
 * until the tracer is attached, so nothing of its start is missed, then run (as the user who
 * ran sudo, unless told otherwise) and waited for.
 *
 * Lifecycle: launch__new (resolve and fork; the child waits) -> launch__pid (put it in the
 * target) -> launch__release (the child execs) -> launch__wait ... -> launch__free.
 */
#ifndef LXTRACE_USER_LAUNCH_H
#define LXTRACE_USER_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

/* Exit status of a command that could not be run, as a shell gives it. */
#define LAUNCH_CANNOT_RUN 127

struct launch;

/* Finds argv[0] (in $PATH unless it holds a '/') and forks the child, which waits. With
 * as_root false and SUDO_UID/SUDO_GID set, the child takes the invoking user's ids and groups
 * before exec. NULL with errno set; a command that cannot be found or run is reported on
 * stderr like a shell does ("lxtrace record: CMD: No such file or directory"). */
struct launch *launch__new(char *const argv[], bool as_root);

pid_t launch__pid(const struct launch *l);
/* The program the child will exec: argv[0] as found in $PATH. */
const char *launch__path(const struct launch *l);

/* Lets the child exec, and waits until it has (or failed to). Returns 0, or the negative errno
 * of the failure, reported on stderr; the child has then exited with LAUNCH_CANNOT_RUN. */
int launch__release(struct launch *l);

/* Whether the command has exited (waits for it with block); then *status is its exit code, or
 * 128 + the signal that killed it. Returns 1 when exited, 0 when still running, or -errno. */
int launch__wait(struct launch *l, bool block, int *status);

/* Sends sig to the command, if it is still running. */
void launch__signal(struct launch *l, int sig);

/* A child still waiting is let go without running the command; a command still running gets
 * SIGTERM and is reaped (lxtrace is failing). Accepts NULL. */
void launch__free(struct launch *l);

#endif
