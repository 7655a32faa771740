/* folded.h - a profile (profile.h) as Brendan Gregg's folded stacks, for flamegraph.pl and
 * speedscope. */
#ifndef LXTRACE_USER_REPORT_FOLDED_H
#define LXTRACE_USER_REPORT_FOLDED_H

#include <stdio.h>

#include "user/report/profile.h"

/* One line per stack, root first: "PROGRAM;COMM (pid PID);...;LEAF VALUE" (VALUE: samples, or
 * ns: a syscall profile's calls' lengths, or their blocks' when the file has no returns), names
 * escaped (lib/escape.h) and a ';' in a name written ':'. 0 or a negative errno. */
int folded__write(const struct profile *p, FILE *out);

#endif
