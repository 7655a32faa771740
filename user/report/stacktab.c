/* stacktab.c - stacks by content with counts and values, their strings interned
 * (stacktab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/report/stacktab.h"

struct stacktab {
	bool lines;
	struct u64map *names;	/* hash of a name -> index + 1 in strs (probing past collisions) */
	char **strs;
	size_t nstrs, strs_cap;
	struct u64map *stacks;	/* hash of (label, frames) -> index + 1 in v (probing as well) */
	struct st_entry *v;
	size_t n, cap;
	/* The entry a trace's stack definition went to last, by (stack id, label): a stack is
	 * hashed by content once per definition, not once per event. A hit must be the same
	 * definition, told by its address, which the reader's dictionary never hands to another
	 * while the table lives (stacktab.h): an id defined again is another. The seen entry is
	 * never read through its pointer, which may be the only thing left of it. */
	struct u64map *by_id;	/* hash of (id, label) -> index + 1 in seen */
	struct seen {
		const struct gt_stack *s;
		uint64_t id;
		size_t want;
		uint32_t label;
		size_t entry;
	} *seen;
	size_t nseen, seen_cap;
};

struct stacktab *stacktab__new(bool lines)
{
	struct stacktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->lines = lines;
	t->names = u64map__new();
	t->stacks = u64map__new();
	t->by_id = u64map__new();
	if (!t->names || !t->stacks || !t->by_id) {
		stacktab__free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

const char *stacktab__intern(struct stacktab *t, const char *s)
{
	uint64_t h = hash_bytes(HASH_BYTES_INIT, s, strlen(s)), *slot;
	bool added;

	for (;; h++) {
		slot = u64map__get(t->names, h);
		if (!slot)
			break;
		if (!strcmp(t->strs[*slot - 1], s))
			return t->strs[*slot - 1];
	}
	if (grow_array((void **)&t->strs, &t->strs_cap, t->nstrs + 1, sizeof(*t->strs), 64))
		return NULL;
	t->strs[t->nstrs] = strdup(s);
	if (!t->strs[t->nstrs])
		return NULL;
	slot = u64map__put(t->names, h, &added);
	if (!slot) {
		free(t->strs[t->nstrs]);
		return NULL;
	}
	*slot = ++t->nstrs;
	return t->strs[t->nstrs - 1];
}

static uint64_t key_of(const struct stacktab *t, uint32_t label, const struct gt_stack *s,
		       size_t n)
{
	uint64_t h = hash_bytes(HASH_BYTES_INIT, &label, sizeof(label));

	for (size_t i = 0; i < n; i++) {
		const struct gt_rframe *f = &s->frames[i];

		h = hash_bytes(h, f->func, strlen(f->func) + 1);
		h = hash_bytes(h, f->file, strlen(f->file) + 1);
		if (t->lines)
			h = hash_bytes(h, &f->line, sizeof(f->line));
	}
	return h;
}

static bool same(const struct stacktab *t, const struct st_entry *e, uint32_t label,
		 const struct gt_stack *s, size_t n)
{
	if (e->label != label || e->n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(e->frames[i].func, s->frames[i].func) ||
		    strcmp(e->frames[i].file, s->frames[i].file) ||
		    (t->lines && e->frames[i].line != s->frames[i].line))
			return false;
	return true;
}

/* The entry of (label, the first n frames of s), added when new: its index, or -ENOMEM. */
static long entry_of(struct stacktab *t, uint32_t label, const struct gt_stack *s, size_t n)
{
	uint64_t h, *slot;
	struct st_entry *e;
	bool added;

	for (h = key_of(t, label, s, n);; h++) {
		slot = u64map__get(t->stacks, h);
		if (!slot)
			break;
		if (same(t, &t->v[*slot - 1], label, s, n))
			return (long)(*slot - 1);
	}
	if (grow_array((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64))
		return -ENOMEM;
	e = &t->v[t->n];
	*e = (struct st_entry){ .label = label, .n = n };
	e->frames = calloc(n ? n : 1, sizeof(*e->frames));
	if (!e->frames)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		e->frames[i].func = stacktab__intern(t, s->frames[i].func);
		e->frames[i].file = stacktab__intern(t, s->frames[i].file);
		e->frames[i].line = s->frames[i].line;
		e->frames[i].pc = s->frames[i].pc;
		if (!e->frames[i].func || !e->frames[i].file) {
			free(e->frames);
			return -ENOMEM;
		}
	}
	slot = u64map__put(t->stacks, h, &added);
	if (!slot) {
		free(e->frames);
		return -ENOMEM;
	}
	*slot = ++t->n;
	return (long)(t->n - 1);
}

int stacktab__add(struct stacktab *t, uint32_t label, const struct gt_stack *s, size_t n,
		  uint64_t count, uint64_t value)
{
	size_t want = n;
	uint64_t h = 0, *slot = NULL;
	struct seen *x = NULL;
	long i;
	bool added;

	if (!s || n > s->n)
		n = s ? s->n : 0;
	if (s && s->id) {
		h = hash_mix(s->id ^ (uint64_t)label << 48);
		for (;; h++) {
			slot = u64map__get(t->by_id, h);
			if (!slot)
				break;
			x = &t->seen[*slot - 1];
			if (x->id == s->id && x->label == label && x->want == want)
				break;
			x = NULL;
		}
	}
	if (x && x->s == s) {
		i = (long)x->entry;
	} else {
		i = entry_of(t, label, s, n);
		if (i < 0)
			return (int)i;
		if (s && s->id && !x) {
			if (grow_array((void **)&t->seen, &t->seen_cap, t->nseen + 1, sizeof(*t->seen), 64) ||
			    !(slot = u64map__put(t->by_id, h, &added)))
				return -ENOMEM;
			*slot = ++t->nseen;
			x = &t->seen[t->nseen - 1];
		}
		if (x)
			*x = (struct seen){ s, s->id, want, label, (size_t)i };
	}
	t->v[i].count += count;
	t->v[i].value += value;
	return 0;
}

size_t stacktab__count(const struct stacktab *t)
{
	return t->n;
}

const struct st_entry *stacktab__entries(const struct stacktab *t)
{
	return t->v;
}

void stacktab__free(struct stacktab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].frames);
	free(t->strs);
	free(t->v);
	free(t->seen);
	u64map__free(t->names);
	u64map__free(t->stacks);
	u64map__free(t->by_id);
	free(t);
}
