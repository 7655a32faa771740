/* devino_map.c - (device, inode) -> value, collision-proof (devino_map.h). */
#include <errno.h>
#include <stdlib.h>

#include "lib/devino_map.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"

struct entry {
	uint64_t dev, ino, value;
	bool live;		/* false: deleted, kept so that lookups probe past it */
};

struct devino_map {
	struct u64map *keys;	/* hash of (dev, ino, salt) -> index in entries */
	struct entry *entries;
	size_t n, cap;
};

static uint64_t key_of(uint64_t dev, uint64_t ino, uint64_t salt)
{
	return hash_mix(hash_mix(dev ^ hash_mix(ino)) + salt);
}

/* The entry of (dev, ino), or where it would go: *slot (NULL: an unused key) and *free (a
 * deleted entry on the way, to reuse). */
static struct entry *find(const struct devino_map *m, uint64_t dev, uint64_t ino, uint64_t *key,
			  struct entry **free_entry)
{
	*free_entry = NULL;
	for (uint64_t salt = 0;; salt++) {
		const uint64_t *slot = u64map__get(m->keys, key_of(dev, ino, salt));
		struct entry *e;

		if (!slot) {
			*key = key_of(dev, ino, salt);
			return NULL;
		}
		e = &m->entries[*slot];
		if (e->live && e->dev == dev && e->ino == ino)
			return e;
		if (!e->live && !*free_entry)
			*free_entry = e;
	}
}

struct devino_map *devino_map__new(void)
{
	struct devino_map *m = calloc(1, sizeof(*m));

	if (m && !(m->keys = u64map__new())) {
		free(m);
		m = NULL;
	}
	return m;
}

uint64_t *devino_map__get(const struct devino_map *m, uint64_t dev, uint64_t ino)
{
	struct entry *reuse, *e;
	uint64_t key;

	e = find(m, dev, ino, &key, &reuse);
	return e ? &e->value : NULL;
}

uint64_t *devino_map__put(struct devino_map *m, uint64_t dev, uint64_t ino, bool *added)
{
	struct entry *reuse, *e;
	uint64_t key, *slot;
	bool fresh;

	e = find(m, dev, ino, &key, &reuse);
	*added = !e;
	if (e)
		return &e->value;
	if (!reuse) {
		if (grow_array((void **)&m->entries, &m->cap, m->n + 1, sizeof(*m->entries), 16))
			return NULL;
		slot = u64map__put(m->keys, key, &fresh);
		if (!slot)
			return NULL;
		*slot = m->n;
		reuse = &m->entries[m->n++];
	}
	*reuse = (struct entry){ dev, ino, 0, true };
	return &reuse->value;
}

void devino_map__del(struct devino_map *m, uint64_t dev, uint64_t ino)
{
	struct entry *reuse, *e;
	uint64_t key;

	e = find(m, dev, ino, &key, &reuse);
	if (e)
		e->live = false;
}

void devino_map__free(struct devino_map *m)
{
	if (!m)
		return;
	u64map__free(m->keys);
	free(m->entries);
	free(m);
}
