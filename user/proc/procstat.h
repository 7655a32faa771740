/* procstat.h - the fields lxtrace reads from the text of /proc/PID/stat (or
 * /proc/PID/task/TID/stat): "PID (COMM) STATE ..." where COMM may hold spaces and parentheses,
 * so it ends at the last ')', and the start time (field 22, in clock ticks since boot), which
 * tells a process from a later one under the same pid. */
#ifndef LXTRACE_USER_PROC_PROCSTAT_H
#define LXTRACE_USER_PROC_PROCSTAT_H

#include <stdbool.h>

#include "bpf/lxtrace.h"

struct procstat {
	char comm[LX_COMM_LEN];		/* NUL-terminated, cut to LX_COMM_LEN - 1 */
	char state;			/* R, S, D, ... */
	const char *fields;		/* the text from the state (field 3) on, in the buffer */
	unsigned long long starttime;
	bool has_starttime;		/* false: the line ends before field 22 */
};

/* Parses text (NUL-terminated). 0, or -EINVAL when it is not such a line. */
int procstat__parse(const char *text, struct procstat *out);

#endif
