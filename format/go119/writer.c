/* writer.c - streaming encoder of go1.19 traces: per-P batches written in dependency order.
 *
 * Why an order at all: both Go parsers merge the per-P event streams by replaying each
 * goroutine's transitions (create, start, block, unblock, ...). A file cut after any batch
 * must still replay, so no written batch may hold an event whose cause sits in another P's
 * buffer that is not written yet. Likewise a string or stack must be written no later than
 * the batch that uses it (Go 1.23 panics on an undefined frame string).
 *
 * The scheme: every record lands in the open batch of some P; a batch is named by its P and
 * its generation (how many batches that P has written before it), packed into one uint64_t
 * "location". The writer remembers the location of each live goroutine's last ordered event,
 * of each string's and each stack's definition. When an event on P a needs something whose
 * location is P b's open batch, a records the edge "after (b, gen)". Writing a batch first
 * writes the open batches it depends on, recursively. An edge that would close a cycle
 * (b already waits for a) is avoided by writing a's batch first; a's new batch is empty and
 * nothing waits for it, so the edge is then safe.
 *
 * The string and stack tables forget what a generation left unused (format/dedup.h). Before a
 * table drops a generation, every open batch is written, so each definition it forgets is in
 * the file and an id it no longer knows needs no edge.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/dedup.h"
#include "format/go119/encode.h"
#include "format/outq.h"
#include "format/go119/writer.h"
#include "lib/grow.h"
#include "lib/u64map.h"

#define DEFAULT_BATCH_SIZE (64 * 1024)
#define MIN_BATCH_SIZE 128
#define STAGE_SIZE (64 * 1024)

/* A location packs a P's slot (low LOC_P_BITS) and the generation of that P's batch. */
#define LOC_P_BITS 24
#define MAX_PROCS (1u << LOC_P_BITS)
#define LOC(p, gen) ((uint64_t)(gen) << LOC_P_BITS | (p))
#define LOC_P(loc) ((uint32_t)((loc) & (MAX_PROCS - 1)))
#define LOC_GEN(loc) ((loc) >> LOC_P_BITS)
#define NO_LOC UINT64_MAX

/* GCStart events are ordered by their own sequence, like a goroutine's transitions. */
#define GC_PSEUDO_G UINT64_MAX

/* A P the caller wrote to: memory follows the Ps used and their bytes, never the P ids (a
 * file with one batch on P 999999 costs one proc). */
struct proc {
	uint32_t id;		/* the P's id in the file */
	uint8_t *buf;		/* grown to the batch size as events come */
	size_t len, cap;
	uint64_t gen;		/* batches of this P written so far */
	uint64_t base_ts;	/* the open batch's base time, valid when has_base */
	uint64_t last_ts;	/* time of this P's last event, across batches */
	bool has_base;
	bool writing;		/* guards the recursion of write_batch */
	uint64_t cur_g;		/* G running on this P, as the parsers will derive it */
	uint64_t *deps;		/* locations written before this P's open batch */
	uint32_t ndeps, deps_cap;
	uint64_t last_dep;	/* fast path: the edge added most recently */
	uint64_t mark;		/* cycle search epoch */
	bool started, sweep;	/* as the events taken so far leave this P */
	uint32_t nevents;	/* events in the open batch */
	/* The last GC and stop-the-world event in the open batch (a type, or GT_EV_NONE): those
	 * are global, and batches holding them are written in their order (GC_PSEUDO_G). */
	uint8_t gc_last, stw_last;
	/* The P as its last written batch leaves it: queued (maybe only staged by the output
	 * queue), and in the file. */
	struct gt_writer_pstate queued, file;
};

struct gt_writer {
	struct gt_outq *out;
	uint32_t nprocs;	/* P ids below this */
	size_t batch_size;
	uint64_t frequency;	/* still to be written into the first batch; 0 once written */
	uint64_t max_ts;
	int err;		/* sticky -errno */
	/* The Ps written to, in the order first written, by slot (the P of a location). The
	 * functions below take a P's slot (p or a); only the gt_writer__ ones take its id. */
	struct proc **procs;
	uint32_t *by_id;	/* slots in their Ps' ids' order, which batches leave in */
	size_t nslots, slots_cap, by_id_cap;
	bool by_id_stale;	/* a slot was added since by_id was sorted */
	struct u64map *slot_of;	/* P id -> slot + 1 */
	struct u64map *gs;	/* goid -> location of its last ordered event */
	struct gt_dedup *strings, *stacks;
	void (*forgot)(void *ctx, bool stack, uint64_t id);
	void *forgot_ctx;
	bool sink;		/* batches go to opts.sink */
	uint64_t *scratch;	/* stack record values */
	uint64_t epoch;
	/* The whole file as the batches queued leave it, and as those in the file do. */
	struct gt_writer_fstate queued_fs, file_fs;
	uint64_t queued_events, file_events;
	struct gt_writer_stats stats;
};

static int fail(struct gt_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return err;
}

static bool is_open(const struct gt_writer *w, uint64_t loc)
{
	return w->procs[LOC_P(loc)]->gen == LOC_GEN(loc);
}

/* The output queue wrote out everything queued: the file now holds it. */
static void commit(struct gt_writer *w)
{
	for (size_t a = 0; a < w->nslots; a++)
		w->procs[a]->file = w->procs[a]->queued;
	w->file_fs = w->queued_fs;
	w->file_events = w->queued_events;
}

static int write_batch(struct gt_writer *w, uint32_t a)
{
	struct proc *pr = w->procs[a];
	uint8_t hdr[GT_MAX_BATCH_HDR_LEN];
	uint64_t written, base;
	uint8_t *end;
	int err;

	if (pr->writing)	/* a cycle: add_dep never lets one form */
		return fail(w, -EDEADLK);
	pr->writing = true;
	for (uint32_t i = 0; i < pr->ndeps; i++) {
		if (!is_open(w, pr->deps[i]))
			continue;
		err = write_batch(w, LOC_P(pr->deps[i]));
		if (err) {
			pr->writing = false;
			return err;
		}
	}
	pr->writing = false;
	pr->ndeps = 0;
	pr->last_dep = NO_LOC;
	if (!pr->len)
		return 0;
	base = pr->has_base ? pr->base_ts : pr->last_ts;
	end = gt_encode_batch_header(hdr, pr->id, base, w->frequency);
	written = gt_outq__written(w->out);
	err = gt_outq__batch(w->out, &(struct gt_batch_info){ pr->id, base, pr->last_ts }, hdr,
			     (size_t)(end - hdr), pr->buf, pr->len);
	if (err)
		return fail(w, err);
	pr->queued = (struct gt_writer_pstate){ pr->started, pr->sweep, pr->cur_g };
	if (pr->last_ts > w->queued_fs.last_ts)
		w->queued_fs.last_ts = pr->last_ts;
	if (pr->gc_last)
		w->queued_fs.gc = pr->gc_last == GT_EV_GC_START;
	if (pr->stw_last) {
		w->queued_fs.stw = pr->stw_last == GT_EV_GC_STW_START;
		w->queued_fs.stw_p = pr->id;
	}
	w->queued_events += pr->nevents;
	pr->nevents = 0;
	pr->gc_last = pr->stw_last = GT_EV_NONE;
	if (gt_outq__written(w->out) != written)
		commit(w);
	w->frequency = 0;
	w->stats.batches++;
	pr->gen++;
	pr->len = 0;
	pr->has_base = false;
	return 0;
}

/* Does the open batch of P from wait, directly or not, for the open batch of P to? */
static bool waits_for(struct gt_writer *w, uint32_t from, uint32_t to)
{
	struct proc *pr = w->procs[from];

	if (from == to)
		return true;
	if (pr->mark == w->epoch)
		return false;
	pr->mark = w->epoch;
	for (uint32_t i = 0; i < pr->ndeps; i++)
		if (is_open(w, pr->deps[i]) && waits_for(w, LOC_P(pr->deps[i]), to))
			return true;
	return false;
}

/* Makes P a's open batch go out after whatever batch holds loc. */
static int add_dep(struct gt_writer *w, uint32_t a, uint64_t loc)
{
	struct proc *pr = w->procs[a];
	uint32_t b = LOC_P(loc), i;
	int err;

	if (b == a || pr->last_dep == loc || !is_open(w, loc))
		return 0;
	for (i = 0; i < pr->ndeps; i++) {
		if (pr->deps[i] == loc)
			goto done;
		/* An edge to an older batch of b is satisfied already: reuse its slot. */
		if (LOC_P(pr->deps[i]) == b)
			break;
	}
	w->epoch++;
	if (waits_for(w, b, a)) {
		err = write_batch(w, a);
		if (err)
			return err;
		i = 0;
	}
	if (i == pr->ndeps) {
		if (pr->ndeps == pr->deps_cap) {
			uint32_t cap = pr->deps_cap ? pr->deps_cap * 2 : 8;
			uint64_t *deps = realloc(pr->deps, cap * sizeof(*deps));

			if (!deps)
				return -ENOMEM;
			pr->deps = deps;
			pr->deps_cap = cap;
		}
		pr->ndeps++;
	}
	pr->deps[i] = loc;
done:
	pr->last_dep = loc;
	return 0;
}

/* Makes room for need more bytes in P a's batch, writing it when the batch size would be
 * passed. The buffer grows (doubling) to the batch size as the P's events come; a record
 * larger than a whole batch grows it past that rather than being refused. */
static int reserve(struct gt_writer *w, uint32_t a, size_t need)
{
	struct proc *pr = w->procs[a];
	size_t cap;
	uint8_t *buf;
	int err;

	if (pr->len + need <= pr->cap)
		return 0;
	if (pr->len && pr->len + need > w->batch_size) {
		err = write_batch(w, a);
		if (err)
			return err;
		if (need <= pr->cap)
			return 0;
	}
	for (cap = pr->cap ? pr->cap : MIN_BATCH_SIZE; cap < pr->len + need; cap *= 2)
		;
	if (cap > w->batch_size)
		cap = pr->len + need > w->batch_size ? pr->len + need : w->batch_size;
	buf = realloc(pr->buf, cap);
	if (!buf)
		return -ENOMEM;
	pr->buf = buf;
	pr->cap = cap;
	return 0;
}

/* The slot of P p (< nprocs), made on its first use: 0, or -ENOMEM. */
static int slot(struct gt_writer *w, uint32_t p, uint32_t *a)
{
	uint64_t *s = u64map__get(w->slot_of, p);
	struct proc *pr;
	bool added;

	if (s) {
		*a = (uint32_t)(*s - 1);
		return 0;
	}
	if (grow_array((void **)&w->procs, &w->slots_cap, w->nslots + 1, sizeof(*w->procs), 16) ||
	    grow_array((void **)&w->by_id, &w->by_id_cap, w->nslots + 1, sizeof(*w->by_id), 16))
		return -ENOMEM;
	pr = calloc(1, sizeof(*pr));
	s = pr ? u64map__put(w->slot_of, p, &added) : NULL;
	if (!s) {
		free(pr);
		return -ENOMEM;
	}
	pr->id = p;
	pr->last_dep = NO_LOC;
	w->procs[w->nslots] = pr;
	*a = (uint32_t)w->nslots;
	*s = *a + 1;
	w->by_id[w->nslots++] = *a;
	w->by_id_stale = true;
	return 0;
}

struct gt_writer *gt_writer__new(const struct gt_writer_opts *opts)
{
	struct gt_writer *w;
	size_t bsz, budget;
	int err;

	if (!opts || opts->sz < sizeof(*opts) || (opts->fd < 0 && !opts->sink) || !opts->nprocs ||
	    opts->nprocs > MAX_PROCS || (!opts->frequency && !opts->append)) {
		errno = EINVAL;
		return NULL;
	}
	bsz = opts->batch_size ? opts->batch_size : DEFAULT_BATCH_SIZE;
	if (bsz < MIN_BATCH_SIZE)
		bsz = MIN_BATCH_SIZE;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->nprocs = opts->nprocs;
	w->batch_size = bsz;
	w->frequency = opts->frequency;
	w->slot_of = u64map__new();
	w->out = opts->sink ? gt_outq__new_sink(opts->sink, opts->sink_ctx) :
			      gt_outq__new(opts->fd, STAGE_SIZE, opts->reserve);
	w->gs = u64map__new();
	budget = opts->table_budget ? opts->table_budget : GT_WRITER_TABLE_BUDGET;
	if (opts->sink) {
		w->sink = true;
		w->forgot = opts->forgot;
		w->forgot_ctx = opts->sink_ctx;
	}
	w->strings = gt_dedup__new(opts->string_base, budget);
	w->stacks = gt_dedup__new(opts->stack_base, budget);
	w->scratch = malloc(5 * GT_MAX_STACK_FRAMES * sizeof(*w->scratch));
	if (!w->slot_of || !w->out || !w->gs || !w->strings || !w->stacks || !w->scratch)
		goto nomem;
	err = opts->append ? 0 : gt_outq__bytes(w->out, GT_HEADER, GT_HEADER_LEN);
	if (!err)
		err = gt_outq__flush(w->out);
	if (err) {
		gt_writer__free(w);
		errno = -err;
		return NULL;
	}
	return w;
nomem:
	gt_writer__free(w);
	errno = ENOMEM;
	return NULL;
}

static uint64_t here(const struct gt_writer *w, uint32_t a)
{
	return LOC(a, w->procs[a]->gen);
}

static int by_p_id(const void *a, const void *b, void *ctx)
{
	const struct gt_writer *w = ctx;
	uint32_t x = w->procs[*(const uint32_t *)a]->id, y = w->procs[*(const uint32_t *)b]->id;

	return (x > y) - (x < y);
}

/* Writes every open batch, in dependency order, else in the order of the Ps' ids. */
static int write_all(struct gt_writer *w)
{
	if (w->by_id_stale) {
		qsort_r(w->by_id, w->nslots, sizeof(*w->by_id), by_p_id, w);
		w->by_id_stale = false;
	}
	for (size_t i = 0; i < w->nslots; i++) {
		int err = write_batch(w, w->by_id[i]);

		if (err)
			return err;
	}
	return 0;
}

static void forgot_string(void *ctx, uint64_t id)
{
	struct gt_writer *w = ctx;

	w->forgot(w->forgot_ctx, false, id);
}

static void forgot_stack(void *ctx, uint64_t id)
{
	struct gt_writer *w = ctx;

	w->forgot(w->forgot_ctx, true, id);
}

/* Makes room for a new definition in t: when its generation is full, the definitions it
 * made go out before it forgets where they are. */
static int make_room(struct gt_writer *w, struct gt_dedup *t)
{
	int err;

	if (!gt_dedup__full(t))
		return 0;
	err = write_all(w);
	if (!err)
		gt_dedup__rotate(t,
				 w->forgot ? t == w->stacks ? forgot_stack : forgot_string : NULL,
				 w);
	return err;
}

bool gt_writer__live(const struct gt_writer *w, bool stack, uint64_t id)
{
	return gt_dedup__live(stack ? w->stacks : w->strings, id);
}

bool gt_writer__current(const struct gt_writer *w, bool stack, uint64_t id)
{
	return gt_dedup__current(stack ? w->stacks : w->strings, id);
}

/* Makes P p's open batch follow the definition of id in t (0: none). */
static int use_id(struct gt_writer *w, uint32_t p, struct gt_dedup *t, uint64_t id)
{
	uint64_t loc;
	int err;

	if (!id)
		return 0;
	err = gt_dedup__loc(t, id, &loc);
	if (err || loc == GT_DEDUP_WRITTEN)
		return err;
	return add_dep(w, p, loc);
}

/* Interns s on P p and makes P p's open batch follow its definition. 0 stands for "". */
static int use_string(struct gt_writer *w, uint32_t p, const char *s, uint64_t *id)
{
	size_t len = s ? strlen(s) : 0;
	struct proc *pr = w->procs[p];
	int err;

	*id = 0;
	if (!len)
		return 0;
	if (len > GT_MAX_STRING_LEN)
		return -E2BIG;
	*id = gt_dedup__find(w->strings, s, len);
	if (*id)
		return use_id(w, p, w->strings, *id);
	err = make_room(w, w->strings);
	if (!err)
		err = reserve(w, p, gt_string_record_len(len));
	if (err)
		return err;
	*id = gt_dedup__add(w->strings, s, len, here(w, p));
	if (!*id)
		return -ENOMEM;
	pr->len = (size_t)(gt_encode_string(pr->buf + pr->len, *id, s, len) - pr->buf);
	w->stats.strings++;
	return 0;
}

uint64_t gt_writer__string(struct gt_writer *w, uint32_t p, const char *s)
{
	uint64_t id;
	uint32_t a;
	int err;

	if (w->err) {
		errno = -w->err;
		return 0;
	}
	if (p >= w->nprocs || !s || !*s) {
		errno = EINVAL;
		return 0;
	}
	err = slot(w, p, &a);
	if (!err)
		err = use_string(w, a, s, &id);
	if (err) {
		if (err != -E2BIG)
			fail(w, err);
		errno = -err;
		return 0;
	}
	return id;
}

uint64_t gt_writer__stack_find(struct gt_writer *w, const uint64_t *pcs, size_t n)
{
	if (!n || n > GT_MAX_STACK_FRAMES)
		return 0;
	return gt_dedup__find(w->stacks, pcs, n * sizeof(*pcs));
}

/* A Stack record's 4 values per frame into vals, its strings interned on P p. */
static int frame_values(struct gt_writer *w, uint32_t p, const struct gt_frame *frames, size_t n,
			uint64_t *vals)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		vals[4 * i] = frames[i].pc;
		err = use_string(w, p, frames[i].func, &vals[4 * i + 1]);
		if (!err)
			err = use_string(w, p, frames[i].file, &vals[4 * i + 2]);
		vals[4 * i + 3] = frames[i].line;
	}
	return err;
}

uint64_t gt_writer__stack(struct gt_writer *w, uint32_t p, const struct gt_frame *frames, size_t n)
{
	/* Scratch: the record's 4 values per frame, then the PCs alone as the table key. */
	uint64_t *vals = w->scratch, *key = w->scratch + 4 * GT_MAX_STACK_FRAMES, id;
	struct proc *pr;
	size_t body;
	uint32_t a;
	int err = 0;

	if (w->err) {
		errno = -w->err;
		return 0;
	}
	if (p >= w->nprocs || !frames || !n || n > GT_MAX_STACK_FRAMES) {
		errno = EINVAL;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		key[i] = frames[i].pc;
	id = gt_dedup__find(w->stacks, key, n * sizeof(*key));
	if (id)
		return id;
	err = slot(w, p, &a);
	if (!err)
		err = frame_values(w, a, frames, n, vals);
	if (!err)
		err = make_room(w, w->stacks);
	if (err)
		goto out;
	id = gt_dedup__next(w->stacks);
	/* Go 1.23 reads a stack id as 32 bits (docs/format.md §4): an appending writer above a
	 * file's ids can run out of them. */
	if (id > UINT32_MAX) {
		errno = EOVERFLOW;
		return 0;
	}
	body = gt_stack_body_len(id, vals, n);
	if (body > GT_MAX_LONG_BODY) {
		errno = E2BIG;
		return 0;
	}
	err = reserve(w, a, 1 + GT_MAX_VARINT_LEN + body);
	if (err)
		goto out;
	if (gt_dedup__add(w->stacks, key, n * sizeof(*key), here(w, a)) != id) {
		err = -ENOMEM;
		goto out;
	}
	pr = w->procs[a];
	pr->len = (size_t)(gt_encode_stack(pr->buf + pr->len, id, vals, n, body) - pr->buf);
	w->stats.stacks++;
	return id;
out:
	if (err != -E2BIG)
		fail(w, err);
	errno = -err;
	return 0;
}

static int use_stack(struct gt_writer *w, uint32_t p, uint64_t id)
{
	return use_id(w, p, w->stacks, id);
}

int gt_writer__restack(struct gt_writer *w, uint32_t p, uint64_t id, const struct gt_frame *frames,
		       size_t n)
{
	uint64_t *vals = w->scratch;
	struct proc *pr;
	size_t body;
	uint32_t a;
	int err;

	if (w->err)
		return w->err;
	/* The flight recorder's windows keep one definition per id (format/window.h). */
	if (w->sink)
		return -ENOTSUP;
	if (p >= w->nprocs || !frames || !n || n > GT_MAX_STACK_FRAMES || !id ||
	    id > gt_dedup__max_id(w->stacks))
		return -EINVAL;
	err = slot(w, p, &a);
	if (err)
		goto out;
	/* On every P: Go 1.23 reads each P's batches in file order but the Ps in an order of
	 * its own (by time, ties at random), so the definition it keeps last is this one only
	 * where it follows, on the same P, the one it replaces, wherever that was. Each after
	 * the definition it replaces and the strings it names, which may still be in another
	 * P's open batch. */
	for (a = 0; a < w->nslots; a++) {
		err = frame_values(w, a, frames, n, vals);
		if (!err)
			err = use_stack(w, a, id);
		if (err)
			goto out;
		body = gt_stack_body_len(id, vals, n);
		if (body > GT_MAX_LONG_BODY)
			return -E2BIG;
		err = reserve(w, a, 1 + GT_MAX_VARINT_LEN + body);
		if (err)
			goto out;
		pr = w->procs[a];
		pr->len = (size_t)(gt_encode_stack(pr->buf + pr->len, id, vals, n, body) - pr->buf);
	}
	w->stats.restacked++;
	return 0;
out:
	if (err != -E2BIG)
		fail(w, err);
	return err;
}

static int use_string_id(struct gt_writer *w, uint32_t p, uint64_t id)
{
	return use_id(w, p, w->strings, id);
}

/* Ordering dependencies of an event on P p: its goroutine's previous transition and the
 * strings and stacks it names. */
static int event_deps(struct gt_writer *w, uint32_t p, enum gt_type t, const uint64_t *args,
		      unsigned nargs, uint64_t g)
{
	const uint64_t *loc;
	int err = 0;

	if (g && (loc = u64map__get(w->gs, g)))
		err = add_dep(w, p, *loc);
	if (!err && (gt_specs[t].flags & GT_STACK))
		err = use_stack(w, p, args[nargs - 1]);
	if (!err && gt_specs[t].stk_arg)
		err = use_stack(w, p, args[gt_specs[t].stk_arg - 1]);
	if (!err && gt_specs[t].str_arg)
		err = use_string_id(w, p, args[gt_specs[t].str_arg - 1]);
	return err;
}

/* Checks shared by every timestamped record on P p; its slot in *a. */
static int begin_event(struct gt_writer *w, uint32_t p, uint64_t ts, uint32_t *a)
{
	int err;

	if (w->err)
		return w->err;
	if (p >= w->nprocs)
		return -EINVAL;
	err = slot(w, p, a);
	if (err)
		return fail(w, err);
	return ts < w->procs[*a]->last_ts ? -EINVAL : 0;
}

static uint64_t diff(struct gt_writer *w, struct proc *pr, uint64_t ts)
{
	uint64_t dt;

	if (!pr->has_base) {
		pr->has_base = true;
		pr->base_ts = ts;
		pr->last_ts = ts;
	}
	dt = ts - pr->last_ts;
	pr->last_ts = ts;
	if (ts > w->max_ts)
		w->max_ts = ts;
	return dt;
}

int gt_writer__event(struct gt_writer *w, uint32_t p, uint64_t ts, enum gt_type t,
		     const uint64_t *args, unsigned nargs)
{
	struct proc *pr;
	enum gt_g_effect eff;
	uint64_t g, *loc;
	bool added;
	uint32_t a;
	int err;

	err = begin_event(w, p, ts, &a);
	if (err)
		return err;
	if ((unsigned)t >= GT_EV_COUNT || (gt_specs[t].flags & (GT_SPECIAL | GT_AVOID)) ||
	    t == GT_EV_FREQUENCY || t == GT_EV_USER_LOG || t == GT_EV_CPU_SAMPLE ||
	    nargs != gt_nvalues(t) || (nargs && !args))
		return -EINVAL;
	pr = w->procs[a];
	eff = gt_specs[t].g;
	switch (eff) {
	case GT_G_START:
	case GT_G_TARGET:
	case GT_G_SELF:
		g = args[0];
		break;
	case GT_G_STOP:
	case GT_G_END:
		g = pr->cur_g;
		break;
	case GT_G_GC:
		/* A GCDone must not reach the file before its GCStart, nor a stop-the-world's
		 * end before its start (both are global to the parsers). */
		g = GC_PSEUDO_G;
		break;
	default:
		g = 0;
	}
	err = event_deps(w, a, t, args, nargs, g);
	if (!err)
		err = reserve(w, a, GT_MAX_EVENT_LEN);
	if (err)
		return err == -EINVAL ? err : fail(w, err);
	if (t == GT_EV_TIMER_GOROUTINE) {	/* the one untimed event a caller may write */
		uint8_t *end = pr->buf + pr->len;

		*end++ = gt_header_byte(t);
		pr->len = (size_t)(gt_varint_put(end, args[0]) - pr->buf);
		return 0;
	}
	pr->len = (size_t)(gt_encode_event(pr->buf + pr->len, t, diff(w, pr, ts), args, nargs) -
			   pr->buf);
	w->stats.events++;
	pr->nevents++;
	if (t == GT_EV_PROC_START || t == GT_EV_PROC_STOP)
		pr->started = t == GT_EV_PROC_START;
	else if (t == GT_EV_GC_SWEEP_START || t == GT_EV_GC_SWEEP_DONE)
		pr->sweep = t == GT_EV_GC_SWEEP_START;
	else if (t == GT_EV_GC_START || t == GT_EV_GC_DONE)
		pr->gc_last = (uint8_t)t;
	else if (t == GT_EV_GC_STW_START || t == GT_EV_GC_STW_DONE)
		pr->stw_last = (uint8_t)t;
	if (eff == GT_G_START)
		pr->cur_g = g;
	else if (eff == GT_G_STOP || eff == GT_G_END)
		pr->cur_g = 0;
	if (!g)
		return 0;
	if (eff == GT_G_END) {
		u64map__del(w->gs, g);
		return 0;
	}
	loc = u64map__put(w->gs, g, &added);
	if (!loc)
		return fail(w, -ENOMEM);
	*loc = here(w, a);
	return 0;
}

int gt_writer__user_log(struct gt_writer *w, uint32_t p, uint64_t ts, uint64_t task,
			uint64_t key_sid, uint64_t stk, const char *msg, size_t len)
{
	uint64_t vals[3] = { task, key_sid, stk };
	struct proc *pr;
	uint8_t *end;
	uint32_t a;
	int err;

	err = begin_event(w, p, ts, &a);
	if (err)
		return err;
	if (len > GT_MAX_STRING_LEN || (len && !msg))
		return -EINVAL;
	err = use_string_id(w, a, key_sid);
	if (!err)
		err = use_stack(w, a, stk);
	if (!err)
		err = reserve(w, a, GT_MAX_EVENT_LEN + GT_MAX_VARINT_LEN + len);
	if (err)
		return err == -EINVAL ? err : fail(w, err);
	pr = w->procs[a];
	end = gt_encode_event(pr->buf + pr->len, GT_EV_USER_LOG, diff(w, pr, ts), vals, 3);
	end = gt_varint_put(end, len);
	if (len)
		memcpy(end, msg, len);
	pr->len = (size_t)(end + len - pr->buf);
	w->stats.events++;
	pr->nevents++;
	return 0;
}

/* Go 1.19 adds a sample's diff to the batch clock while Go 1.23 skips samples, so the diff
 * is always 0 and the sample's time travels in its own argument. Samples are not ordered
 * against anything, so they may sit in any P's batch; the caller picks the P that took it. */
int gt_writer__cpu_sample(struct gt_writer *w, uint32_t p, uint64_t ts, int64_t sample_p,
			  uint64_t g, uint64_t stk)
{
	uint64_t vals[4] = { ts, (uint64_t)sample_p, g, stk };
	struct proc *pr;
	uint32_t a;
	int err;

	if (w->err)
		return w->err;
	if (p >= w->nprocs)
		return -EINVAL;
	err = slot(w, p, &a);
	if (!err)
		err = use_stack(w, a, stk);
	if (!err)
		err = reserve(w, a, GT_MAX_EVENT_LEN);
	if (err)
		return err == -EINVAL ? err : fail(w, err);
	pr = w->procs[a];
	pr->len = (size_t)(gt_encode_event(pr->buf + pr->len, GT_EV_CPU_SAMPLE, 0, vals, 4) -
			   pr->buf);
	w->stats.events++;
	pr->nevents++;
	return 0;
}

int gt_writer__flush(struct gt_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	err = write_all(w);
	if (err)
		return err;
	err = gt_outq__flush(w->out);
	if (err)
		return fail(w, err);
	commit(w);
	return 0;
}

void gt_writer__file_state(const struct gt_writer *w, struct gt_writer_pstate *procs,
			   struct gt_writer_fstate *file)
{
	for (size_t a = 0; procs && a < w->nslots; a++)
		procs[w->procs[a]->id] = w->procs[a]->file;
	*file = w->file_fs;
	file->lost = w->stats.events - w->file_events;
}

void gt_writer__max_ids(const struct gt_writer *w, uint64_t *string_id, uint64_t *stack_id)
{
	*string_id = gt_dedup__max_id(w->strings);
	*stack_id = gt_dedup__max_id(w->stacks);
}

void gt_writer__stats(const struct gt_writer *w, struct gt_writer_stats *out)
{
	struct gt_dedup_stats strings, stacks;

	gt_dedup__stats(w->strings, &strings);
	gt_dedup__stats(w->stacks, &stacks);
	*out = w->stats;
	out->strings_forgotten = strings.forgotten;
	out->stacks_forgotten = stacks.forgotten;
	out->table_bytes = strings.bytes + stacks.bytes;
	out->bytes = gt_outq__written(w->out);
	out->torn = gt_outq__torn(w->out, &out->torn_err);
}

void gt_writer__free(struct gt_writer *w)
{
	if (!w)
		return;
	for (size_t a = 0; a < w->nslots; a++) {
		free(w->procs[a]->buf);
		free(w->procs[a]->deps);
		free(w->procs[a]);
	}
	free(w->procs);
	free(w->by_id);
	u64map__free(w->slot_of);
	gt_outq__free(w->out);
	u64map__free(w->gs);
	gt_dedup__free(w->strings);
	gt_dedup__free(w->stacks);
	free(w->scratch);
	free(w);
}
