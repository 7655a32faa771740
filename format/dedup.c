/* dedup.c - two generations of key -> id tables under a byte budget (dedup.h). */
#include <errno.h>
#include <stdlib.h>

#include "format/dedup.h"
#include "format/tracemap.h"
#include "lib/grow.h"
#include "lib/u64map.h"

/* One generation: its keys, and the id each has in the file. */
struct gen {
	struct gt_tracemap *keys;	/* key -> entry number */
	uint64_t *ids;			/* by entry number - 1 */
	size_t ids_cap;
	struct u64map *moved;		/* ids it took over from the generation before */
};

struct gt_dedup {
	struct gen gen[2];
	int cur;		/* gen[cur] is the current generation */
	size_t budget;
	uint64_t base;
	uint64_t next;		/* the id the next definition gets */
	uint64_t first;		/* the first id defined in the current generation */
	uint64_t prev_first;	/* and in the previous one */
	uint64_t *locs;		/* locations of ids first .. next - 1 */
	size_t locs_cap;
	struct gt_dedup_stats st;
};

struct gt_dedup *gt_dedup__new(uint64_t base, size_t budget)
{
	struct gt_dedup *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->budget = budget;
	d->base = base;
	d->next = d->first = d->prev_first = base + 1;
	for (int i = 0; i < 2; i++) {
		d->gen[i].keys = gt_tracemap__new();
		d->gen[i].moved = u64map__new();
	}
	if (!d->gen[0].keys || !d->gen[1].keys || !d->gen[0].moved || !d->gen[1].moved) {
		gt_dedup__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

/* What the current generation holds: its keys, their ids, the locations of its definitions. */
static size_t cur_bytes(const struct gt_dedup *d)
{
	const struct gen *g = &d->gen[d->cur];

	return gt_tracemap__bytes(g->keys) + gt_tracemap__count(g->keys) * sizeof(*g->ids) +
	       (d->next - d->first) * sizeof(*d->locs);
}

static int gen_put(struct gen *g, const void *key, size_t len, uint64_t id)
{
	uint64_t k = gt_tracemap__count(g->keys) + 1;
	bool added;

	if (grow_array((void **)&g->ids, &g->ids_cap, k, sizeof(*g->ids), 256) ||
	    gt_tracemap__put(g->keys, key, len, &added) != k)
		return -ENOMEM;
	g->ids[k - 1] = id;
	return 0;
}

uint64_t gt_dedup__find(struct gt_dedup *d, const void *key, size_t len)
{
	struct gen *cur = &d->gen[d->cur], *old = &d->gen[d->cur ^ 1];
	uint64_t k = gt_tracemap__find(cur->keys, key, len), id;

	if (k)
		return cur->ids[k - 1];
	k = gt_tracemap__find(old->keys, key, len);
	if (!k)
		return 0;
	id = old->ids[k - 1];
	/* Out of room or memory it stays in the previous generation only: defined again if it
	 * comes back after the next rotation. */
	if (!gt_dedup__full(d)) {
		bool added;

		if (u64map__put(cur->moved, id, &added) && gen_put(cur, key, len, id))
			u64map__del(cur->moved, id);
	}
	return id;
}

uint64_t gt_dedup__next(const struct gt_dedup *d)
{
	return d->next;
}

bool gt_dedup__full(const struct gt_dedup *d)
{
	return cur_bytes(d) >= d->budget;
}

void gt_dedup__rotate(struct gt_dedup *d, gt_dedup_forgot forgot, void *ctx)
{
	struct gen *cur = &d->gen[d->cur], *old = &d->gen[d->cur ^ 1];
	uint64_t n = gt_tracemap__count(old->keys);

	if (n)
		d->st.generations++;
	d->st.forgotten += n - u64map__count(cur->moved);
	for (uint64_t k = 0; forgot && k < n; k++)
		if (!u64map__get(cur->moved, old->ids[k]))
			forgot(ctx, old->ids[k]);
	gt_tracemap__clear(old->keys);
	u64map__clear(old->moved);
	d->cur ^= 1;
	d->prev_first = d->first;
	d->first = d->next;
}

bool gt_dedup__current(const struct gt_dedup *d, uint64_t id)
{
	return (id >= d->first && id < d->next) || u64map__get(d->gen[d->cur].moved, id);
}

bool gt_dedup__live(const struct gt_dedup *d, uint64_t id)
{
	if (id <= d->base || id >= d->next)
		return false;
	return id >= d->prev_first || u64map__get(d->gen[0].moved, id) ||
	       u64map__get(d->gen[1].moved, id);
}

uint64_t gt_dedup__add(struct gt_dedup *d, const void *key, size_t len, uint64_t loc)
{
	uint64_t id = d->next;

	if (grow_array((void **)&d->locs, &d->locs_cap, id - d->first + 1, sizeof(*d->locs), 256) ||
	    gen_put(&d->gen[d->cur], key, len, id)) {
		errno = ENOMEM;
		return 0;
	}
	d->locs[id - d->first] = loc;
	d->next++;
	d->st.defined++;
	return id;
}

int gt_dedup__loc(const struct gt_dedup *d, uint64_t id, uint64_t *loc)
{
	if (id <= d->base || id >= d->next)
		return -EINVAL;
	*loc = id >= d->first ? d->locs[id - d->first] : GT_DEDUP_WRITTEN;
	return 0;
}

uint64_t gt_dedup__max_id(const struct gt_dedup *d)
{
	return d->next - 1;
}

void gt_dedup__stats(const struct gt_dedup *d, struct gt_dedup_stats *out)
{
	const struct gen *old = &d->gen[d->cur ^ 1];

	*out = d->st;
	out->bytes = cur_bytes(d) + gt_tracemap__bytes(old->keys) +
		     gt_tracemap__count(old->keys) * sizeof(*old->ids);
}

void gt_dedup__free(struct gt_dedup *d)
{
	if (!d)
		return;
	for (int i = 0; i < 2; i++) {
		gt_tracemap__free(d->gen[i].keys);
		free(d->gen[i].ids);
		u64map__free(d->gen[i].moved);
	}
	free(d->locs);
	free(d);
}
