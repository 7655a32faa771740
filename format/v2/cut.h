/* cut.h - `lxtrace repair` and `lxtrace cut` on Go 1.22+ traces: both copy whole generations,
 * which need nothing else (docs/format.md §18.10). A prefix of the file ending on a generation
 * boundary is a trace, and so is any run of consecutive generations after the header: the
 * run's first generation's statuses are where it starts. */
#ifndef LXTRACE_FORMAT_V2_CUT_H
#define LXTRACE_FORMAT_V2_CUT_H

#include <stdint.h>

struct gt2_repair_report {
	uint64_t size;		/* bytes read */
	uint64_t kept;		/* bytes kept: the header and the whole generations */
	uint64_t generations;	/* kept */
	uint64_t events;	/* kept */
	char why[256];		/* why the rest was dropped, "" when nothing was */
};

/* Keeps of the trace on fd (read from its start) its header and its generations up to the
 * first one the reader refuses (format/v2/reader.h): into out_fd, or in place when out_fd is
 * -1 (fd then needs write access; the rest is truncated away). 0; -ENODATA when not even the
 * first generation is whole (err says why); another negative errno with err. */
int gt2_repair(int fd, int out_fd, struct gt2_repair_report *rep, char *err, size_t errlen);

struct gt2_cut_report {
	uint64_t from_ns, to_ns;	/* the window written: its generations' first and last
					 * events, in ns since the trace's first event */
	uint64_t first_gen, generations;
	uint64_t events, bytes;
};

/* Writes to out_fd the header and the generations of the trace on fd that hold an event (or
 * sample) in [from_ns, to_ns), counted from the trace's first event. 0; -ENODATA when no
 * generation does; another negative errno (-EINVAL: a generation up to the window's end the
 * reader refuses, or the window's generations read alone, their first one's statuses all
 * that is known, are refused) with err. */
int gt2_cut(int fd, int out_fd, uint64_t from_ns, uint64_t to_ns, struct gt2_cut_report *rep,
	    char *err, size_t errlen);

#endif
