/* cut.h - `lxtrace cut` on go1.23 traces: it copies whole generations, which need nothing
 * else (docs/format.md §18.10). Any run of consecutive generations after the header is a
 * trace: the run's first generation's statuses are where it starts. */
#ifndef LXTRACE_FORMAT_GO123_CUT_H
#define LXTRACE_FORMAT_GO123_CUT_H

#include <stddef.h>
#include <stdint.h>

struct go123_cut_report {
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
int go123_cut(int fd, int out_fd, uint64_t from_ns, uint64_t to_ns, struct go123_cut_report *rep,
	    char *err, size_t errlen);

#endif
