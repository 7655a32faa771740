/* u64cache.c - two generations of u64map under a number of keys (u64cache.h). */
#include <errno.h>
#include <stdlib.h>

#include "lib/u64cache.h"
#include "lib/u64map.h"

struct u64cache {
	struct u64map *gen[2];	/* gen[young] and the older one */
	int young;
	size_t gen_keys;
	uint64_t generations;
};

struct u64cache *u64cache__new(size_t gen_keys)
{
	struct u64cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->gen_keys = gen_keys ? gen_keys : 1;
	c->gen[0] = u64map__new();
	c->gen[1] = u64map__new();
	if (!c->gen[0] || !c->gen[1]) {
		u64cache__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

int u64cache__put(struct u64cache *c, uint64_t key, uint64_t val)
{
	uint64_t *v;
	bool added;

	if (u64map__count(c->gen[c->young]) >= c->gen_keys) {
		c->young ^= 1;
		u64map__clear(c->gen[c->young]);
		c->generations++;
	}
	v = u64map__put(c->gen[c->young], key, &added);
	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

bool u64cache__get(struct u64cache *c, uint64_t key, uint64_t *val)
{
	const uint64_t *v = u64map__get(c->gen[c->young], key);

	if (v) {
		*val = *v;
		return true;
	}
	v = u64map__get(c->gen[c->young ^ 1], key);
	if (!v)
		return false;
	*val = *v;
	/* A put that fills the young generation empties this one, after *val was read. */
	u64cache__put(c, key, *val);
	return true;
}

size_t u64cache__count(const struct u64cache *c)
{
	return u64map__count(c->gen[0]) + u64map__count(c->gen[1]);
}

uint64_t u64cache__generations(const struct u64cache *c)
{
	return c->generations;
}

void u64cache__free(struct u64cache *c)
{
	if (!c)
		return;
	u64map__free(c->gen[0]);
	u64map__free(c->gen[1]);
	free(c);
}
