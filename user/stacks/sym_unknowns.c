/* sym_unknowns.c - frames of unknown addresses in two generations (sym_unknowns.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/tracemap.h"
#include "lib/grow.h"
#include "user/stacks/sym_unknowns.h"

struct unknown {
	uint64_t id;
	char *func;		/* NULL: moved to the young generation */
};

/* One generation: (file, func) -> index + 1 in ents (the tracemap's dense ids). */
struct gen {
	struct gt_tracemap *keys;
	struct unknown *ents;
	size_t n, cap;
};

struct sym_unknowns {
	struct gen gen[2];
	int young;
	size_t gen_frames;
	uint64_t next_id;
};

struct sym_unknowns *sym_unknowns__new(size_t gen_frames)
{
	struct sym_unknowns *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->gen_frames = gen_frames < 1024 ? 1024 : gen_frames;
	u->next_id = SYM_UNKNOWN_ID;
	u->gen[0].keys = gt_tracemap__new();
	u->gen[1].keys = gt_tracemap__new();
	if (!u->gen[0].keys || !u->gen[1].keys) {
		sym_unknowns__free(u);
		errno = ENOMEM;
		return NULL;
	}
	return u;
}

/* The key of a frame: its file's interned address, then its func with the NUL. */
static size_t key_of(char *key, size_t size, const char *file, const char *func)
{
	size_t len = strnlen(func, size - sizeof(file) - 1);

	memcpy(key, &file, sizeof(file));
	memcpy(key + sizeof(file), func, len);
	key[sizeof(file) + len] = '\0';
	return sizeof(file) + len + 1;
}

static struct unknown *find(struct gen *g, const char *key, size_t len)
{
	uint64_t i = gt_tracemap__find(g->keys, key, len);

	return i && i <= g->n ? &g->ents[i - 1] : NULL;
}

/* Forgets the old generation, which becomes the young one. */
static void turn(struct sym_unknowns *u)
{
	struct gen *old = &u->gen[!u->young];

	for (size_t i = 0; i < old->n; i++)
		free(old->ents[i].func);
	old->n = 0;
	gt_tracemap__clear(old->keys);
	u->young = !u->young;
}

/* Puts (key, id, func) in the young generation, taking func. NULL on ENOMEM. */
static struct unknown *put(struct sym_unknowns *u, const char *key, size_t len, uint64_t id,
			   char *func)
{
	struct gen *g = &u->gen[u->young];
	bool added;
	uint64_t i;

	if (grow_array((void **)&g->ents, &g->cap, g->n + 1, sizeof(*g->ents), 1024))
		return NULL;
	i = gt_tracemap__put(g->keys, key, len, &added);
	if (!i || i != g->n + 1)
		return NULL;
	g->ents[g->n] = (struct unknown){ id, func };
	return &g->ents[g->n++];
}

const char *sym_unknowns__get(struct sym_unknowns *u, const char *file, const char *func,
			      uint64_t *id)
{
	char key[sizeof(file) + 512];
	size_t len = key_of(key, sizeof(key), file, func);
	struct unknown *e = find(&u->gen[u->young], key, len);
	struct unknown *old;
	char *copy;

	if (e) {
		*id = e->id;
		return e->func;
	}
	/* Before looking in the old generation: what it holds may be forgotten now. */
	if (u->gen[u->young].n >= u->gen_frames)
		turn(u);
	old = find(&u->gen[!u->young], key, len);
	if (old && old->func) {
		/* Moved, not copied: the old generation forgets it without freeing it. */
		e = put(u, key, len, old->id, old->func);
		if (e)
			old->func = NULL;
	} else {
		copy = strdup(key + sizeof(file));
		e = copy ? put(u, key, len, u->next_id, copy) : NULL;
		if (e)
			u->next_id++;
		else
			free(copy);
	}
	if (!e)
		return NULL;
	*id = e->id;
	return e->func;
}

size_t sym_unknowns__held(const struct sym_unknowns *u)
{
	return u->gen[0].n + u->gen[1].n;
}

void sym_unknowns__free(struct sym_unknowns *u)
{
	if (!u)
		return;
	for (int g = 0; g < 2; g++) {
		for (size_t i = 0; i < u->gen[g].n; i++)
			free(u->gen[g].ents[i].func);
		free(u->gen[g].ents);
		gt_tracemap__free(u->gen[g].keys);
	}
	free(u);
}
