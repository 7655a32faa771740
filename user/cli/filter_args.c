/* filter_args.c - -p, --comm, --from and --to of report and pprof (filter_args.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/duration.h"
#include "user/cli/filter_args.h"

int filter_args__count(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end || errno || !*out || *out > max ? -1 : 0;
}

int filter_args__apply(const char *cmd, int c, const char *value, struct walk_filter *f)
{
	unsigned long long v;

	switch (c) {
	case 'p':
		if (filter_args__count(value, UINT32_MAX, &v)) {
			fprintf(stderr, "lxtrace %s: bad pid '%s' (see lxtrace %s --help)\n", cmd,
				value, cmd);
			return 2;
		}
		f->pid = (uint32_t)v;
		return 0;
	case 'c':
		f->comm = value;
		return 0;
	case 'f':
	case 't':
		if (duration__parse(value, strlen(value), false,
				    c == 'f' ? &f->from_ns : &f->to_ns)) {
			fprintf(stderr, "lxtrace %s: bad time '%s' for --%s: seconds, or a number "
				"with ns, us, ms or s (see lxtrace %s --help)\n", cmd, value,
				c == 'f' ? "from" : "to", cmd);
			return 2;
		}
		return 0;
	default:
		return 1;
	}
}

int filter_args__check(const char *cmd, const struct walk_filter *f)
{
	if (f->from_ns < f->to_ns)
		return 0;
	fprintf(stderr, "lxtrace %s: --from must come before --to (see lxtrace %s --help)\n", cmd,
		cmd);
	return 2;
}
