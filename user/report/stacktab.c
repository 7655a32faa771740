/* stacktab.c - stacks by content with counts and values, their strings interned
 * (stacktab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/report/intern.h"
#include "user/report/stacktab.h"

struct stacktab {
	bool lines;
	struct intern *names;	/* the frames' strings */
	/* An entry's key: its label, its frames' count, and each frame's function and file
	 * (their handles in names) and, with lines, line: the entry is the key's handle. */
	struct intern *keys;
	uint64_t *key;
	size_t key_cap;
	struct st_entry *v;
	size_t n, cap;
	/* The entry a trace's stack definition went to last, by (stack id, label, frames
	 * wanted): a stack is keyed by content once per definition, not once per event. A hit
	 * must be the same definition, told by its address, which the reader's dictionary never
	 * hands to another while the table lives (stacktab.h): an id defined again is another.
	 * The seen entry is never read through its pointer, which may be the only thing left of
	 * it. */
	struct intern *by_id;	/* (id, label, want) -> index in seen */
	struct seen {
		const struct gt_stack *s;
		size_t entry;
	} *seen;
	size_t seen_cap;
};

struct stacktab *stacktab__new(bool lines)
{
	struct stacktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->lines = lines;
	t->names = intern__new();
	t->keys = intern__new();
	t->by_id = intern__new();
	if (!t->names || !t->keys || !t->by_id) {
		stacktab__free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

const char *stacktab__intern(struct stacktab *t, const char *s)
{
	return intern__str(t->names, s);
}

/* The entry of (label, the first n frames of s), added when new: its index, or -ENOMEM. */
static long entry_of(struct stacktab *t, uint32_t label, const struct gt_stack *s, size_t n)
{
	size_t per = t->lines ? 3 : 2, len = 2 + n * per;
	struct st_entry *e;
	bool added;
	long i;

	if (grow_array((void **)&t->key, &t->key_cap, len, sizeof(*t->key), 64))
		return -ENOMEM;
	t->key[0] = label;
	t->key[1] = n;
	for (size_t k = 0; k < n; k++) {
		long func = intern__put(t->names, s->frames[k].func, strlen(s->frames[k].func),
					&added);
		long file = intern__put(t->names, s->frames[k].file, strlen(s->frames[k].file),
					&added);

		if (func < 0 || file < 0)
			return -ENOMEM;
		t->key[2 + k * per] = (uint64_t)func;
		t->key[3 + k * per] = (uint64_t)file;
		if (t->lines)
			t->key[4 + k * per] = s->frames[k].line;
	}
	i = intern__put(t->keys, t->key, len * sizeof(*t->key), &added);
	/* A key whose entry could not be made (out of memory) has none: the entries are the
	 * keys' first t->n. */
	if (i < 0 || (!added && (size_t)i < t->n))
		return i;
	if ((size_t)i != t->n)
		return -ENOMEM;
	if (grow_array((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64))
		return -ENOMEM;
	e = &t->v[t->n];
	*e = (struct st_entry){ .label = label, .n = n };
	e->frames = calloc(n ? n : 1, sizeof(*e->frames));
	if (!e->frames)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		e->frames[k].func = intern__key(t->names, t->key[2 + k * per]);
		e->frames[k].file = intern__key(t->names, t->key[3 + k * per]);
		e->frames[k].line = s->frames[k].line;
		e->frames[k].pc = s->frames[k].pc;
	}
	t->n++;
	return i;
}

int stacktab__add(struct stacktab *t, uint32_t label, const struct gt_stack *s, size_t n,
		  uint64_t count, uint64_t value)
{
	uint64_t id_key[3] = { s ? s->id : 0, label, n };
	struct seen *x = NULL;
	long i, seen = -1;
	bool added = false;

	if (!s || n > s->n)
		n = s ? s->n : 0;
	if (s && s->id) {
		seen = intern__put(t->by_id, id_key, sizeof(id_key), &added);
		if (seen < 0 || grow_array((void **)&t->seen, &t->seen_cap, (size_t)seen + 1,
					   sizeof(*t->seen), 64))
			return -ENOMEM;
		x = &t->seen[seen];
	}
	if (x && !added && x->s == s) {
		i = (long)x->entry;
	} else {
		i = entry_of(t, label, s, n);
		if (i < 0)
			return (int)i;
		if (x)
			*x = (struct seen){ s, (size_t)i };
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
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].frames);
	free(t->v);
	free(t->key);
	free(t->seen);
	intern__free(t->names);
	intern__free(t->keys);
	intern__free(t->by_id);
	free(t);
}
