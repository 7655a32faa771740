/* print.h - text form of go1.23 events, one line each plus indented stack frames, for
 * `lxtrace dump` (docs/format.md §18.9). */
#ifndef LXTRACE_FORMAT_GO123_PRINT_H
#define LXTRACE_FORMAT_GO123_PRINT_H

#include <stdio.h>

#include "format/go123/reader.h"

/* Prints e, an event of r's current generation, as "TIME gen=N m=M Name arg=value ...", TIME
 * in ns since t0_ns, string arguments resolved and quoted through lib/escape, then one
 * "    func file:line pc=PC" line per frame of its stacks (GoCreate's new goroutine's with
 * "new: "). Returns 0 or -EIO when f fails. */
int go123_print__event(FILE *f, const struct go123_reader *r, const struct go123_event *e,
		    int64_t t0_ns);

#endif
