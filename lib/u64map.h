/* u64map.h - open-addressing hash map from uint64_t keys to uint64_t values. */
#ifndef LXTRACE_LIB_U64MAP_H
#define LXTRACE_LIB_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map;

/* NULL with errno set on failure. */
struct u64map *u64map__new(void);
/* Pointer to the value of key, or NULL. Valid until the next put or del. */
uint64_t *u64map__get(const struct u64map *m, uint64_t key);
/* Pointer to the value of key, inserted as 0 when absent (*added tells which); NULL with
 * errno = ENOMEM. Valid until the next put or del. */
uint64_t *u64map__put(struct u64map *m, uint64_t key, bool *added);
void u64map__del(struct u64map *m, uint64_t key);
size_t u64map__count(const struct u64map *m);
/* Calls fn with every key and its value, in no order; fn must not change m. */
void u64map__each(const struct u64map *m, void (*fn)(uint64_t key, uint64_t val, void *ctx),
		  void *ctx);
/* Removes every key; the table keeps its size for what comes next. */
void u64map__clear(struct u64map *m);
/* Accepts NULL. */
void u64map__free(struct u64map *m);

#endif
