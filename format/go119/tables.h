/* tables.h - the go1.19 writer's own string and stack tables behind format/tables.h's
 * interface: each string and stack defined in the batch of the P passed. */
#ifndef LXTRACE_FORMAT_GO119_TABLES_H
#define LXTRACE_FORMAT_GO119_TABLES_H

#include "format/tables.h"
#include "format/go119/writer.h"

/* The tables of the go1.19 writer w, which must outlive *out's use. */
void gt_tables__writer(struct gt_tables *out, struct gt_writer *w);

#endif
