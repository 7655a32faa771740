/* intern.c - keys of bytes to handles in the order first met (intern.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/report/intern.h"

struct key {
	size_t len;
	char bytes[];	/* len bytes and a NUL */
};

struct intern {
	struct u64map *by_hash;	/* a key's hash -> handle + 1, probing past collisions */
	struct key **keys;
	size_t n, cap;
};

struct intern *intern__new(void)
{
	struct intern *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->by_hash = u64map__new();
	if (!t->by_hash) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

/* The slot of key, or of its hash's first free probe (*h then where to put it): NULL then. */
static uint64_t *find(const struct intern *t, const void *key, size_t len, uint64_t *h)
{
	uint64_t *slot;

	for (*h = hash_bytes(HASH_BYTES_INIT, key, len);; (*h)++) {
		slot = u64map__get(t->by_hash, *h);
		if (!slot)
			return NULL;
		if (t->keys[*slot - 1]->len == len && !memcmp(t->keys[*slot - 1]->bytes, key, len))
			return slot;
	}
}

long intern__get(const struct intern *t, const void *key, size_t len)
{
	uint64_t h, *slot = find(t, key, len, &h);

	return slot ? (long)(*slot - 1) : -1;
}

long intern__put(struct intern *t, const void *key, size_t len, bool *added)
{
	uint64_t h, *slot = find(t, key, len, &h);
	struct key *k;
	bool fresh;

	*added = false;
	if (slot)
		return (long)(*slot - 1);
	if (grow_array((void **)&t->keys, &t->cap, t->n + 1, sizeof(*t->keys), 64) ||
	    !(k = malloc(sizeof(*k) + len + 1)))
		return -ENOMEM;
	k->len = len;
	memcpy(k->bytes, key, len);
	k->bytes[len] = '\0';
	slot = u64map__put(t->by_hash, h, &fresh);
	if (!slot) {
		free(k);
		return -ENOMEM;
	}
	t->keys[t->n] = k;
	*slot = ++t->n;
	*added = true;
	return (long)(t->n - 1);
}

const void *intern__key(const struct intern *t, size_t h)
{
	return t->keys[h]->bytes;
}

size_t intern__count(const struct intern *t)
{
	return t->n;
}

const char *intern__str(struct intern *t, const char *s)
{
	bool added;
	long h = intern__put(t, s, strlen(s), &added);

	return h < 0 ? NULL : intern__key(t, (size_t)h);
}

void intern__free(struct intern *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	u64map__free(t->by_hash);
	free(t);
}
