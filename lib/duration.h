/* duration.h - the one way lxtrace reads a duration, wherever one is given (record -d and the
 * flight recorder's times, cut --from/--to, triggers' thresholds): decimal digits with an
 * optional fraction, then a unit (ns, us, ms, s), or none for seconds where the caller allows
 * it. Read exactly, in integer nanoseconds: "2.5" and "2500ms" are the same 2,500,000,000. */
#ifndef LXTRACE_LIB_DURATION_H
#define LXTRACE_LIB_DURATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The len bytes at s as ns into *ns. unit: a unit is required (a bare number is refused).
 * 0; -EINVAL for no number, a sign, or an unknown unit; -ENOMSG for a number without the
 * required unit; -ERANGE past 2^64 ns. */
int duration__parse(const char *s, size_t len, bool unit, uint64_t *ns);

#endif
