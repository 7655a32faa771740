/* tracemap.c - deduplicating table giving each distinct byte key a dense id (like Go's
 * runtime/tracemap.go). Keys are copied into one arena; the index holds entry numbers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/tracemap.h"
#include "lib/grow.h"
#include "lib/hash.h"

struct entry {
	uint64_t hash;
	size_t off;		/* of the key in the arena */
	size_t len;
};

struct gt_tracemap {
	uint32_t *index;	/* entry number + 1, 0 = empty */
	size_t mask;
	struct entry *entries;	/* entry i has id i + 1 */
	size_t nentries, entries_cap;
	uint8_t *arena;
	size_t arena_len, arena_cap;
};

/* The index masks the hash's low bits, where FNV-1a is weak: mixed. */
static uint64_t hash_key(const void *key, size_t len)
{
	return hash_mix(hash_bytes(HASH_BYTES_INIT, key, len));
}

struct gt_tracemap *gt_tracemap__new(void)
{
	struct gt_tracemap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mask = 63;
	m->index = calloc(m->mask + 1, sizeof(*m->index));
	if (!m->index) {
		free(m);
		return NULL;
	}
	return m;
}

static size_t lookup(const struct gt_tracemap *m, uint64_t h, const void *key, size_t len)
{
	size_t i;

	for (i = h & m->mask; m->index[i]; i = (i + 1) & m->mask) {
		const struct entry *e = &m->entries[m->index[i] - 1];

		if (e->hash == h && e->len == len && !memcmp(m->arena + e->off, key, len))
			break;
	}
	return i;
}

uint64_t gt_tracemap__find(const struct gt_tracemap *m, const void *key, size_t len)
{
	return m->index[lookup(m, hash_key(key, len), key, len)];
}

static int grow_index(struct gt_tracemap *m)
{
	size_t cap = (m->mask + 1) * 2;
	uint32_t *index = calloc(cap, sizeof(*index));

	if (!index)
		return -ENOMEM;
	free(m->index);
	m->index = index;
	m->mask = cap - 1;
	for (size_t n = 0; n < m->nentries; n++) {
		size_t i;

		for (i = m->entries[n].hash & m->mask; index[i]; i = (i + 1) & m->mask)
			;
		index[i] = (uint32_t)(n + 1);
	}
	return 0;
}

uint64_t gt_tracemap__put(struct gt_tracemap *m, const void *key, size_t len, bool *added)
{
	uint64_t h = hash_key(key, len);
	size_t i = lookup(m, h, key, len);
	struct entry *e;

	*added = false;
	if (m->index[i])
		return m->index[i];
	if (m->nentries >= UINT32_MAX - 1 ||
	    grow_array((void **)&m->entries, &m->entries_cap, m->nentries + 1, sizeof(*e), 64) ||
	    grow_array((void **)&m->arena, &m->arena_cap, m->arena_len + len, 1, 64))
		goto nomem;
	if ((m->nentries + 1) * 2 > m->mask + 1) {
		if (grow_index(m))
			goto nomem;
		i = lookup(m, h, key, len);
	}
	e = &m->entries[m->nentries++];
	e->hash = h;
	e->off = m->arena_len;
	e->len = len;
	if (len)
		memcpy(m->arena + m->arena_len, key, len);
	m->arena_len += len;
	m->index[i] = (uint32_t)m->nentries;
	*added = true;
	return m->nentries;
nomem:
	errno = ENOMEM;
	return 0;
}

uint64_t gt_tracemap__count(const struct gt_tracemap *m)
{
	return m->nentries;
}

size_t gt_tracemap__bytes(const struct gt_tracemap *m)
{
	return m->arena_len + m->nentries * sizeof(*m->entries) + (m->mask + 1) * sizeof(*m->index);
}

void gt_tracemap__clear(struct gt_tracemap *m)
{
	memset(m->index, 0, (m->mask + 1) * sizeof(*m->index));
	m->nentries = 0;
	m->arena_len = 0;
}

void gt_tracemap__free(struct gt_tracemap *m)
{
	if (!m)
		return;
	free(m->index);
	free(m->entries);
	free(m->arena);
	free(m);
}
