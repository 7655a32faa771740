/* merge.c - per-CPU staging queues and their k-way merge into one stream in time order
 * (merge.h).
 *
 * Each ring is in time order on its own, save a record written by an interrupt nested in a
 * program run, which the staging insertion puts back in place. Records are copied into their
 * CPU's staging queue; merge__deliver hands on, by a k-way merge over a heap of CPUs keyed by
 * their oldest staged ts, those no later than the watermark. A record staged later than that
 * anyway is delivered late and counted as out of order.
 *
 * Syscall entries (--syscalls=all) come in chunks that each CPU stages in BPF and sends before
 * any other record of its own (lxtrace.h); they are unpacked here into one record each.
 *
 * Slots hold the records the scheduler sends at high rates inline; anything larger (stacks,
 * annotations: rarer, each a uprobe hit or a stack walk) is a heap copy owned by its slot.
 *
 * A queue is bounded (opts.stage_bytes): a consumer slower than the kernel for minutes (a
 * loaded machine, binaries to read) would otherwise move the backlog the rings bound and drop
 * into the recorder's heap (112 MiB of slots in 4 minutes of a whole machine at load 24). Its
 * reader stops at half of it (merge__full) and leaves the backlog in the ring, whose overflow
 * the kernel counts; what still has no room is reported lost, as a full ring's records are.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/merge.h"

#define STAGE_MIN_SLOTS 4096
/* A queue grown past this many slots (a backlog) is freed once empty, its pages given back. */
#define STAGE_KEEP_SLOTS (4 * STAGE_MIN_SLOTS)
/* Inline bytes of a slot: every fixed-size record of the scheduler's programs fits. */
#define SLOT_INLINE 40

_Static_assert(sizeof(struct lx_switch) <= SLOT_INLINE && sizeof(struct lx_wakeup) <= SLOT_INLINE &&
	       sizeof(struct lx_fork) <= SLOT_INLINE && sizeof(struct lx_exec) <= SLOT_INLINE &&
	       sizeof(struct lx_syscall) <= SLOT_INLINE && sizeof(struct lx_rss) <= SLOT_INLINE,
	       "the scheduler's records are staged inline");

struct slot {
	union {
		struct lx_rec h;
		struct lx_syscall sys;
		unsigned char bytes[SLOT_INLINE];
		struct {
			struct lx_rec h;
			void *copy;	/* malloc'd, owned by the slot */
		} big;		/* a record larger than rec: size > sizeof(rec) */
	} rec;
	uint32_t size;		/* bytes of the record, or 0 for a loss report */
	uint32_t pad;
	uint64_t lost;		/* a loss report's count */
};

/* One CPU's records read and not yet delivered, oldest first: a circular queue whose capacity
 * is a power of two. */
struct stage {
	struct slot *slots;
	size_t cap, head, len;
	size_t copied;		/* bytes of the records copied whole (big) */
	uint64_t newest;	/* largest ts read from the CPU */
	bool unread;		/* its ring still holds records (merge__unread) */
};

struct merge {
	struct merge_opts opts;
	struct stage *stages;
	uint32_t *heap;		/* CPUs with staged records, by their oldest ts */
	size_t max_slots;	/* a queue's bound: a power of two, or SIZE_MAX */
	uint64_t peak_bytes;	/* the most one queue took (stage_bytes_of) */
	size_t heap_len;
	uint64_t last_ts;
	struct merge_stats stats;
};

struct merge *merge__new(const struct merge_opts *opts)
{
	struct merge *mg;

	if (!opts || opts->sz < sizeof(*opts) || !opts->ncpus || !opts->on_record || !opts->on_lost) {
		errno = EINVAL;
		return NULL;
	}
	mg = calloc(1, sizeof(*mg));
	if (!mg)
		return NULL;
	mg->opts = *opts;
	mg->max_slots = SIZE_MAX;
	if (opts->stage_bytes) {
		mg->max_slots = STAGE_MIN_SLOTS;
		while (mg->max_slots * 2 * sizeof(struct slot) <= opts->stage_bytes)
			mg->max_slots *= 2;
	}
	mg->stages = calloc(opts->ncpus, sizeof(*mg->stages));
	mg->heap = calloc(opts->ncpus, sizeof(*mg->heap));
	if (!mg->stages || !mg->heap) {
		merge__free(mg);
		errno = ENOMEM;
		return NULL;
	}
	return mg;
}

static bool is_big(const struct slot *slot)
{
	return slot->size > sizeof(slot->rec);
}

static int stage_grow(struct stage *s)
{
	size_t cap = s->cap ? s->cap * 2 : STAGE_MIN_SLOTS;
	struct slot *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->len; i++)
		slots[i] = s->slots[(s->head + i) & (s->cap - 1)];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	s->head = 0;
	return 0;
}

/* A free slot at ts's place in the queue. Records come nearly sorted, so the search from the
 * tail stops at once but for a record that a nested program run wrote ahead of its elder. */
static struct slot *stage_insert(struct stage *s, uint64_t ts)
{
	size_t mask, i;

	if (s->len == s->cap && stage_grow(s))
		return NULL;
	mask = s->cap - 1;
	for (i = s->len; i > 0; i--) {
		struct slot *prev = &s->slots[(s->head + i - 1) & mask];

		if (prev->rec.h.ts <= ts)
			break;
		s->slots[(s->head + i) & mask] = *prev;
	}
	s->len++;
	return &s->slots[(s->head + i) & mask];
}

static struct slot *newest_slot(struct stage *s)
{
	return s->len ? &s->slots[(s->head + s->len - 1) & (s->cap - 1)] : NULL;
}

/* Whether n more records, copy bytes of them copied whole, fit the queue's bound. */
static bool room(const struct merge *mg, const struct stage *s, size_t n, size_t copy)
{
	return s->len + n <= mg->max_slots &&
	       (!mg->opts.stage_bytes || s->copied + copy <= mg->opts.stage_bytes);
}

/* Stages a report of n records lost before ts. In a full queue it goes into the newest slot:
 * added to the report there, or taking the place of the record there, which is lost too. */
static int stage_lost(struct merge *mg, uint32_t cpu, uint64_t ts, uint64_t n)
{
	struct stage *s = &mg->stages[cpu];
	struct slot *slot = newest_slot(s);

	if (!slot || room(mg, s, 1, 0)) {
		slot = stage_insert(s, ts);
		if (!slot)
			return -ENOMEM;
		memset(slot, 0, sizeof(*slot));
	} else if (slot->size) {
		uint64_t was = slot->rec.h.ts;

		if (is_big(slot)) {
			s->copied -= slot->size;
			free(slot->rec.big.copy);
		}
		mg->stats.dropped++;
		memset(slot, 0, sizeof(*slot));
		slot->rec.h.ts = was;
		slot->lost = 1;
	}
	if (ts > slot->rec.h.ts)
		slot->rec.h.ts = ts;
	slot->rec.h.cpu = cpu;
	slot->lost += n;
	return 0;
}

/* n records of the CPU, the newest at ts, that the queue has no room for: lost, reported after
 * whatever is staged, in one report for a run of them. */
static int drop(struct merge *mg, uint32_t cpu, uint64_t ts, uint64_t n)
{
	struct stage *s = &mg->stages[cpu];
	struct slot *newest = newest_slot(s);

	mg->stats.dropped += n;
	if (newest && newest->rec.h.ts > ts)
		ts = newest->rec.h.ts;
	if (ts > s->newest)
		s->newest = ts;
	if (newest && !newest->size) {
		newest->rec.h.ts = ts;
		newest->lost += n;
		return 0;
	}
	return stage_lost(mg, cpu, ts, n);
}

/* Unpacks a chunk of syscall entries into one LX_REC_SYSCALL (an exit: LX_REC_SYSCALL_EXIT)
 * each, room for all of them made first. An entry no older than the queue's last record is
 * appended without a search; an older one (a program nested in sys_enter sent its record
 * ahead of the chunk) is put in its place. */
static int stage_syscalls(struct merge *mg, uint32_t cpu, const struct lx_syscalls *r,
			  size_t size)
{
	struct stage *s = &mg->stages[cpu];
	size_t mask;

	if (size < offsetof(struct lx_syscalls, e) || r->n > LX_SYSCALLS_MAX ||
	    size != offsetof(struct lx_syscalls, e) + r->n * sizeof(r->e[0]))
		return -EPROTO;
	if (!room(mg, s, r->n, 0))
		return r->n ? drop(mg, cpu, r->h.ts + r->e[r->n - 1].dt, r->n) : 0;
	while (s->cap - s->len < r->n)
		if (stage_grow(s))
			return -ENOMEM;
	mask = s->cap - 1;
	for (uint32_t i = 0; i < r->n; i++) {
		uint64_t ts = r->h.ts + r->e[i].dt;
		uint32_t nr = r->e[i].tid_nr & ((1u << LX_SYSENT_NR_BITS) - 1);
		struct slot *slot;

		if (!s->len || s->slots[(s->head + s->len - 1) & mask].rec.h.ts <= ts)
			slot = &s->slots[(s->head + s->len++) & mask];
		else
			slot = stage_insert(s, ts);
		slot->rec.sys = (struct lx_syscall){
			.h = { .ts = ts, .tid = r->e[i].tid_nr >> LX_SYSENT_NR_BITS, .cpu = r->h.cpu,
			       .type = nr == LX_SYSENT_EXIT ? LX_REC_SYSCALL_EXIT : LX_REC_SYSCALL },
			.nr = nr >= LX_SYSENT_EXIT ? -1 : (int32_t)nr,
		};
		slot->size = sizeof(slot->rec.sys);
		if (ts > s->newest)
			s->newest = ts;
	}
	return 0;
}

/* A record no program sends: dropped, and reported lost at the CPU's newest time, so that the
 * recording goes on (an error would stop libbpf's consume loop) and says so. */
static int drop_malformed(struct merge *mg, uint32_t cpu)
{
	mg->stats.malformed++;
	return merge__add_lost(mg, cpu, mg->stages[cpu].newest, 1);
}

/* Whether a CPU's record of type `type`, time ts, is to be dropped for being too far behind
 * (merge_opts.max_behind_ns): past half of it for a sample, past all of it for any. */
static bool too_far_behind(const struct merge *mg, const struct stage *s, uint8_t type,
			   uint64_t ts)
{
	uint64_t behind = mg->opts.max_behind_ns, oldest;

	/* A trigger (a SIGUSR1, a program's lxtrace_trigger()) is what the flight recorder is
	 * for, and few: shed, it would make no file, and the reader is behind exactly when a
	 * machine is in the trouble that is asked about. */
	if (!behind || !s->len || type == LX_REC_TRIGGER)
		return false;
	oldest = s->slots[s->head].rec.h.ts;
	return ts > oldest && ts - oldest >= (type == LX_REC_SAMPLE ? behind / 2 : behind);
}

int merge__add(struct merge *mg, uint32_t cpu, const void *data, size_t size)
{
	struct stage *s = &mg->stages[cpu];
	const struct lx_rec *r = data;
	struct slot *slot;
	int err;

	if (size >= sizeof(*r) && too_far_behind(mg, s, r->type, r->ts)) {
		const struct lx_syscalls *sys = data;
		uint64_t n = r->type == LX_REC_SYSCALLS && size >= offsetof(struct lx_syscalls, e) &&
			     sys->n <= LX_SYSCALLS_MAX ? sys->n : 1;

		mg->stats.dropped_samples += r->type == LX_REC_SAMPLE;
		return drop(mg, cpu, r->ts, n);
	}
	if (size >= sizeof(*r) && r->type == LX_REC_SYSCALLS) {
		err = stage_syscalls(mg, cpu, data, size);
		return err == -EPROTO ? drop_malformed(mg, cpu) : err;
	}
	if (size < sizeof(*r) || size > UINT32_MAX)
		return drop_malformed(mg, cpu);
	if (!room(mg, s, 1, size > sizeof(slot->rec) ? size : 0))
		return drop(mg, cpu, r->ts, 1);
	slot = stage_insert(s, r->ts);
	if (!slot)
		return -ENOMEM;
	if (size > sizeof(slot->rec)) {
		slot->rec.big.copy = malloc(size);
		if (!slot->rec.big.copy) {
			/* A loss report in its place: capture stops, but not silently. */
			slot->rec.h = *r;
			slot->size = 0;
			slot->lost = 1;
			return -ENOMEM;
		}
		memcpy(slot->rec.big.copy, data, size);
		slot->rec.h = *r;
		s->copied += size;
	} else {
		memcpy(&slot->rec, data, size);
	}
	slot->size = size;
	if (r->ts > s->newest)
		s->newest = r->ts;
	return 0;
}

/* What a queue's staged records take: their slots and the records copied whole. */
static uint64_t stage_bytes_of(const struct stage *s)
{
	return s->len * sizeof(struct slot) + s->copied;
}

bool merge__full(struct merge *mg, uint32_t cpu)
{
	const struct stage *s = &mg->stages[cpu];
	uint64_t bytes = stage_bytes_of(s);

	if (bytes > mg->peak_bytes)
		mg->peak_bytes = bytes;
	/* The oldest may be a loss report stamped later than any record read (at the read of
	 * the counters): then the queue spans nothing yet. */
	if (mg->opts.read_ahead_ns && s->len && s->newest > s->slots[s->head].rec.h.ts &&
	    s->newest - s->slots[s->head].rec.h.ts >= mg->opts.read_ahead_ns)
		return true;
	return mg->opts.stage_bytes &&
	       (s->len >= mg->max_slots / 2 || s->copied > mg->opts.stage_bytes / 2);
}

int merge__add_lost(struct merge *mg, uint32_t cpu, uint64_t ts, uint64_t n)
{
	return stage_lost(mg, cpu, ts, n);
}

void merge__unread(struct merge *mg, uint32_t cpu, bool unread)
{
	mg->stages[cpu].unread = unread;
}

uint64_t merge__watermark(const struct merge *mg, uint64_t now)
{
	uint64_t quiet = now - MERGE_WINDOW_NS, mark = now;

	for (uint32_t cpu = 0; cpu < mg->opts.ncpus; cpu++) {
		const struct stage *s = &mg->stages[cpu];
		uint64_t safe = s->newest > quiet || s->unread ? s->newest : quiet;

		if (safe < mark)
			mark = safe;
	}
	return mark;
}

static uint64_t head_ts(const struct merge *mg, uint32_t cpu)
{
	const struct stage *s = &mg->stages[cpu];

	return s->slots[s->head].rec.h.ts;
}

static void heap_down(struct merge *mg, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t tmp;

		if (l < mg->heap_len && head_ts(mg, mg->heap[l]) < head_ts(mg, mg->heap[m]))
			m = l;
		if (l + 1 < mg->heap_len && head_ts(mg, mg->heap[l + 1]) < head_ts(mg, mg->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = mg->heap[i];
		mg->heap[i] = mg->heap[m];
		mg->heap[m] = tmp;
		i = m;
	}
}

static int emit(struct merge *mg, struct stage *s, const struct slot *slot)
{
	const struct lx_rec *h = &slot->rec.h;
	int err;

	if (!slot->size) {
		err = mg->opts.on_lost(mg->opts.ctx, h->cpu, h->ts, slot->lost);
		mg->stats.lost += slot->lost;
	} else {
		err = mg->opts.on_record(mg->opts.ctx, is_big(slot) ? slot->rec.big.copy : h,
					 slot->size);
		if (err == -EBUSY)
			return err;
		mg->stats.records++;
		if (is_big(slot)) {
			s->copied -= slot->size;
			free(slot->rec.big.copy);
		}
	}
	if (h->ts < mg->last_ts)
		mg->stats.out_of_order++;
	else
		mg->last_ts = h->ts;
	return err;
}

int merge__deliver(struct merge *mg, uint64_t upto)
{
	mg->heap_len = 0;
	for (uint32_t cpu = 0; cpu < mg->opts.ncpus; cpu++)
		if (mg->stages[cpu].len)
			mg->heap[mg->heap_len++] = cpu;
	for (size_t i = mg->heap_len; i-- > 0;)
		heap_down(mg, i);
	while (mg->heap_len) {
		struct stage *s = &mg->stages[mg->heap[0]];
		uint64_t limit = upto;
		int err = 0;

		/* The oldest CPU's run of records up to the next CPU's oldest goes out in one
		 * go, with one heap update after it rather than one per record. */
		if (mg->heap_len > 1 && head_ts(mg, mg->heap[1]) < limit)
			limit = head_ts(mg, mg->heap[1]);
		if (mg->heap_len > 2 && head_ts(mg, mg->heap[2]) < limit)
			limit = head_ts(mg, mg->heap[2]);
		if (head_ts(mg, mg->heap[0]) > upto)
			break;
		do {
			err = emit(mg, s, &s->slots[s->head]);
			if (err == -EBUSY)
				break;	/* held where it is, the oldest still */
			s->head = (s->head + 1) & (s->cap - 1);
			s->len--;
		} while (!err && s->len && s->slots[s->head].rec.h.ts <= limit);
		if (!s->len) {
			mg->heap[0] = mg->heap[--mg->heap_len];
			if (s->cap > STAGE_KEEP_SLOTS) {
				free(s->slots);
				s->slots = NULL;
				s->cap = s->head = 0;
			}
		}
		heap_down(mg, 0);
		if (err)
			return err;
	}
	return 0;
}

uint64_t merge__abandon(struct merge *mg, uint64_t upto, int *err)
{
	uint64_t later = 0;

	*err = 0;
	for (uint32_t cpu = 0; cpu < mg->opts.ncpus; cpu++) {
		struct stage *s = &mg->stages[cpu];
		size_t mask = s->cap - 1, kept = 0;
		uint64_t lost = 0;

		for (size_t i = 0; i < s->len; i++) {
			struct slot *slot = &s->slots[(s->head + i) & mask];

			if (slot->size && slot->rec.h.type == LX_REC_TRIGGER) {
				s->slots[(s->head + kept++) & mask] = *slot;
				continue;
			}
			if (is_big(slot)) {
				s->copied -= slot->size;
				free(slot->rec.big.copy);
			}
			if (slot->rec.h.ts > upto)
				later += slot->size ? 1 : slot->lost;
			else
				lost += slot->size ? 1 : slot->lost;
			if (slot->size && slot->rec.h.ts <= upto)
				mg->stats.abandoned++;
		}
		s->len = kept;
		if (lost && !*err)
			*err = stage_lost(mg, cpu, upto, lost);
	}
	return later;
}

void merge__stats(const struct merge *mg, struct merge_stats *out)
{
	*out = mg->stats;
	out->staged = 0;
	out->staged_bytes = 0;
	for (uint32_t cpu = 0; cpu < mg->opts.ncpus; cpu++) {
		out->staged += mg->stages[cpu].len;
		out->staged_bytes += stage_bytes_of(&mg->stages[cpu]);
	}
	out->peak_bytes = mg->peak_bytes;
}

void merge__free(struct merge *mg)
{
	if (!mg)
		return;
	for (uint32_t cpu = 0; mg->stages && cpu < mg->opts.ncpus; cpu++) {
		struct stage *s = &mg->stages[cpu];

		for (size_t i = 0; i < s->len; i++) {
			struct slot *slot = &s->slots[(s->head + i) & (s->cap - 1)];

			if (is_big(slot))
				free(slot->rec.big.copy);
		}
		free(s->slots);
	}
	free(mg->stages);
	free(mg->heap);
	free(mg);
}
