/* tables.c - the content table: a dedup table per kind (content -> id) and a map back (id ->
 * the content, one allocation each), freed when the dedup table forgets the id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/dedup.h"
#include "format/go123/tables.h"
#include "lib/grow.h"
#include "lib/u64map.h"

/* A stack's content: its frames, their strings after them. */
struct stack_entry {
	size_t n;
	struct gt_frame frames[];
};

struct kind {
	struct gt_dedup *ids;
	struct u64map *content;	/* id -> char * or struct stack_entry * */
};

struct go123_tables {
	struct kind k[2];	/* [0] strings, [1] stacks */
	uint8_t *key;		/* scratch: a stack's key */
	size_t key_cap;
};

static void forgot(void *ctx, uint64_t id)
{
	struct kind *k = ctx;
	uint64_t *v = u64map__get(k->content, id);

	if (v) {
		free((void *)(uintptr_t)*v);
		u64map__del(k->content, id);
	}
}

/* The id of key, added with content (malloc'd, taken) when new; 0 with errno set. */
static uint64_t intern(struct kind *k, const void *key, size_t len,
		       void *(*make)(const void *, size_t, void *), void *arg)
{
	uint64_t id = gt_dedup__find(k->ids, key, len), *v;
	bool added;
	void *c;

	if (id)
		return id;
	if (gt_dedup__full(k->ids))
		gt_dedup__rotate(k->ids, forgot, k);
	c = make(key, len, arg);
	if (!c || !(v = u64map__put(k->content, gt_dedup__next(k->ids), &added)))
		goto nomem;
	*v = (uint64_t)(uintptr_t)c;
	id = gt_dedup__add(k->ids, key, len, GT_DEDUP_WRITTEN);
	if (id)
		return id;
	u64map__del(k->content, gt_dedup__next(k->ids));
nomem:
	free(c);
	errno = ENOMEM;
	return 0;
}

static void *make_string(const void *key, size_t len, void *arg)
{
	char *s = malloc(len + 1);

	(void)arg;
	if (s) {
		memcpy(s, key, len);
		s[len] = '\0';
	}
	return s;
}

/* The key of a stack: per frame its PC and line, then its func and file with their NULs. */
static void *make_stack(const void *key, size_t len, void *arg)
{
	const struct go123_stack *stk = arg;
	struct stack_entry *e = malloc(sizeof(*e) + stk->n * sizeof(e->frames[0]) + len);
	char *s;

	(void)key;
	if (!e)
		return NULL;
	e->n = stk->n;
	s = (char *)&e->frames[stk->n];
	for (size_t i = 0; i < stk->n; i++) {
		const struct gt_frame *f = &stk->frames[i];
		size_t fl = strlen(f->func ? f->func : "") + 1;
		size_t il = strlen(f->file ? f->file : "") + 1;

		e->frames[i] = (struct gt_frame){ .pc = f->pc, .func = s, .file = s + fl,
						  .line = f->line };
		memcpy(s, f->func ? f->func : "", fl);
		memcpy(s + fl, f->file ? f->file : "", il);
		s += fl + il;
	}
	return e;
}

static uint64_t t_string(void *ctx, uint32_t p, const char *s)
{
	struct go123_tables *t = ctx;

	(void)p;
	return intern(&t->k[0], s, strlen(s), make_string, NULL);
}

static uint64_t t_stack(void *ctx, uint32_t p, const struct gt_frame *frames, size_t n)
{
	struct go123_tables *t = ctx;
	struct go123_stack stk = { frames, n };
	size_t len = 0;

	(void)p;
	if (!frames || !n || n > GT_MAX_STACK_FRAMES) {
		errno = EINVAL;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		len += 16 + strlen(frames[i].func ? frames[i].func : "") + 1 +
		       strlen(frames[i].file ? frames[i].file : "") + 1;
	if (grow_array((void **)&t->key, &t->key_cap, len, 1, 256)) {
		errno = ENOMEM;
		return 0;
	}
	len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *fn = frames[i].func ? frames[i].func : "";
		const char *fi = frames[i].file ? frames[i].file : "";

		memcpy(t->key + len, &frames[i].pc, 8);
		memcpy(t->key + len + 8, &frames[i].line, 8);
		len += 16;
		memcpy(t->key + len, fn, strlen(fn) + 1);
		len += strlen(fn) + 1;
		memcpy(t->key + len, fi, strlen(fi) + 1);
		len += strlen(fi) + 1;
	}
	return intern(&t->k[1], t->key, len, make_stack, &stk);
}

static bool t_live(const void *ctx, bool stack, uint64_t id)
{
	return gt_dedup__live(((const struct go123_tables *)ctx)->k[stack].ids, id);
}

static bool t_current(const void *ctx, bool stack, uint64_t id)
{
	return gt_dedup__current(((const struct go123_tables *)ctx)->k[stack].ids, id);
}

/* The writer has the stacks by content, interned in each generation's own table, and the
 * generations before the current one are in the file already. */
static int t_restack(void *ctx, uint32_t p, uint64_t id, const struct gt_frame *frames, size_t n)
{
	(void)ctx, (void)p, (void)id, (void)frames, (void)n;
	return -ENOTSUP;
}

static const struct gt_tables_ops ops = { t_string, t_stack, t_live, t_current, t_restack };

struct go123_tables *go123_tables__new(size_t budget)
{
	struct go123_tables *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	for (int i = 0; i < 2; i++) {
		t->k[i].ids = gt_dedup__new(0, budget ? budget : GT_WRITER_TABLE_BUDGET);
		t->k[i].content = u64map__new();
		if (!t->k[i].ids || !t->k[i].content) {
			go123_tables__free(t);
			errno = ENOMEM;
			return NULL;
		}
	}
	return t;
}

void go123_tables__as(struct go123_tables *t, struct gt_tables *out)
{
	*out = (struct gt_tables){ &ops, t };
}

const char *go123_tables__string_of(const struct go123_tables *t, uint64_t id)
{
	uint64_t *v = id ? u64map__get(t->k[0].content, id) : NULL;

	return v ? (const char *)(uintptr_t)*v : NULL;
}

struct go123_stack go123_tables__stack_of(const struct go123_tables *t, uint64_t id)
{
	uint64_t *v = id ? u64map__get(t->k[1].content, id) : NULL;
	const struct stack_entry *e = v ? (const struct stack_entry *)(uintptr_t)*v : NULL;

	return e ? (struct go123_stack){ e->frames, e->n } : (struct go123_stack){ NULL, 0 };
}

void go123_tables__free(struct go123_tables *t)
{
	if (!t)
		return;
	for (int i = 0; i < 2; i++) {
		if (t->k[i].content) {
			/* Every id the table still knows has its content here. */
			for (uint64_t id = 1; id <= gt_dedup__max_id(t->k[i].ids); id++)
				forgot(&t->k[i], id);
		}
		u64map__free(t->k[i].content);
		gt_dedup__free(t->k[i].ids);
	}
	free(t->key);
	free(t);
}
