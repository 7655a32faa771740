/* writer_tables.c - a generation's string and stack tables (writer_core.h): each string and
 * stack the calls give by content gets the generation's id, defined in its table batch the
 * first time it is used; a string longer than GT2_MAX_STRING or a stack deeper than
 * GT2_MAX_FRAMES is cut and counted. The ids start again with each generation (Go 1.23 reads
 * each generation's tables alone). */
#include <errno.h>
#include <string.h>

#include "format/v2/writer_core.h"

int gt2_writer_string_id(struct gt2_writer *w, const char *s, size_t len, uint64_t *id)
{
	uint8_t e[1 + 2 * GT_MAX_VARINT_LEN + GT2_MAX_STRING], *p = e;
	bool added;

	*id = 0;
	if (!s || !len)
		return 0;
	if (len > GT2_MAX_STRING) {
		len = GT2_MAX_STRING;
		w->st.cut++;
	}
	*id = gt_tracemap__put(w->sids, s, len, &added);
	if (!*id)
		return gt2_writer_fail(w, -ENOMEM);
	if (!added)
		return 0;
	*p++ = GT2_EV_STRING;
	p = gt_varint_put(p, *id);
	p = gt_varint_put(p, len);
	memcpy(p, s, len);
	w->st.strings++;
	return gt2_writer_table_add(w, &w->strings, GT2_EV_STRINGS, e, (size_t)(p - e) + len);
}

int gt2_writer_cstring_id(struct gt2_writer *w, const char *s, uint64_t *id)
{
	return gt2_writer_string_id(w, s, s ? strlen(s) : 0, id);
}

int gt2_writer_stack_id(struct gt2_writer *w, const struct gt2_stack *stk, uint64_t *id)
{
	uint8_t e[1 + 2 * GT_MAX_VARINT_LEN + GT2_MAX_FRAMES * 4 * GT_MAX_VARINT_LEN], *p = e;
	size_t n;
	bool added;
	int err;

	*id = 0;
	if (!stk || !stk->n)
		return 0;
	n = stk->n;
	if (n > GT2_MAX_FRAMES) {
		n = GT2_MAX_FRAMES;
		w->st.cut++;
	}
	for (size_t i = 0; i < n; i++)
		w->pcs[i] = stk->frames[i].pc;
	*id = gt_tracemap__put(w->stkids, w->pcs, n * sizeof(*w->pcs), &added);
	if (!*id)
		return gt2_writer_fail(w, -ENOMEM);
	if (!added)
		return 0;
	*p++ = GT2_EV_STACK;
	p = gt_varint_put(p, *id);
	p = gt_varint_put(p, n);
	for (size_t i = 0; i < n; i++) {
		const struct gt_frame *f = &stk->frames[i];
		uint64_t fn, file;

		if ((err = gt2_writer_cstring_id(w, f->func, &fn)) ||
		    (err = gt2_writer_cstring_id(w, f->file, &file)))
			return err;
		p = gt_varint_put(p, f->pc);
		p = gt_varint_put(p, fn);
		p = gt_varint_put(p, file);
		p = gt_varint_put(p, f->line);
	}
	w->st.stacks++;
	return gt2_writer_table_add(w, &w->stacks, GT2_EV_STACKS, e, (size_t)(p - e));
}
