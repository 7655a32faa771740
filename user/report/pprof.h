/* pprof.h - a profile (profile.h) in pprof's format: profile.proto, gzip'd, one sample per
 * stack and label, the functions known (nothing for pprof to symbolize), names escaped as
 * lxtrace prints them so the string table is UTF-8 whatever bytes the trace names. The
 * encoder is lxtrace's own on pbuf.h (docs/report.md, "Profiles", says why). */
#ifndef LXTRACE_USER_REPORT_PPROF_H
#define LXTRACE_USER_REPORT_PPROF_H

#include <stddef.h>

#include "user/report/profile.h"

/* p written to fd. 0, or a negative errno with a message in err. */
int pprof__write(const struct profile *p, int fd, char *err, size_t errlen);

#endif
