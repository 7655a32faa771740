/* cpu.h - the report's CPU samples (`lxtrace record -F`): per function the samples it was
 * the leaf of (self) and those it was anywhere on (total, once a sample), the processes'
 * frames among them; and the stacks sampled most. Samples of the idle task are counted
 * apart. */
#ifndef LXTRACE_USER_REPORT_CPU_H
#define LXTRACE_USER_REPORT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/walk.h"

struct cpu_report;

/* top: functions and stacks shown. NULL with errno set. */
struct cpu_report *cpu_report__new(size_t top);

/* A walk_sink's sample. */
void cpu_report__sample(struct cpu_report *c, const struct walk_thread *t,
			const struct gt_stack *stk, int64_t p, uint64_t at);

bool cpu_report__ok(const struct cpu_report *c);

/* Samples in all (idle ones not), in the idle task, and of function `func` as the leaf and
 * anywhere on the stack. For the tests. */
uint64_t cpu_report__samples(const struct cpu_report *c, uint64_t *idle);
void cpu_report__function(const struct cpu_report *c, const char *func, uint64_t *self,
			  uint64_t *total);

void cpu_report__print(const struct cpu_report *c, size_t depth, FILE *out);

/* The same figures as JSON, the key "cpu" (docs/report.md, "JSON"). */
struct json;
void cpu_report__json(const struct cpu_report *c, struct json *j);

/* Accepts NULL. */
void cpu_report__free(struct cpu_report *c);

#endif
