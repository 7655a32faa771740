/* u64cache.h - a uint64_t -> uint64_t cache in bounded memory: two generations of a fixed
 * number of keys.
 *
 * For caches whose keys name things that come and go (processes, their addresses): a key is
 * put in the young generation; a key found in the old one moves to the young one; when the
 * young one holds its keys the old one is emptied and becomes the young one. A key in use
 * stays, a key unused for a whole generation is forgotten, and the cache holds at most twice
 * gen_keys keys. The caller must be able to rebuild what a forgotten key held.
 *
 * A value may own memory (a pointer to what the key names): a key lives in one generation at
 * a time, and the function set with u64cache__on_forget is told of each value the cache
 * forgets, once, so that it can free it. A value the caller got stays valid until then: at
 * least until the cache has taken gen_keys more keys.
 */
#ifndef LXTRACE_LIB_U64CACHE_H
#define LXTRACE_LIB_U64CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64cache;

/* gen_keys (> 0): keys a generation holds. NULL with errno set. */
struct u64cache *u64cache__new(size_t gen_keys);

/* Tells forget(key, val, ctx) of every value forgotten from now on: its generation emptied,
 * its key put again with another value, or the cache freed. */
void u64cache__on_forget(struct u64cache *c, void (*forget)(uint64_t key, uint64_t val,
							      void *ctx), void *ctx);

/* Whether key is cached, and its value in *val. A key of the old generation moves to the young
 * one; out of memory it is forgotten instead (a value that owns memory too: then the answer
 * is false). */
bool u64cache__get(struct u64cache *c, uint64_t key, uint64_t *val);

/* Caches key with val in the young generation. 0 or -ENOMEM (val is then not the cache's). */
int u64cache__put(struct u64cache *c, uint64_t key, uint64_t val);

/* Keys held in both generations. */
size_t u64cache__count(const struct u64cache *c);

/* Generations forgotten so far. */
uint64_t u64cache__generations(const struct u64cache *c);

/* Accepts NULL. */
void u64cache__free(struct u64cache *c);

#endif
