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
	void (*forget)(uint64_t key, uint64_t val, void *ctx);	/* NULL: values own nothing */
	void *ctx;
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

void u64cache__on_forget(struct u64cache *c, void (*forget)(uint64_t key, uint64_t val,
							      void *ctx), void *ctx)
{
	c->forget = forget;
	c->ctx = ctx;
}

/* Empties a generation, telling of each value it forgets. */
static void forget_all(struct u64cache *c, struct u64map *gen)
{
	if (c->forget)
		u64map__each(gen, c->forget, c->ctx);
	u64map__clear(gen);
}

/* Takes key out of gen without forgetting its value: the caller holds it. */
static bool take(struct u64map *gen, uint64_t key, uint64_t *val)
{
	const uint64_t *v = u64map__get(gen, key);

	if (!v)
		return false;
	*val = *v;
	u64map__del(gen, key);
	return true;
}

int u64cache__put(struct u64cache *c, uint64_t key, uint64_t val)
{
	uint64_t *v, was;
	bool added;

	if (u64map__count(c->gen[c->young]) >= c->gen_keys) {
		c->young ^= 1;
		forget_all(c, c->gen[c->young]);
		c->generations++;
	}
	/* A value that owns memory is held once: the key's in the old generation goes. */
	if (c->forget && take(c->gen[c->young ^ 1], key, &was) && was != val)
		c->forget(key, was, c->ctx);
	v = u64map__put(c->gen[c->young], key, &added);
	if (!v)
		return -ENOMEM;
	if (!added && c->forget && *v != val)
		c->forget(key, *v, c->ctx);
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
	/* Moved, not copied: taken out first, as the put may empty the generation it was in. */
	if (!take(c->gen[c->young ^ 1], key, val))
		return false;
	if (!u64cache__put(c, key, *val) || !c->forget)
		return true;
	c->forget(key, *val, c->ctx);
	return false;
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
	for (int g = 0; g < 2; g++)
		if (c->gen[g])
			forget_all(c, c->gen[g]);
	u64map__free(c->gen[0]);
	u64map__free(c->gen[1]);
	free(c);
}
