/* u64map.c - open-addressing hash map from uint64_t keys to uint64_t values.
 *
 * Linear probing with backward-shift deletion, so there are no tombstones and a map whose
 * keys come and go (live goroutines) keeps short probe chains. Key 0 marks an empty slot;
 * the real key 0 lives outside the table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/u64map.h"

struct slot {
	uint64_t key;
	uint64_t val;
};

struct u64map {
	struct slot *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t count;		/* keys in slots, key 0 not included */
	bool has_zero;
	uint64_t zero_val;
};

static inline size_t slot_of(const struct u64map *m, uint64_t key)
{
	/* Goroutine ids and P ids are small and dense: mix them so they spread. */
	return (size_t)hash_spread(key) & m->mask;
}

struct u64map *u64map__new(void)
{
	struct u64map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mask = 15;
	m->slots = calloc(m->mask + 1, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void u64map__clear(struct u64map *m)
{
	memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
	m->has_zero = false;
}

void u64map__each(const struct u64map *m, void (*fn)(uint64_t key, uint64_t val, void *ctx),
		  void *ctx)
{
	if (m->has_zero)
		fn(0, m->zero_val, ctx);
	for (size_t i = 0; i <= m->mask; i++)
		if (m->slots[i].key)
			fn(m->slots[i].key, m->slots[i].val, ctx);
}

uint64_t *u64map__get(const struct u64map *m, uint64_t key)
{
	if (!key)
		return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
	for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
		struct slot *s = &m->slots[i];

		if (s->key == key)
			return &s->val;
		if (!s->key)
			return NULL;
	}
}

static int grow(struct u64map *m)
{
	size_t old_cap = m->mask + 1;
	struct slot *old = m->slots;
	struct slot *slots = calloc(old_cap * 2, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	m->slots = slots;
	m->mask = old_cap * 2 - 1;
	for (size_t j = 0; j < old_cap; j++) {
		size_t i;

		if (!old[j].key)
			continue;
		for (i = slot_of(m, old[j].key); slots[i].key; i = (i + 1) & m->mask)
			;
		slots[i] = old[j];
	}
	free(old);
	return 0;
}

uint64_t *u64map__put(struct u64map *m, uint64_t key, bool *added)
{
	size_t i;

	*added = false;
	if (!key) {
		if (!m->has_zero) {
			m->has_zero = true;
			m->zero_val = 0;
			*added = true;
		}
		return &m->zero_val;
	}
	for (i = slot_of(m, key); m->slots[i].key; i = (i + 1) & m->mask)
		if (m->slots[i].key == key)
			return &m->slots[i].val;
	/* Keep the load at most 1/2 so probe chains stay short. */
	if ((m->count + 1) * 2 > m->mask + 1) {
		if (grow(m)) {
			errno = ENOMEM;
			return NULL;
		}
		for (i = slot_of(m, key); m->slots[i].key; i = (i + 1) & m->mask)
			;
	}
	m->slots[i].key = key;
	m->slots[i].val = 0;
	m->count++;
	*added = true;
	return &m->slots[i].val;
}

void u64map__del(struct u64map *m, uint64_t key)
{
	size_t i, j;

	if (!key) {
		m->has_zero = false;
		return;
	}
	for (i = slot_of(m, key); m->slots[i].key != key; i = (i + 1) & m->mask)
		if (!m->slots[i].key)
			return;
	/* Backward shift: pull later members of the chain into the hole when their home
	 * slot does not lie cyclically in (hole, their slot]. */
	for (j = i;;) {
		size_t home;

		j = (j + 1) & m->mask;
		if (!m->slots[j].key)
			break;
		home = slot_of(m, m->slots[j].key);
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->count--;
}

size_t u64map__count(const struct u64map *m)
{
	return m->count + m->has_zero;
}

void u64map__free(struct u64map *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}
