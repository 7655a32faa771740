/* tables.h - strings and stacks kept by id for the go1.23 writer, which takes them by
 * content (format/go123/writer.h): the ids are the model's (format/tables.h), the content is
 * what the writer gets. Each distinct string or stack has one id while remembered; memory is
 * bounded as the go1.19 writer's tables are (format/dedup.h): a generation of budget bytes, the
 * previous one forgotten when the current one is full.
 */
#ifndef LXTRACE_FORMAT_GO123_TABLES_H
#define LXTRACE_FORMAT_GO123_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "format/tables.h"
#include "format/go123/writer.h"

struct go123_tables;

/* budget 0: GT_WRITER_TABLE_BUDGET. NULL with errno set. */
struct go123_tables *go123_tables__new(size_t budget);

/* The table as struct gt_tables (P arguments are ignored); valid while t lives. */
void go123_tables__as(struct go123_tables *t, struct gt_tables *out);

/* The content of string id, or NULL when the table does not know it (0 included). */
const char *go123_tables__string_of(const struct go123_tables *t, uint64_t id);

/* The frames of stack id, valid until the table's next string or stack; none (n = 0) when it
 * does not know it (0 included). */
struct go123_stack go123_tables__stack_of(const struct go123_tables *t, uint64_t id);

/* Accepts NULL. */
void go123_tables__free(struct go123_tables *t);

#endif
