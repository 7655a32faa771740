/* procstat.c - parsing /proc/PID/stat (procstat.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "user/proc/procstat.h"

int procstat__parse(const char *text, struct procstat *out)
{
	const char *open_paren = strchr(text, '('), *close_paren = strrchr(text, ')'), *p;
	size_t len;

	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ' ||
	    !close_paren[2])
		return -EINVAL;
	len = (size_t)(close_paren - open_paren - 1);
	if (len >= LX_COMM_LEN)
		len = LX_COMM_LEN - 1;
	memcpy(out->comm, open_paren + 1, len);
	out->comm[len] = '\0';
	out->state = close_paren[2];
	out->fields = close_paren + 2;
	/* Field 3 is the state; 22 is the start time. */
	p = close_paren + 2;
	for (int field = 3; p && field < 22; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	out->has_starttime = p && sscanf(p, "%llu", &out->starttime) == 1;
	if (!out->has_starttime)
		out->starttime = 0;
	return 0;
}
