/* tracemap.h - deduplicating table that gives each distinct byte key a dense id 1, 2, 3...;
 * the writer's string table and stack table (keyed by the stack's PCs) are both built on it. */
#ifndef LXTRACE_FORMAT_TRACEMAP_H
#define LXTRACE_FORMAT_TRACEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_tracemap;

/* NULL with errno set on failure. */
struct gt_tracemap *gt_tracemap__new(void);
/* The id of key, or 0 when it was never put. */
uint64_t gt_tracemap__find(const struct gt_tracemap *m, const void *key, size_t len);
/* The id of key, adding a copy of it when new (*added tells which). 0 with errno = ENOMEM. */
uint64_t gt_tracemap__put(struct gt_tracemap *m, const void *key, size_t len, bool *added);
/* Number of ids given so far, i.e. the largest id. */
uint64_t gt_tracemap__count(const struct gt_tracemap *m);
/* Bytes its keys and index take (the capacity reserved beyond them not counted). */
size_t gt_tracemap__bytes(const struct gt_tracemap *m);
/* Forgets every key: ids start at 1 again. The memory stays reserved for the next keys. */
void gt_tracemap__clear(struct gt_tracemap *m);
/* Accepts NULL. */
void gt_tracemap__free(struct gt_tracemap *m);

#endif
