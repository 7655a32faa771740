/* dict.c - string and stack definitions of a trace, under a byte budget.
 *
 * A string is freed before the dictionary only when no stack names it (the frames of each
 * stack point at their strings). Each stack is one allocation (header and frames); when its id
 * is defined again the new definition takes the id and the old one is kept behind it (`older`),
 * so what an event resolved stays what it was written under for as long as the dictionary. The
 * budget counts what a definition costs here (bytes, frames and the index entries), kept ones
 * included, so no input can make the dictionary grow past it.
 *
 * A definition that only names frames its predecessor left unnamed (the recorder's JIT frames
 * named at the stop, docs/symbolize.md "Maps written after the stacks") refines it: a
 * dictionary that read the file whole marks it so (`refined`), and one reading the file again
 * takes, for each definition later refined, the names of its last refinement from the start
 * (gt_dict__refine_from), as Go's parsers show them for every event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/go119/dict.h"
#include "lib/grow.h"
#include "lib/u64map.h"

/* What an index entry costs beside the data: the map slot (counted twice for its load
 * factor) and the array slot. */
#define ENTRY_COST 40

struct dstack {
	struct dstack *older;	/* the definition this one replaced, kept for its readers */
	const struct dstack *final;	/* the refinement whose names it takes (another dict's) */
	uint32_t nth;		/* definitions of its id before it */
	bool refined;		/* the next definition of its id refines it */
	struct gt_stack pub;
	struct gt_rframe frames[];
};

/* A definition of a file read whole that a later one refines, and its last refinement. */
struct final {
	uint64_t id;
	uint32_t nth;
	const struct dstack *last;
};

struct dstring {
	uint64_t id;
	char s[];
};

struct gt_dict {
	const struct gt_dict *parent;
	uint64_t budget, bytes;
	struct u64map *string_ids;	/* id -> index in strings */
	struct dstring **strings;
	size_t nstrings, strings_cap;
	struct u64map *stack_ids;	/* id -> index in stacks */
	struct dstack **stacks;
	size_t nstacks, stacks_cap;
	uint64_t max_string, max_stack;
	struct final *finals;	/* by id, then nth (gt_dict__refine_from) */
	size_t nfinals;
};

struct gt_dict *gt_dict__new(const struct gt_dict *parent, uint64_t budget)
{
	struct gt_dict *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->parent = parent;
	d->budget = budget ? budget : GT_DICT_DEFAULT_BUDGET;
	d->string_ids = u64map__new();
	d->stack_ids = u64map__new();
	if (!d->string_ids || !d->stack_ids) {
		gt_dict__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

static int spend(struct gt_dict *d, uint64_t cost)
{
	if (cost > d->budget - d->bytes)
		return -E2BIG;
	d->bytes += cost;
	return 0;
}

int gt_dict__add_string(struct gt_dict *d, uint64_t id, const void *bytes, size_t len)
{
	uint64_t *slot;
	bool added;
	struct dstring *s;
	int err;

	if (!id || !len)
		return -EINVAL;
	if (gt_dict__string(d, id))
		return -EEXIST;
	err = spend(d, len + 1 + ENTRY_COST);
	if (err)
		return err;
	if (grow_array((void **)&d->strings, &d->strings_cap, d->nstrings + 1, sizeof(*d->strings),
		       64))
		return -ENOMEM;
	s = malloc(sizeof(*s) + len + 1);
	slot = s ? u64map__put(d->string_ids, id, &added) : NULL;
	if (!slot) {
		free(s);
		return -ENOMEM;
	}
	s->id = id;
	memcpy(s->s, bytes, len);
	s->s[len] = '\0';
	*slot = d->nstrings;
	d->strings[d->nstrings++] = s;
	if (id > d->max_string)
		d->max_string = id;
	return 0;
}

static void name_frames(const struct gt_dict *d, struct dstack *s)
{
	for (size_t i = 0; i < s->pub.n; i++) {
		struct gt_rframe *f = &s->frames[i];
		const char *fn = gt_dict__string(d, f->func_id),
			   *file = gt_dict__string(d, f->file_id);

		if (s->final) {
			f->pc = s->final->frames[i].pc;
			f->line = s->final->frames[i].line;
			fn = s->final->frames[i].func;
			file = s->final->frames[i].file;
		}
		f->func = fn ? fn : "";
		f->file = file ? file : "";
	}
}

/* What the recorder writes for a frame it could not name ("[unknown] 0x7f...", or "" for a
 * string never defined). */
static bool unnamed(const struct gt_rframe *f)
{
	return !*f->func || !strncmp(f->func, "[unknown]", 9);
}

/* Whether `to` only names frames `from` left unnamed, all else equal. */
static bool refines(const struct dstack *from, const struct dstack *to)
{
	if (from->pub.n != to->pub.n)
		return false;
	for (size_t i = 0; i < from->pub.n; i++) {
		const struct gt_rframe *a = &from->frames[i], *b = &to->frames[i];

		if (!unnamed(a) && (a->pc != b->pc || a->line != b->line ||
				    strcmp(a->func, b->func) || strcmp(a->file, b->file)))
			return false;
	}
	return true;
}

static int final_cmp(const void *a, const void *b)
{
	const struct final *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->nth < y->nth ? -1 : x->nth > y->nth;
}

/* The last refinement of s, defined the nth time under its id, when the file read whole refines
 * it (and refines it as s stands, should the file have changed since); else NULL. */
static const struct dstack *final_of(const struct gt_dict *d, const struct dstack *s)
{
	struct final key = { .id = s->pub.id, .nth = s->nth };
	const struct final *f;

	if (!d->nfinals)
		return NULL;
	f = bsearch(&key, d->finals, d->nfinals, sizeof(*d->finals), final_cmp);
	return f && refines(s, f->last) ? f->last : NULL;
}

int gt_dict__add_stack(struct gt_dict *d, uint64_t id, const uint64_t *vals, size_t n)
{
	size_t size = sizeof(struct dstack) + n * sizeof(struct gt_rframe);
	uint64_t *slot, cost;
	struct dstack *s;
	bool added;

	if (!id || !n)
		return -EINVAL;
	slot = u64map__get(d->stack_ids, id);
	/* A new id costs its index entry too; a redefinition keeps the old frames. */
	cost = size + (slot ? 0 : ENTRY_COST);
	if (cost > d->budget - d->bytes)
		return -E2BIG;
	if (!slot &&
	    grow_array((void **)&d->stacks, &d->stacks_cap, d->nstacks + 1, sizeof(*d->stacks), 64))
		return -ENOMEM;
	s = malloc(size);
	if (!s)
		return -ENOMEM;
	*s = (struct dstack){ .nth = slot ? d->stacks[*slot]->nth + 1 : 0,
			      .pub = (struct gt_stack){ id, n, s->frames } };
	for (size_t i = 0; i < n; i++)
		s->frames[i] = (struct gt_rframe){
			.pc = vals[4 * i], .func_id = vals[4 * i + 1], .file_id = vals[4 * i + 2],
			.line = vals[4 * i + 3] };
	name_frames(d, s);
	s->final = final_of(d, s);
	if (s->final)
		name_frames(d, s);
	if (slot) {
		s->older = d->stacks[*slot];
		s->older->refined = refines(s->older, s);
		d->stacks[*slot] = s;
	} else {
		slot = u64map__put(d->stack_ids, id, &added);
		if (!slot) {
			free(s);
			return -ENOMEM;
		}
		*slot = d->nstacks;
		d->stacks[d->nstacks++] = s;
	}
	d->bytes += cost;
	if (id > d->max_stack)
		d->max_stack = id;
	return 0;
}

bool gt_dict__forget_string(struct gt_dict *d, uint64_t id)
{
	uint64_t *slot = u64map__get(d->string_ids, id);
	size_t i;

	if (!slot)
		return false;
	i = *slot;
	d->bytes -= strlen(d->strings[i]->s) + 1 + ENTRY_COST;
	free(d->strings[i]);
	u64map__del(d->string_ids, id);
	if (i != --d->nstrings) {
		d->strings[i] = d->strings[d->nstrings];
		*u64map__get(d->string_ids, d->strings[i]->id) = i;
	}
	return true;
}

/* Frees a stack and the definitions it replaced; the bytes they cost. */
static uint64_t free_stack(struct dstack *s)
{
	uint64_t bytes = 0;

	while (s) {
		struct dstack *older = s->older;

		bytes += sizeof(*s) + s->pub.n * sizeof(struct gt_rframe);
		free(s);
		s = older;
	}
	return bytes;
}

bool gt_dict__forget_stack(struct gt_dict *d, uint64_t id)
{
	uint64_t *slot = u64map__get(d->stack_ids, id);
	size_t i;

	if (!slot)
		return false;
	i = *slot;
	d->bytes -= free_stack(d->stacks[i]) + ENTRY_COST;
	u64map__del(d->stack_ids, id);
	if (i != --d->nstacks) {
		d->stacks[i] = d->stacks[d->nstacks];
		*u64map__get(d->stack_ids, d->stacks[i]->pub.id) = i;
	}
	return true;
}

size_t gt_dict__nstacks(const struct gt_dict *d)
{
	return d->nstacks;
}

const struct gt_stack *gt_dict__stack_at(const struct gt_dict *d, size_t i)
{
	return i < d->nstacks ? &d->stacks[i]->pub : NULL;
}

const char *gt_dict__string(const struct gt_dict *d, uint64_t id)
{
	for (; d; d = d->parent) {
		const uint64_t *i = u64map__get(d->string_ids, id);

		if (i)
			return d->strings[*i]->s;
	}
	return NULL;
}

const struct gt_stack *gt_dict__stack(const struct gt_dict *d, uint64_t id)
{
	for (; d; d = d->parent) {
		const uint64_t *i = u64map__get(d->stack_ids, id);

		if (i)
			return &d->stacks[*i]->pub;
	}
	return NULL;
}

void gt_dict__resolve(struct gt_dict *d)
{
	for (size_t i = 0; i < d->nstacks; i++)
		name_frames(d, d->stacks[i]);
}

int gt_dict__refine_from(struct gt_dict *d, const struct gt_dict *whole)
{
	size_t n = 0, cap = 0;
	struct final *f = NULL;

	for (size_t i = 0; i < whole->nstacks; i++) {
		const struct dstack *last = whole->stacks[i];

		/* Newest first: each refined definition takes the last refinement after it. */
		for (const struct dstack *s = last->older; s; s = s->older) {
			if (!s->refined) {
				last = s;
				continue;
			}
			if (grow_array((void **)&f, &cap, n + 1, sizeof(*f), 64)) {
				free(f);
				return -ENOMEM;
			}
			f[n++] = (struct final){ s->pub.id, s->nth, last };
		}
	}
	if (n)
		qsort(f, n, sizeof(*f), final_cmp);
	free(d->finals);
	d->finals = f;
	d->nfinals = n;
	return 0;
}

uint64_t gt_dict__max_string_id(const struct gt_dict *d)
{
	uint64_t up = d->parent ? gt_dict__max_string_id(d->parent) : 0;

	return d->max_string > up ? d->max_string : up;
}

uint64_t gt_dict__max_stack_id(const struct gt_dict *d)
{
	uint64_t up = d->parent ? gt_dict__max_stack_id(d->parent) : 0;

	return d->max_stack > up ? d->max_stack : up;
}

uint64_t gt_dict__bytes(const struct gt_dict *d)
{
	return d->bytes;
}

void gt_dict__free(struct gt_dict *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
	for (size_t i = 0; i < d->nstacks; i++)
		free_stack(d->stacks[i]);
	free(d->strings);
	free(d->stacks);
	free(d->finals);
	u64map__free(d->string_ids);
	u64map__free(d->stack_ids);
	free(d);
}
