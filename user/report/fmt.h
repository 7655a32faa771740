/* fmt.h - how the report writes numbers and names in its 80 columns. */
#ifndef LXTRACE_USER_REPORT_FMT_H
#define LXTRACE_USER_REPORT_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/hist.h"
#include "user/report/stacktab.h"

/* A duration in at most 6 characters, three significant digits: "950ns", "12.3us", "1.20ms",
 * "123ms", "4.56s". buf holds at least FMT_DUR. */
#define FMT_DUR 16
const char *fmt__dur(char *buf, uint64_t ns);

/* Text another user controls (a thread's or program's name), escaped (lib/escape.h), in at most
 * width characters (the last a '~' when cut): into buf of at least width + 1 bytes. */
const char *fmt__cut(char *buf, size_t width, const char *s);

/* h's log2 buckets from its first to its last used, under a line "    WHAT, by length:", as
 * lines "    FROM .. TO  COUNT |***|". */
void fmt__log2(FILE *out, const char *what, const struct hist *h);

/* A stack's frames, leaf first, one a line indented: at most `max` frames of code, then the
 * thread's process and program frames on one line. */
void fmt__stack(FILE *out, const struct st_entry *e, size_t max);

#endif
