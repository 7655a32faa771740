/* annotations.c - task ids and open regions of user annotations (annotations.h). */
#include <errno.h>
#include <stdlib.h>

#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/model/annotations.h"

struct region {
	uint64_t task, name;
	uint64_t key;		/* the name's content, hashed */
};

/* One goroutine's open regions, innermost last; or a free entry, on the free list. */
struct rstack {
	struct region *r;
	size_t n, cap;
	size_t next_free;
};

struct annotations {
	struct u64map *tasks;	/* pid << 42 | program id -> trace id */
	struct u64map *regions;	/* goid -> index in stacks */
	struct rstack *stacks;
	size_t nstacks, cap_stacks;
	size_t free_stack;		/* first free entry + 1, 0 = none */
	uint64_t next_task;		/* the last trace id given out */
};

struct annotations *annotations__new(void)
{
	struct annotations *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->tasks = u64map__new();
	a->regions = u64map__new();
	if (!a->tasks || !a->regions) {
		annotations__free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

static int task_key(uint32_t pid, uint64_t id, uint64_t *key)
{
	if (id > ANNOTATIONS_MAX_TASK_ID || pid >= 1u << 22)
		return -ERANGE;
	*key = (uint64_t)pid << 42 | id;
	return 0;
}

uint64_t annotations__task_begin(struct annotations *a, uint32_t pid, uint64_t id, bool *reused)
{
	uint64_t key, *v;
	int err = task_key(pid, id, &key);

	if (err || !id) {
		errno = ERANGE;
		return 0;
	}
	v = u64map__put(a->tasks, key, reused);
	if (!v)
		return 0;
	*reused = !*reused;
	*v = ++a->next_task;
	return *v;
}

uint64_t annotations__task(struct annotations *a, uint32_t pid, uint64_t id, bool end)
{
	uint64_t key, trace_id, *v;
	bool added;

	if (!id)
		return 0;
	if (task_key(pid, id, &key)) {
		errno = ERANGE;
		return 0;
	}
	if (end) {
		v = u64map__get(a->tasks, key);
		trace_id = v ? *v : ++a->next_task;
		if (v)
			u64map__del(a->tasks, key);
		return trace_id;
	}
	v = u64map__put(a->tasks, key, &added);
	if (!v)
		return 0;
	if (added)
		*v = ++a->next_task;
	return *v;
}

static struct rstack *rstack(const struct annotations *a, uint64_t g)
{
	uint64_t *v = u64map__get(a->regions, g);

	return v ? &a->stacks[*v] : NULL;
}

/* g's stack, made empty when it has none. */
static struct rstack *rstack_of(struct annotations *a, uint64_t g)
{
	struct rstack *s = rstack(a, g);
	uint64_t *v;
	size_t i;
	bool added;

	if (s)
		return s;
	if (a->free_stack) {
		i = a->free_stack - 1;
	} else {
		if (grow_array((void **)&a->stacks, &a->cap_stacks, a->nstacks + 1,
			       sizeof(*a->stacks), 64))
			return NULL;
		i = a->nstacks;
		a->stacks[i] = (struct rstack){ 0 };
	}
	v = u64map__put(a->regions, g, &added);
	if (!v)
		return NULL;
	if (a->free_stack)
		a->free_stack = a->stacks[i].next_free;
	else
		a->nstacks++;
	*v = i;
	return &a->stacks[i];
}

int annotations__region_push(struct annotations *a, uint64_t g, uint64_t task, uint64_t name,
			     uint64_t key)
{
	struct rstack *s = rstack_of(a, g);

	if (!s || grow_array((void **)&s->r, &s->cap, s->n + 1, sizeof(*s->r), 8))
		return -ENOMEM;
	s->r[s->n++] = (struct region){ task, name, key };
	return 0;
}

long annotations__region_find(const struct annotations *a, uint64_t g, uint64_t task, uint64_t key,
			      uint64_t *open)
{
	const struct rstack *s = rstack(a, g);
	size_t n = s ? s->n : 0;

	*open = n;
	for (size_t i = n; i-- > 0;)
		if (s->r[i].task == task && s->r[i].key == key)
			return (long)(n - 1 - i);
	return -1;
}

bool annotations__region_pop(struct annotations *a, uint64_t g, uint64_t *task, uint64_t *name)
{
	struct rstack *s = rstack(a, g);

	if (!s || !s->n)
		return false;
	s->n--;
	*task = s->r[s->n].task;
	*name = s->r[s->n].name;
	return true;
}

/* Its entry keeps its array (emptied) for the next goroutine that opens a region. */
void annotations__forget(struct annotations *a, uint64_t g)
{
	uint64_t *v = u64map__get(a->regions, g);
	size_t i;

	if (!v)
		return;
	i = *v;
	u64map__del(a->regions, g);
	a->stacks[i].n = 0;
	a->stacks[i].next_free = a->free_stack;
	a->free_stack = i + 1;
}

void annotations__free(struct annotations *a)
{
	if (!a)
		return;
	u64map__free(a->tasks);
	u64map__free(a->regions);
	for (size_t i = 0; i < a->nstacks; i++)
		free(a->stacks[i].r);
	free(a->stacks);
	free(a);
}
