/* syslat.h - the report's syscalls: per syscall, the time each one that blocked kept its thread
 * off the CPU (count, total, p50/p99/max), and how many were entered where the trace has the
 * entries (--syscalls=all). A syscall that never blocked is seen only as an entry: the trace
 * has no exits, so its time is not known. */
#ifndef LXTRACE_USER_REPORT_SYSLAT_H
#define LXTRACE_USER_REPORT_SYSLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/hist.h"
#include "user/report/walk.h"

struct syslat;

/* top: syscalls shown. NULL with errno set. */
struct syslat *syslat__new(size_t top);

/* A walk_sink's offcpu (only those in a syscall count) and syscall. */
void syslat__offcpu(struct syslat *s, const struct walk_thread *t, enum walk_off why,
		    const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at);
void syslat__entry(struct syslat *s, const struct walk_thread *t, const char *sys, uint64_t at);

bool syslat__ok(const struct syslat *s);

/* The times of syscall `name` off the CPU (NULL when none), its entries into *entries. */
const struct hist *syslat__hist(const struct syslat *s, const char *name, uint64_t *entries);

void syslat__print(const struct syslat *s, bool hist, FILE *out);

/* Accepts NULL. */
void syslat__free(struct syslat *s);

#endif
