/* syslat.h - the report's syscalls: per syscall, each call's length from its entry to its
 * return where the trace has both (--syscalls=all: count, total, p50/p99/max), and apart from
 * it the times calls blocked, each until the thread ran again (a call may block several
 * times: fdatasync, a read of a file not cached). Without returns (the default recording,
 * files recorded before go1.19 ones kept them) the blocks alone, and the calls entered. */
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
void syslat__call(struct syslat *s, const struct walk_thread *t, const char *sys, uint64_t ns,
		  uint64_t at);

bool syslat__ok(const struct syslat *s);

/* The times syscall `name` blocked, each off the CPU (NULL when none); its calls (entries)
 * into *entries. */
const struct hist *syslat__hist(const struct syslat *s, const char *name, uint64_t *entries);

/* The lengths of its calls that have one (NULL when none). */
const struct hist *syslat__calls(const struct syslat *s, const char *name);

void syslat__print(const struct syslat *s, bool hist, FILE *out);

/* The same figures as JSON, the key "syscalls" (docs/report.md, "JSON"); sorts as print. */
struct json;
void syslat__json(const struct syslat *s, bool hist, struct json *j);

/* Accepts NULL. */
void syslat__free(struct syslat *s);

#endif
