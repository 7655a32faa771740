/* writer_gen.c - the go1.23 encoder's generations (writer_core.h): one ends when it has
 * lasted gen_ticks or holds gen_bytes, with every M's batch, its tables, its samples and its
 * Frequency written, so the file ends on a boundary Go 1.23 reads to; the next one opens with
 * the status of every thread and of every P a thread holds, which starts the sequence numbers
 * again (docs/format.md §18). */
#include <errno.h>
#include <stdlib.h>

#include "format/go123/writer_core.h"

/* Hands the generation gathered to the sink. */
static int hand_over(struct go123_writer *w)
{
	struct go123_generation g = { w->gen, w->gen_start, w->last_ts, w->gen_events,
				    w->whole.data, w->whole.len };
	int err = w->sink(w->sink_ctx, &g);

	w->whole.len = 0;
	return err;
}

int go123_writer_idle_proc(struct go123_writer *w, uint64_t ts, uint32_t p)
{
	struct proc *pr = &w->procs[p];

	if (pr->st != GO123_P_IDLE)
		return -EBUSY;
	if (pr->status_gen == w->gen)
		return 0;
	pr->status_gen = w->gen;
	return NOM(w, ts, GO123_EV_PROC_STATUS, p, GO123_P_IDLE);
}

/* Ends the generation: every M's batch, the tables, the samples, the frequency. */
static int end_generation(struct go123_writer *w)
{
	uint8_t f[1 + GT_MAX_VARINT_LEN];
	struct buf fb = { .data = f, .base = w->last_ts ? w->last_ts : 1 };
	int err = 0;

	if (!w->open)
		return 0;
	/* Go 1.23 refuses a generation without an event ("frontier is empty"): one that saw
	 * nothing says that a P is idle. Some P is: a held one has its status written already. */
	for (uint32_t p = 0; !w->gen_events && p < w->nprocs && !err; p++)
		if (w->procs[p].st == GO123_P_IDLE)
			err = go123_writer_idle_proc(w, fb.base, p);
	for (size_t i = 0; i < w->nthr && !err; i++) {
		struct buf *b = &w->thr[i].m;

		err = go123_writer_put_batch(w, w->thr[i].tid, b);
		/* A buffer grown for one busy generation is not kept for every later one. */
		free(b->data);
		*b = (struct buf){ 0 };
	}
	if (!err)
		err = go123_writer_put_batch(w, GO123_NO_THREAD, &w->nom);
	if (!err)
		err = go123_writer_put_batch(w, GO123_NO_THREAD, &w->strings);
	if (!err)
		err = go123_writer_put_batch(w, GO123_NO_THREAD, &w->stacks);
	if (!err)
		err = go123_writer_put_batch(w, GO123_NO_THREAD, &w->samples);
	if (!err) {
		f[0] = GO123_EV_FREQUENCY;
		fb.len = (size_t)(gt_varint_put(f + 1, w->freq) - f);
		w->held += fb.len;
		err = go123_writer_put_batch(w, GO123_NO_THREAD, &fb);
	}
	if (!err && (err = gt_outq__flush(w->out)))
		return go123_writer_fail(w, err);
	if (!err && w->sink && (err = hand_over(w)))
		return go123_writer_fail(w, err);
	if (err)
		return err;
	w->st.generations++;
	w->gen_events = w->gen_batches = 0;
	w->gen_mark = w->st.bytes = gt_outq__written(w->out);
	w->gen++;
	w->open = false;
	w->held = 0;
	gt_tracemap__clear(w->sids);
	gt_tracemap__clear(w->stkids);
	return 0;
}

/* Opens a generation at ts: every P a thread holds and every thread restate their status,
 * which also starts the sequence numbers again. */
static int begin_generation(struct go123_writer *w, uint64_t ts)
{
	int err = 0;

	w->open = true;
	w->gen_start = ts;
	for (uint32_t p = 0; p < w->nprocs; p++)
		w->procs[p].seq = 0;
	for (size_t i = 0; i < w->nthr && !err; i++) {
		struct thr *t = &w->thr[i];

		t->seq = 0;
		if (t->p >= 0) {
			struct proc *pr = &w->procs[t->p];

			pr->status_gen = w->gen;
			err = EV(w, t, ts, GO123_EV_PROC_STATUS, (uint64_t)t->p, pr->st);
		}
		if (err)
			break;
		if (t->p >= 0 || t->st == GO123_G_SYSCALL)
			err = EV(w, t, ts, GO123_EV_GO_STATUS, t->g, t->tid, t->st);
		else
			err = NOM(w, ts, GO123_EV_GO_STATUS, t->g, GO123_NO_THREAD, t->st);
	}
	return err;
}

int go123_writer_enter(struct go123_writer *w, uint64_t ts)
{
	int err;

	if (w->err)
		return w->err;
	if (!ts || ts < w->last_ts)
		return -EINVAL;
	go123_writer_epoch(w, ts);
	if (w->open && (ts - w->gen_start >= w->gen_ticks ||
			w->held + w->whole.len + gt_tracemap__bytes(w->sids) +
					gt_tracemap__bytes(w->stkids) >=
				w->gen_bytes)) {
		if ((err = end_generation(w)))
			return err;
	}
	w->last_ts = ts;
	return w->open ? 0 : begin_generation(w, ts);
}

int go123_writer__flush(struct go123_writer *w)
{
	if (w->err)
		return w->err;
	/* A file of the header alone is no trace to Go 1.23 (no Frequency): the first flush
	 * writes a generation, empty if need be. */
	if (!w->st.generations)
		w->open = true;
	return end_generation(w);
}

uint64_t go123_writer__generation(const struct go123_writer *w)
{
	return w->gen;
}
