/* offcpu.h - the report's time off the CPU: per reason a thread left it (I/O, lock, sleep,
 * pipe or socket, other waits, the run queue) count, total and p50/p99/max, and the stacks
 * it left with, the most time first. A stretch runs from the switch-out to the next run, the
 * wait for a CPU after the wakeup included, as bcc's offcputime counts it. */
#ifndef LXTRACE_USER_REPORT_OFFCPU_H
#define LXTRACE_USER_REPORT_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/hist.h"
#include "user/report/walk.h"

struct offcpu;

/* top: stacks shown. NULL with errno set. */
struct offcpu *offcpu__new(size_t top);

/* A walk_sink's offcpu. */
void offcpu__add(struct offcpu *o, const struct walk_thread *t, enum walk_off why,
		 const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at);

bool offcpu__ok(const struct offcpu *o);

/* The stretches off the CPU for a reason; the time of the stacks whose leaf function is
 * `leaf` (NULL: any) for that reason. For the tests. */
const struct hist *offcpu__hist(const struct offcpu *o, enum walk_off why);
uint64_t offcpu__stack_ns(const struct offcpu *o, enum walk_off why, const char *leaf);

/* What a reason is called in the report and the profiles: "sleep", "lock", ... */
const char *offcpu__reason(enum walk_off why);

void offcpu__print(const struct offcpu *o, bool hist, size_t depth, FILE *out);

/* The same figures as JSON, the key "offcpu" (docs/report.md, "JSON"). */
struct json;
void offcpu__json(const struct offcpu *o, bool hist, struct json *j);

/* Accepts NULL. */
void offcpu__free(struct offcpu *o);

#endif
