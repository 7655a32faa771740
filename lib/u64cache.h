/* u64cache.h - a uint64_t -> uint64_t cache in bounded memory: two generations of a fixed
 * number of keys.
 *
 * For caches whose keys name things that come and go (processes, their addresses): a key is
 * put in the young generation; a key found in the old one moves to the young one; when the
 * young one holds its keys the old one is emptied and becomes the young one. A key in use
 * stays, a key unused for a whole generation is forgotten, and the cache holds at most twice
 * gen_keys keys. The caller must be able to rebuild what a forgotten key held.
 */
#ifndef LXTRACE_LIB_U64CACHE_H
#define LXTRACE_LIB_U64CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64cache;

/* gen_keys (> 0): keys a generation holds. NULL with errno set. */
struct u64cache *u64cache__new(size_t gen_keys);

/* Whether key is cached, and its value in *val. A key of the old generation moves to the young
 * one; out of memory it stays where it is, to be forgotten with it. */
bool u64cache__get(struct u64cache *c, uint64_t key, uint64_t *val);

/* Caches key with val in the young generation. 0 or -ENOMEM. */
int u64cache__put(struct u64cache *c, uint64_t key, uint64_t val);

/* Entries held in both generations (a key that moved to the young one may count twice). */
size_t u64cache__count(const struct u64cache *c);

/* Generations forgotten so far. */
uint64_t u64cache__generations(const struct u64cache *c);

/* Accepts NULL. */
void u64cache__free(struct u64cache *c);

#endif
