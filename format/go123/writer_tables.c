/* writer_tables.c - a generation's string and stack tables (writer_core.h): each string and
 * stack the calls give by content gets the generation's id, defined in its table batch the
 * first time it is used; a string longer than GO123_MAX_STRING or a stack deeper than
 * GO123_MAX_FRAMES is cut and counted. The ids start again with each generation (Go 1.23 reads
 * each generation's tables alone). */
#include <errno.h>
#include <string.h>

#include "format/go123/writer_core.h"

int go123_writer_string_id(struct go123_writer *w, const char *s, size_t len, uint64_t *id)
{
	uint8_t e[1 + 2 * GT_MAX_VARINT_LEN + GO123_MAX_STRING], *p = e;
	bool added;

	*id = 0;
	if (!s || !len)
		return 0;
	if (len > GO123_MAX_STRING) {
		len = GO123_MAX_STRING;
		w->st.cut++;
	}
	*id = gt_tracemap__put(w->sids, s, len, &added);
	if (!*id)
		return go123_writer_fail(w, -ENOMEM);
	if (!added)
		return 0;
	*p++ = GO123_EV_STRING;
	p = gt_varint_put(p, *id);
	p = gt_varint_put(p, len);
	memcpy(p, s, len);
	w->st.strings++;
	return go123_writer_table_add(w, &w->strings, GO123_EV_STRINGS, e, (size_t)(p - e) + len);
}

int go123_writer_cstring_id(struct go123_writer *w, const char *s, uint64_t *id)
{
	return go123_writer_string_id(w, s, s ? strlen(s) : 0, id);
}

int go123_writer_stack_id(struct go123_writer *w, const struct go123_stack *stk, uint64_t *id)
{
	uint8_t e[1 + 2 * GT_MAX_VARINT_LEN + GO123_MAX_FRAMES * 4 * GT_MAX_VARINT_LEN], *p = e;
	size_t n;
	bool added;
	int err;

	*id = 0;
	if (!stk || !stk->n)
		return 0;
	n = stk->n;
	if (n > GO123_MAX_FRAMES) {
		n = GO123_MAX_FRAMES;
		w->st.cut++;
	}
	for (size_t i = 0; i < n; i++)
		w->pcs[i] = stk->frames[i].pc;
	*id = gt_tracemap__put(w->stkids, w->pcs, n * sizeof(*w->pcs), &added);
	if (!*id)
		return go123_writer_fail(w, -ENOMEM);
	if (!added)
		return 0;
	*p++ = GO123_EV_STACK;
	p = gt_varint_put(p, *id);
	p = gt_varint_put(p, n);
	for (size_t i = 0; i < n; i++) {
		const struct gt_frame *f = &stk->frames[i];
		uint64_t fn, file;

		if ((err = go123_writer_cstring_id(w, f->func, &fn)) ||
		    (err = go123_writer_cstring_id(w, f->file, &file)))
			return err;
		p = gt_varint_put(p, f->pc);
		p = gt_varint_put(p, fn);
		p = gt_varint_put(p, file);
		p = gt_varint_put(p, f->line);
	}
	w->st.stacks++;
	return go123_writer_table_add(w, &w->stacks, GO123_EV_STACKS, e, (size_t)(p - e));
}
