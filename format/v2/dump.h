/* dump.h - a Go 1.22+ trace (docs/format.md §18) printed batch by batch, one line per event
 * with its raw arguments, as `go tool trace -d=2` splits the file, and checked as it splits
 * it: batch headers, sizes, generation order, known event types, table limits. It does not
 * follow the scheduler's state (Go 1.23's `-d=1` does). Memory is one batch. The tests hold
 * it against Go's split (golden_v2) and read the model's files back with it (fuzz_model);
 * `lxtrace dump` prints through the reader instead (format/v2/print.h). */
#ifndef LXTRACE_FORMAT_V2_DUMP_H
#define LXTRACE_FORMAT_V2_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "format/v2/wire.h"

/* Prints the batches of fd, positioned after its header, to f. 0; 1 on a bad file, with the
 * byte offset and the reason in err; -1 when f fails. */
int gt2_dump__file(int fd, FILE *f, char *err, size_t errlen);

#endif
