/* gens.h - what repair.h and cut.h share: a go1.23 trace's reader from the file's start,
 * and bytes copied as they are (whole generations need nothing else, docs/format.md §18.10). */
#ifndef LXTRACE_FORMAT_GO123_GENS_H
#define LXTRACE_FORMAT_GO123_GENS_H

#include <stddef.h>
#include <stdint.h>

#include "format/go123/reader.h"

/* A reader of the trace on fd from its start; NULL with err. */
struct go123_reader *go123_gens__reader(int fd, char *err, size_t errlen);

/* Copies [from, to) of in to out's current offset. 0, or a negative errno with err. */
int go123_gens__copy(int in, int out, uint64_t from, uint64_t to, char *err, size_t errlen);

#endif
