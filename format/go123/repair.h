/* repair.h - `lxtrace repair` on go1.23 traces: it keeps whole generations, which need
 * nothing else (docs/format.md §18.10). A prefix of the file ending on a generation boundary
 * is a trace. */
#ifndef LXTRACE_FORMAT_GO123_REPAIR_H
#define LXTRACE_FORMAT_GO123_REPAIR_H

#include <stddef.h>
#include <stdint.h>

struct go123_repair_report {
	uint64_t size;		/* bytes read */
	uint64_t kept;		/* bytes kept: the header and the whole generations */
	uint64_t generations;	/* kept */
	uint64_t events;	/* kept */
	char why[256];		/* why the rest was dropped, "" when nothing was */
};

/* Keeps of the trace on fd (read from its start) its header and its generations up to the
 * first one the reader refuses (format/go123/reader.h): into out_fd, or in place when out_fd is
 * -1 (fd then needs write access; the rest is truncated away). 0; -ENODATA when not even the
 * first generation is whole (err says why); another negative errno with err. */
int go123_repair(int fd, int out_fd, struct go123_repair_report *rep, char *err, size_t errlen);

#endif
