/* writer_batch.c - the go1.23 encoder's batches (writer_core.h): events and table entries
 * appended to an M's or a table's batch, whole batches handed to the output (a file, or the
 * generation gathered for a sink), and the failure that cuts the file back to the last
 * generation boundary, so that every prefix a reader sees ends on one (writer.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "format/go123/writer_core.h"
#include "lib/grow.h"

int go123_writer_grow(struct buf *b, size_t need)
{
	void *d = b->data;
	int err = grow_array(&d, &b->cap, b->len + need, 1, 256);

	b->data = d;
	return err;
}

/* What cannot be cut back is counted as torn. */
int go123_writer_fail(struct go123_writer *w, int err)
{
	off_t end = w->base + (off_t)w->gen_mark;

	w->err = err;
	w->st.lost += w->gen_events;
	w->st.batches -= w->gen_batches;
	if (w->sink || (w->base >= 0 && !ftruncate(w->fd, end) &&
			lseek(w->fd, end, SEEK_SET) == end))
		w->st.torn = 0;
	else
		w->st.torn = gt_outq__written(w->out) - w->gen_mark + gt_outq__torn(w->out, NULL);
	w->st.bytes = w->gen_mark;
	return err;
}

int go123_writer_gather(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr, size_t hlen,
		      const uint8_t *body, size_t blen)
{
	struct go123_writer *w = ctx;

	(void)b;
	if (go123_writer_grow(&w->whole, hlen + blen))
		return -ENOMEM;
	memcpy(w->whole.data + w->whole.len, hdr, hlen);
	memcpy(w->whole.data + w->whole.len + hlen, body, blen);
	w->whole.len += hlen + blen;
	return 0;
}

int go123_writer_put_batch(struct go123_writer *w, uint64_t m, struct buf *b)
{
	uint8_t hdr[1 + 4 * GT_MAX_VARINT_LEN], *p = hdr;
	/* The batch's times, for a sink; its P does not apply: it is an M's, or no one's. */
	struct gt_batch_info info = { UINT32_MAX, b->base, b->last };
	int err;

	if (!b->len)
		return 0;
	*p++ = GO123_EV_BATCH;
	p = gt_varint_put(p, w->gen);
	p = gt_varint_put(p, m);
	p = gt_varint_put(p, go123_writer_ticks(w, b->base));
	p = gt_varint_put(p, b->len);
	err = gt_outq__batch(w->out, &info, hdr, (size_t)(p - hdr), b->data, b->len);
	if (err)
		return go123_writer_fail(w, err);
	w->st.batches++;
	w->gen_batches++;
	w->held -= b->len;
	b->len = 0;
	return 0;
}

int go123_writer_table_add(struct go123_writer *w, struct buf *b, uint8_t kind,
			   const uint8_t *entry, size_t len)
{
	int err;

	if (b->len + len > GO123_MAX_BATCH && (err = go123_writer_put_batch(w, GO123_NO_THREAD, b)))
		return err;
	if (go123_writer_grow(b, len + 1))
		return go123_writer_fail(w, -ENOMEM);
	if (!b->len) {
		b->data[b->len++] = kind;
		b->base = w->last_ts ? w->last_ts : 1;
		w->held++;
	}
	memcpy(b->data + b->len, entry, len);
	b->len += len;
	w->held += len;
	return 0;
}

int go123_writer_ev(struct go123_writer *w, uint64_t m, struct buf *b, uint64_t ts, uint8_t t,
		  const uint64_t *args, unsigned nargs)
{
	uint8_t *p;
	int err;

	if (b->len + EV_ROOM > w->batch_size && (err = go123_writer_put_batch(w, m, b)))
		return err;
	if (go123_writer_grow(b, EV_ROOM))
		return go123_writer_fail(w, -ENOMEM);
	ts = go123_writer_event_time(w, ts);
	if (!b->len)
		b->base = b->last = ts;
	p = b->data + b->len;
	*p++ = t;
	p = gt_varint_put(p, ts - b->last);
	for (unsigned i = 0; i < nargs; i++)
		p = gt_varint_put(p, args[i]);
	w->held += (size_t)(p - (b->data + b->len));
	b->len = (size_t)(p - b->data);
	b->last = ts;
	w->st.events++;
	w->gen_events++;
	return 0;
}
