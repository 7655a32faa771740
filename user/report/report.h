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
	REPORT_SYSCALLS = 1 << 1,
	REPORT_ALL = REPORT_SCHED | REPORT_SYSCALLS,
};

struct report_opts {
	unsigned sections;	/* enum report_section */
	bool hist;		/* log2 histograms under the rows */
	size_t top;		/* rows of each table */
	struct walk_filter filter;
};

/* Reads the trace open on fd and prints the report on out; `name` is the file's name for its
 * first line. 0, or a negative errno with a one-line message in err (nothing printed then). */
int report__file(int fd, const char *name, const struct report_opts *o, FILE *out, char *err,
		 size_t errlen);

#endif
