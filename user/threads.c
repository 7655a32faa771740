/* threads.c - thread table: a u64 map from tid to an index into chunks that never move. */
#include <errno.h>
#include <stdlib.h>

#include "format/u64map.h"
#include "user/threads.h"

#define CHUNK_SHIFT 10
#define CHUNK_LEN (1u << CHUNK_SHIFT)

struct threads {
	struct gt_u64map *by_tid;	/* tid -> index */
	struct thread **chunks;		/* chunks[i >> CHUNK_SHIFT][i & (CHUNK_LEN - 1)] */
	size_t nchunks;
	size_t count;
};

struct threads *threads__new(void)
{
	struct threads *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->by_tid = gt_u64map__new();
	if (!ts->by_tid) {
		free(ts);
		return NULL;
	}
	return ts;
}

static struct thread *entry(const struct threads *ts, uint64_t i)
{
	return &ts->chunks[i >> CHUNK_SHIFT][i & (CHUNK_LEN - 1)];
}

struct thread *threads__find(const struct threads *ts, uint32_t tid)
{
	const uint64_t *i = gt_u64map__get(ts->by_tid, tid);

	return i ? entry(ts, *i) : NULL;
}

struct thread *threads__add(struct threads *ts, uint32_t tid)
{
	struct thread *t;
	uint64_t *slot;
	bool added;

	if (ts->count == ts->nchunks * CHUNK_LEN) {
		struct thread **nc = realloc(ts->chunks, (ts->nchunks + 1) * sizeof(*nc));

		if (!nc)
			return NULL;
		ts->chunks = nc;
		nc[ts->nchunks] = calloc(CHUNK_LEN, sizeof(struct thread));
		if (!nc[ts->nchunks])
			return NULL;
		ts->nchunks++;
	}
	slot = gt_u64map__put(ts->by_tid, tid, &added);
	if (!slot)
		return NULL;
	*slot = ts->count;
	t = entry(ts, ts->count++);
	t->tid = tid;
	return t;
}

void threads__free(struct threads *ts)
{
	if (!ts)
		return;
	for (size_t i = 0; i < ts->nchunks; i++)
		free(ts->chunks[i]);
	free(ts->chunks);
	gt_u64map__free(ts->by_tid);
	free(ts);
}
