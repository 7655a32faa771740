/* filter_args.h - the options `lxtrace report` and `lxtrace pprof` share to choose threads
 * and a window: -p PID, --comm NAME, --from T, --to T (as `lxtrace cut` reads times). */
#ifndef LXTRACE_USER_CLI_FILTER_ARGS_H
#define LXTRACE_USER_CLI_FILTER_ARGS_H

#include <getopt.h>

#include "user/report/walk.h"

/* Their rows of a getopt_long table, and their letters for its short options. */
#define FILTER_ARGS_OPTIONS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "comm", required_argument, NULL, 'c' }, \
	{ "from", required_argument, NULL, 'f' }, \
	{ "to", required_argument, NULL, 't' }
#define FILTER_ARGS_SHORT "p:c:f:t:"

/* Their lines of --help. */
#define FILTER_ARGS_HELP \
	"  -p, --pid PID       only the threads of process PID\n" \
	"  -c, --comm NAME     only the threads named NAME or running program NAME\n" \
	"  -f, --from T        only what ends at T or later (seconds from the trace's\n" \
	"                      first event, or a number with ns, us, ms, s: as `cut`)\n" \
	"  -t, --to T          only what ends before T\n"

/* Applies option c (a letter above) with its value to f: 0, or 2 (the exit status of a usage
 * error) after a one-line message naming `cmd`; 1 when c is not one of them. */
int filter_args__apply(const char *cmd, int c, const char *value, struct walk_filter *f);

/* After the options: 0, or 2 after saying --from does not come before --to. */
int filter_args__check(const char *cmd, const struct walk_filter *f);

/* A count in [1, max], as --top takes it: 0 or -1. */
int filter_args__count(const char *s, unsigned long long max, unsigned long long *out);

#endif
