/* sym_intern.c - the symbolizer's interned strings and frames, and the PCs frames are handed out
 * at, one frame per PC (sym_core.h, symbolize.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/tracemap.h"
#include "lib/grow.h"
#include "user/stacks/pcclaims.h"
#include "user/stacks/sym_core.h"
#include "user/stacks/sym_unknowns.h"

#define ADDR_MASK ((1ull << 47) - 1)
#define MAX_DEPTH_PC 255

int sym_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;

	if (grow_array(arr, cap, need, elem, 64))
		return -ENOMEM;
	if (*cap > old)		/* *arr may still be NULL otherwise: no memset of that */
		memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
	return 0;
}

const char *sym_intern(struct symbolizer *s, const char *str)
{
	size_t len = strlen(str);
	bool added;
	uint64_t id = gt_tracemap__put(s->str_ids, str, len + 1, &added);

	if (!id)
		return NULL;
	if (added) {
		if (sym_grow((void **)&s->strs, &s->strs_cap, id, sizeof(*s->strs)))
			return NULL;
		s->strs[id - 1] = strdup(str);
	}
	return id <= s->strs_cap ? s->strs[id - 1] : NULL;
}

uint32_t sym_frame_id(struct symbolizer *s, const char *func, const char *file, uint64_t line)
{
	struct frame f = { sym_intern(s, func), sym_intern(s, file), line };
	bool added;
	uint64_t id;

	if (!f.func || !f.file)
		return 0;
	/* Interned strings are unique, so their addresses identify them. */
	id = gt_tracemap__put(s->frame_ids, &f, sizeof(f), &added);
	if (!id || id > UINT32_MAX)
		return 0;
	if (added) {
		if (sym_grow((void **)&s->frames, &s->frames_cap, id, sizeof(*s->frames)))
			return 0;
		s->frames[id - 1] = f;
	}
	return id <= s->frames_cap && s->frames[id - 1].func ? (uint32_t)id : 0;
}

int sym_emit_unknown(struct symbolizer *s, uint64_t a, struct sym_frame *out, const char *file,
		     const char *fmt, ...)
{
	const char *func;
	char name[512];
	uint64_t id, pc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	s->st.unknown++;
	file = sym_intern(s, file);
	func = file ? sym_unknowns__get(s->unknowns, file, name, &id) : NULL;
	pc = func ? pcclaims__claim(s->claims, a, id) : 0;
	if (!pc)
		return -ENOMEM;
	*out = (struct sym_frame){ pc, func, file, 0, false };
	return 1;
}

int sym_emit(struct symbolizer *s, uint64_t a, const uint32_t *ids, int n,
		struct sym_frame *out)
{
	for (int i = 0; i < n; i++) {
		const struct frame *f = &s->frames[ids[i] - 1];
		uint64_t depth = i < MAX_DEPTH_PC ? (uint64_t)i : MAX_DEPTH_PC;
		uint64_t pc = i ? SYM_PC_SYNTHETIC | depth << 47 | (a & ADDR_MASK) : a;

		pc = pcclaims__claim(s->claims, pc, ids[i]);
		if (!pc)
			return -ENOMEM;
		out[i] = (struct sym_frame){ pc, f->func, f->file, f->line, false };
	}
	return n;
}

int sym_emit_one(struct symbolizer *s, uint64_t a, uint32_t id, struct sym_frame *out)
{
	return id ? sym_emit(s, a, &id, 1, out) : -ENOMEM;
}
