/* close.c - the events that end what a cut trace leaves open (close.h), from the state tracker
 * or from a failed writer's view of its file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/go119/close.h"
#include "format/pcs.h"

static bool proc_open(const struct gt_open_proc *p)
{
	return p->started || p->sweep || p->g;
}

int gt_close__plan(const struct gt_state *s, uint64_t ts, struct gt_open *o)
{
	const struct gt_pstat *ps = gt_state__procs(s);
	const struct gt_gcstat *gc = gt_state__gc(s);
	size_t n = gt_state__nprocs(s);

	memset(o, 0, sizeof(*o));
	o->ts = ts;
	o->gc = gc->gc;
	o->stw = gc->stw;
	if (gc->stw && (gc->stw_p < 0 || gc->stw_p >= UINT32_MAX))
		return -ERANGE;
	o->stw_p = (uint32_t)gc->stw_p;
	o->procs = calloc(n ? n : 1, sizeof(*o->procs));
	if (!o->procs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct gt_open_proc p = { (uint32_t)ps[i].id, ps[i].started, ps[i].sweep, ps[i].g };

		if (!proc_open(&p))
			continue;
		if (ps[i].id < 0 || ps[i].id >= UINT32_MAX) {
			gt_close__release(o);
			return -ERANGE;
		}
		o->procs[o->nprocs++] = p;
	}
	return 0;
}

void gt_close__release(struct gt_open *o)
{
	free(o->procs);
	o->procs = NULL;
	o->nprocs = 0;
}

bool gt_close__needed(const struct gt_open *o)
{
	return o->nprocs || o->gc || o->stw;
}

static int ev(struct gt_writer *w, uint32_t p, uint64_t ts, enum gt_type t, uint64_t a0,
	      uint64_t a1, uint64_t a2)
{
	const uint64_t args[3] = { a0, a1, a2 };

	return gt_writer__event(w, p, ts, t, args, gt_nvalues(t));
}

/* The note goroutine, on P p (stopped when it is done): created, run, logging, ended. */
static int write_note(struct gt_writer *w, uint64_t ts, bool started,
		      const struct gt_close_note *n)
{
	struct gt_frame f = { GT_PC_NOTE, n->name, "[lxtrace]", 1 };
	uint64_t stk, key;
	int err = 0;

	if (!started)
		err = ev(w, n->p, ts, GT_EV_PROC_START, n->p, 0, 0);
	stk = err ? 0 : gt_writer__stack(w, n->p, &f, 1);
	key = stk ? gt_writer__string(w, n->p, n->key) : 0;
	if (!err && !key)
		err = -errno;
	if (!err)
		err = ev(w, n->p, ts, GT_EV_GO_CREATE, n->goid, stk, 0);
	if (!err)
		err = ev(w, n->p, ts, GT_EV_GO_START, n->goid, 1, 0);
	if (!err)
		err = gt_writer__user_log(w, n->p, ts, 0, key, stk, n->msg, strlen(n->msg));
	if (!err)
		err = ev(w, n->p, ts, GT_EV_GO_END, 0, 0, 0);
	return err ? err : ev(w, n->p, ts, GT_EV_PROC_STOP, 0, 0, 0);
}

int gt_close__write(struct gt_writer *w, const struct gt_open *o, const struct gt_close_note *note)
{
	bool note_done = !note;
	int err = 0;

	for (size_t i = 0; i < o->nprocs && !err; i++) {
		const struct gt_open_proc *p = &o->procs[i];

		/* 1.23 makes a stop-the-world a range of the goroutine running it: end it first. */
		if (o->stw && o->stw_p == p->p)
			err = ev(w, p->p, o->ts, GT_EV_GC_STW_DONE, 0, 0, 0);
		if (!err && p->sweep)
			err = ev(w, p->p, o->ts, GT_EV_GC_SWEEP_DONE, 0, 0, 0);
		if (!err && p->g)
			err = ev(w, p->p, o->ts, GT_EV_GO_PREEMPT, 0, 0, 0);
		if (!err && note && note->p == p->p) {
			err = write_note(w, o->ts, p->started, note);
			note_done = true;
		} else if (!err && p->started) {
			err = ev(w, p->p, o->ts, GT_EV_PROC_STOP, 0, 0, 0);
		}
	}
	if (!err && o->stw) {
		bool done = false;

		for (size_t i = 0; i < o->nprocs; i++)
			done |= o->procs[i].p == o->stw_p;
		if (!done)
			err = ev(w, o->stw_p, o->ts, GT_EV_GC_STW_DONE, 0, 0, 0);
	}
	if (!err && o->gc)
		err = ev(w, o->nprocs ? o->procs[0].p : 0, o->ts, GT_EV_GC_DONE, 0, 0, 0);
	if (!err && !note_done)
		err = write_note(w, o->ts, false, note);
	return err ? err : gt_writer__flush(w);
}

/* Per P: a batch header and up to four events (stop-the-world, sweep, goroutine, P), 128 bytes
 * at most; the note: its strings, its stack and five events around a 512-byte message, well
 * under 4 KiB. */
size_t gt_close__reserve(uint32_t nprocs)
{
	return 4096 + 128 * (size_t)nprocs;
}

int gt_close__seal(const struct gt_writer *w, int fd, uint32_t nprocs,
		   const struct gt_close_note *note)
{
	struct gt_writer_pstate *ps = calloc(nprocs, sizeof(*ps));
	struct gt_writer_fstate fs;
	struct gt_open o = { 0 };
	struct gt_writer *aw = NULL;
	uint64_t sbase, kbase;
	int err;

	o.procs = calloc(nprocs, sizeof(*o.procs));
	err = ps && o.procs ? 0 : -ENOMEM;
	if (err)
		goto out;
	gt_writer__file_state(w, ps, &fs);
	o.ts = fs.last_ts;
	o.gc = fs.gc;
	o.stw = fs.stw;
	o.stw_p = fs.stw_p;
	if (!o.ts) {
		err = -ENODATA;
		goto out;
	}
	for (uint32_t p = 0; p < nprocs; p++) {
		struct gt_open_proc op = { p, ps[p].started, ps[p].sweep, ps[p].g };

		if (proc_open(&op))
			o.procs[o.nprocs++] = op;
	}
	gt_writer__max_ids(w, &sbase, &kbase);
	aw = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts),
		.fd = fd, .nprocs = nprocs, .append = true, .string_base = sbase,
		.stack_base = kbase });
	err = aw ? gt_close__write(aw, &o, note) : -errno;
out:
	gt_writer__free(aw);
	free(o.procs);
	free(ps);
	return err;
}
