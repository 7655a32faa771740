/* annotations.h - the model's memory of user annotations (include/lxtrace/annotate.h): the
 * trace id of every live task of every process, and the open regions of every goroutine.
 * It writes nothing; the model asks it what an annotation record means before writing it.
 *
 * Task ids in the trace are lxtrace's own, 1, 2, ... in order of first sight: a program's ids
 * are unique only within its process, and both Go parsers reject a task id begun twice.
 */
#ifndef LXTRACE_USER_ANNOTATIONS_H
#define LXTRACE_USER_ANNOTATIONS_H

#include <stdbool.h>
#include <stdint.h>

/* Largest program task id: (pid, id) is keyed in 64 bits, 22 of them for the pid. The API's
 * counter takes 2^42 tasks to get there. */
#define ANNOTATIONS_MAX_TASK_ID ((1ull << 42) - 1)

struct annotations;

/* NULL with errno set. */
struct annotations *annotations__new(void);

/* A fresh trace id for the task `id` that process pid begins. *reused is set when (pid, id)
 * was live already (its end was lost, or two counters gave the same id): the old trace task
 * stays open. 0 with errno set on failure (ERANGE: id too large). */
uint64_t annotations__task_begin(struct annotations *a, uint32_t pid, uint64_t id, bool *reused);

/* The trace id of task `id` of process pid, for a region, log, parent or end: 0 for the
 * background task 0; a task begun before the trace (or whose begin was lost) is given one
 * now. `end` forgets the task. 0 with errno set on failure. */
uint64_t annotations__task(struct annotations *a, uint32_t pid, uint64_t id, bool end);

/* Pushes region (task, name string id) on goroutine g's stack of open regions, with key, the
 * hash of the name's content. 0 or -ENOMEM. */
int annotations__region_push(struct annotations *a, uint64_t g, uint64_t task, uint64_t name,
			     uint64_t key);

/* How many regions of g are open inside the innermost open region of task whose name hashes
 * to key: 0 when it is the innermost; -1 when no open region matches. *open receives the number
 * of open regions. By content, not string id: the writer gives a name it forgot while the
 * region was open a new id (format/dedup.h). */
long annotations__region_find(const struct annotations *a, uint64_t g, uint64_t task, uint64_t key,
			      uint64_t *open);

/* Pops g's innermost open region into *task and *name; false when none is open. */
bool annotations__region_pop(struct annotations *a, uint64_t g, uint64_t *task, uint64_t *name);

/* Forgets g's regions (it ended). */
void annotations__forget(struct annotations *a, uint64_t g);

/* Accepts NULL. */
void annotations__free(struct annotations *a);

#endif
