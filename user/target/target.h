/* target.h - what `lxtrace record` traces when it is not the whole machine: processes given by
 * pid (and their children), or a cgroup v2 and the cgroups below it. Validates what the user
 * named and answers, for the init phase, whether a thread alive at start belongs to it.
 *
 * Errors are reported on stderr as one line naming the option and the cause.
 */
#ifndef LXTRACE_USER_TARGET_H
#define LXTRACE_USER_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"
#include "user/proc/procscan.h"

struct target;

/* An empty target of mode LX_TARGET_PIDS; processes are added with target__add_pids or
 * target__add_pid. NULL with errno set. */
struct target *target__new_pids(void);

/* Whether list is "PID[,PID...]", each a positive number: -p's syntax, checked with the other
 * options before anything is looked up. */
bool target__pid_list_ok(const char *list);

/* Adds "PID[,PID...]" (as -p gives it): each must be a live process; a thread id stands for
 * its process. Returns 0 or a negative errno, reported. */
int target__add_pids(struct target *t, const char *list);

/* Adds one process that is known to exist (a command lxtrace started). */
int target__add_pid(struct target *t, uint32_t pid);

/* The cgroup v2 directory at path (LX_TARGET_CGROUP). NULL with errno set, reported, when the
 * path is missing or not a cgroup v2 directory. */
struct target *target__new_cgroup(const char *path);

enum lx_target_mode target__mode(const struct target *t);
size_t target__npids(const struct target *t);
uint32_t target__pid(const struct target *t, size_t i);
uint64_t target__cgroup_id(const struct target *t);
uint32_t target__cgroup_level(const struct target *t);
/* The directory --cgroup named (LX_TARGET_CGROUP), else NULL. */
const char *target__cgroup_dir(const struct target *t);

/* Whether a thread alive now belongs to the target (model_opts.keep); ctx is the target.
 * For pids: a thread of one of them; for a cgroup: a thread whose cgroup v2 is it or below. */
bool target__keep(void *ctx, const struct procscan_thread *pt);

/* Whether process pid has exited (gone, or a zombie). */
bool target__pid_gone(uint32_t pid);

/* Accepts NULL. */
void target__free(struct target *t);

#endif
