/* report.h - `lxtrace report`: what a trace says of scheduler latency, time off the CPU,
 * syscalls, CPU samples and what lxtrace lost or repaired, as text in 80 columns, in one
 * streaming pass over the file (walk.h). docs/report.md. */
#ifndef LXTRACE_USER_REPORT_REPORT_H
#define LXTRACE_USER_REPORT_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "user/report/walk.h"

enum report_section {
	REPORT_SCHED = 1 << 0,
	REPORT_OFFCPU = 1 << 1,
	REPORT_SYSCALLS = 1 << 2,
	REPORT_CPU = 1 << 3,
	REPORT_TRIGGERS = 1 << 4,	/* loss, repairs, triggers */
	REPORT_ALL = (1 << 5) - 1,
};

/* Frames of code of each stack a report shows unless told (--depth): most stacks' own code
 * in 80 columns, under the table that names them. */
#define REPORT_DEPTH 8

struct report_opts {
	unsigned sections;	/* enum report_section */
	bool hist;		/* log2 histograms under the rows */
	bool json;		/* JSON (docs/report.md, "JSON") rather than text */
	size_t top;		/* rows of each table */
	size_t depth;		/* frames of code shown of each stack; 0: REPORT_DEPTH */
	struct walk_filter filter;
};

/* The sections asked for (NULL for the others), filled by one walk over a file. */
struct report {
	struct sched_report *sched;
	struct offcpu *off;
	struct syslat *sys;
	struct cpu_report *cpu;
	struct notes *notes;
	struct walk_stats st;
};

/* Reads the trace open on fd into r. 0, or a negative errno with a one-line message in err
 * (r then holds nothing). */
int report__read(int fd, const struct report_opts *o, struct report *r, char *err,
		 size_t errlen);

/* Prints r; `name` is the file's name for its first line. */
void report__print(const struct report *r, const char *name, const struct report_opts *o,
		   FILE *out);

/* r as one JSON object (docs/report.md, "JSON"). 0, or -ENOMEM when a string could not be
 * escaped (the output then not whole). */
int report__json(const struct report *r, const char *name, const struct report_opts *o,
		 FILE *out);

/* Empties r. */
void report__free(struct report *r);

/* Reads the trace open on fd and prints the report on out, as text or (o->json) JSON. 0, or a
 * negative errno with a one-line message in err (nothing printed then). */
int report__file(int fd, const char *name, const struct report_opts *o, FILE *out, char *err,
		 size_t errlen);

#endif
