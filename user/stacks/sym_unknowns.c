/* sym_unknowns.c - frames of unknown addresses in two generations (sym_unknowns.h), kept in a
 * u64cache by a hash of their file and name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/u64cache.h"
#include "user/stacks/sym_unknowns.h"

/* A frame, the value its key holds; the cache frees it when it forgets the key. */
struct unknown {
	uint64_t id;
	const char *file;	/* interned: the same file is the same address */
	size_t len;
	char func[];
};

struct sym_unknowns {
	struct u64cache *frames;	/* hash of (file, func) -> struct unknown * */
	uint64_t next_id;
};

static void forget(uint64_t key, uint64_t val, void *ctx)
{
	free((struct unknown *)(uintptr_t)val);
}

struct sym_unknowns *sym_unknowns__new(size_t gen_frames)
{
	struct sym_unknowns *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->next_id = SYM_UNKNOWN_ID;
	u->frames = u64cache__new(gen_frames < 1024 ? 1024 : gen_frames);
	if (!u->frames) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u64cache__on_forget(u->frames, forget, NULL);
	return u;
}

const char *sym_unknowns__get(struct sym_unknowns *u, const char *file, const char *func,
			      uint64_t *id)
{
	size_t len = strlen(func);
	uint64_t key = hash_bytes(hash_bytes(HASH_BYTES_INIT, &file, sizeof(file)), func, len);
	struct unknown *e;
	uint64_t v;

	/* A key that holds another frame (the hashes collide) sends this one to the next key. A
	 * frame whose key's holder is forgotten before it is made again, with a new id, at the
	 * first free key, as any frame forgotten is. */
	for (; u64cache__get(u->frames, key, &v); key++) {
		e = (struct unknown *)(uintptr_t)v;
		if (e->file == file && e->len == len && !memcmp(e->func, func, len)) {
			*id = e->id;
			return e->func;
		}
	}
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	*e = (struct unknown){ u->next_id, file, len };
	memcpy(e->func, func, len);
	e->func[len] = '\0';
	if (u64cache__put(u->frames, key, (uintptr_t)e)) {
		free(e);
		return NULL;
	}
	u->next_id++;
	*id = e->id;
	return e->func;
}

size_t sym_unknowns__held(const struct sym_unknowns *u)
{
	return u64cache__count(u->frames);
}

void sym_unknowns__free(struct sym_unknowns *u)
{
	if (!u)
		return;
	u64cache__free(u->frames);
	free(u);
}
