/* dump.h - text form of decoded events, one line each plus indented stack frames; used by
 * `lxtrace dump` and by tests that print a trace when they fail. */
#ifndef LXTRACE_FORMAT_GO119_DUMP_H
#define LXTRACE_FORMAT_GO119_DUMP_H

#include <stdio.h>

#include "format/go119/reader.h"

/* Prints e as "TIME p=P g=G Name arg=value ..." with TIME in ns since t0 (ticks at freq per
 * second), string arguments resolved through d and quoted, then one "    func file:line" line
 * per frame of its stack. Returns 0 or -EIO when f fails. */
int gt_dump__event(FILE *f, const struct gt_dict *d, uint64_t freq, const struct gt_event *e,
		   uint64_t t0);


/* Every event of t, t0 being the first one's time. */
int gt_dump__trace(FILE *f, const struct gt_trace *t);

#endif
