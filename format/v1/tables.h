/* tables.h - the 1.19 writer's own string and stack tables behind format/tables.h's
 * interface: each string and stack defined in the batch of the P passed. */
#ifndef LXTRACE_FORMAT_V1_TABLES_H
#define LXTRACE_FORMAT_V1_TABLES_H

#include "format/tables.h"
#include "format/v1/writer.h"

/* The tables of the 1.19 writer w, which must outlive *out's use. */
void gt_tables__writer(struct gt_tables *out, struct gt_writer *w);

#endif
