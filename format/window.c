/* window.c - a byte ring of encoded batches with a fixed budget, oldest evicted first.
 *
 * Layout: entries back to back, each a struct note then the batch bytes, padded to 8 bytes.
 * head and tail are byte counts since the start (never wrapped), so tail - head is what is
 * held and an entry's place is its count modulo the budget. An entry never wraps: one that
 * would run past the end of the ring leaves the rest of it as padding (a note of its own, or
 * nothing when less than a note is left) and starts again at the beginning; the padding counts
 * against the budget like any byte held. So each batch is one contiguous span, for the evict
 * callback and for whoever writes it out.
 *
 * Memory: private anonymous pages, so a process forked to write a file from the window keeps
 * the bytes as they were while this one goes on (copy on write). Pages are touched as the tail
 * moves through the ring; those of evicted batches are given back (MADV_DONTNEED) once PUNCH_MIN
 * of them have gathered, so under a time limit the window's memory is what it holds plus less
 * than one chunk, not the whole budget; the chunk keeps the cost to one system call per
 * PUNCH_MIN bytes recorded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/window.h"

#define PUNCH_MIN (1024 * 1024)
#define PAD_P UINT32_MAX	/* the P of a note that only pads the ring's end */

struct note {
	uint32_t len;		/* batch bytes after the note */
	uint32_t p;		/* PAD_P: padding up to the ring's end */
	uint64_t first_ts, last_ts;
};

_Static_assert(sizeof(struct note) == 24, "note layout");

struct gt_window {
	struct gt_window_opts opts;
	uint8_t *ring;
	size_t cap;
	size_t page;
	uint64_t head, tail;	/* byte counts: the oldest entry, the next free byte */
	uint64_t punched;	/* bytes below this count were given back (page aligned) */
	uint64_t newest;	/* latest last_ts pushed */
	int err;		/* sticky */
	struct gt_window_stats stats;
};

static size_t entry_size(size_t len)
{
	return (sizeof(struct note) + len + 7) & ~(size_t)7;
}

/* Bytes from count pos to the end of the ring. */
static size_t to_end(const struct gt_window *w, uint64_t pos)
{
	return w->cap - pos % w->cap;
}

static struct note *note_at(const struct gt_window *w, uint64_t pos)
{
	return (struct note *)(w->ring + pos % w->cap);
}

/* The count of the first real entry at or after pos (pos itself, or past the padding there). */
static uint64_t skip_pad(const struct gt_window *w, uint64_t pos)
{
	if (pos < w->tail && (to_end(w, pos) < sizeof(struct note) || note_at(w, pos)->p == PAD_P))
		return pos + to_end(w, pos);
	return pos;
}

struct gt_window *gt_window__new(const struct gt_window_opts *opts)
{
	struct gt_window *w;
	long page = sysconf(_SC_PAGESIZE);

	if (!opts || opts->sz < sizeof(*opts) || page <= 0 || !opts->bytes ||
	    opts->bytes % (size_t)page || opts->bytes > SIZE_MAX / 4) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->opts = *opts;
	w->cap = opts->bytes;
	w->page = (size_t)page;
	w->ring = mmap(NULL, w->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->ring == MAP_FAILED) {
		free(w);
		return NULL;
	}
	return w;
}

/* Gives back the pages below head once a chunk of them has gathered. A failure costs only
 * memory, never data: the bytes there are dead. */
static void punch(struct gt_window *w)
{
	uint64_t upto = w->head / w->page * w->page, from = w->punched, live, len, at;

	/* Counts below tail - cap share their place in the ring with held bytes. */
	live = w->tail > w->cap ? (w->tail - w->cap + w->page - 1) / w->page * w->page : 0;
	if (from < live)
		from = live;
	if (upto <= from) {
		if (upto > w->punched)
			w->punched = upto;
		return;
	}
	if (upto - from < PUNCH_MIN && upto - from < w->cap / 2)
		return;
	len = upto - from;
	at = from % w->cap;
	if (at + len > w->cap) {
		madvise(w->ring + at, w->cap - at, MADV_DONTNEED);
		len -= w->cap - at;
		at = 0;
	}
	madvise(w->ring + at, len, MADV_DONTNEED);
	w->punched = upto;
}

static int evict_one(struct gt_window *w)
{
	const struct note *n = note_at(w, w->head);
	struct gt_window_batch b = {
		.data = (const uint8_t *)(n + 1), .len = n->len, .p = n->p,
		.first_ts = n->first_ts, .last_ts = n->last_ts,
	};
	int err = w->opts.evict ? w->opts.evict(w->opts.ctx, &b) : 0;

	w->head = skip_pad(w, w->head + entry_size(n->len));
	w->stats.batches--;
	w->stats.evicted++;
	w->stats.evicted_bytes += n->len;
	if (err)
		w->err = err;
	return err;
}

/* A batch that could never fit: everything older goes first, then it, from a copy. */
static int evict_oversize(struct gt_window *w, uint32_t p, uint64_t first_ts, uint64_t last_ts,
			  const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen)
{
	struct gt_window_batch b = { .len = hlen + blen, .p = p, .first_ts = first_ts,
				     .last_ts = last_ts };
	uint8_t *copy;
	int err = 0;

	while (!err && w->head < w->tail)
		err = evict_one(w);
	if (err)
		return err;
	w->stats.oversize++;
	w->stats.evicted++;
	w->stats.evicted_bytes += b.len;
	if (!w->opts.evict)
		return 0;
	copy = malloc(b.len);
	if (!copy)
		return w->err = -ENOMEM;
	memcpy(copy, hdr, hlen);
	memcpy(copy + hlen, body, blen);
	b.data = copy;
	err = w->opts.evict(w->opts.ctx, &b);
	free(copy);
	if (err)
		w->err = err;
	return err;
}

/* Makes room for an entry of need bytes at the tail, evicting the oldest entries, and pads the
 * ring's end when the entry would not fit before it. need <= cap. */
static int make_room(struct gt_window *w, size_t need)
{
	size_t waste;
	int err;

	for (;;) {
		waste = to_end(w, w->tail) < need ? to_end(w, w->tail) : 0;
		if (w->cap - (w->tail - w->head) >= waste + need)
			break;
		if (w->head == w->tail) {
			/* Empty: start again at the ring's beginning, with nothing to pad. */
			w->head = w->tail = w->tail + to_end(w, w->tail);
			continue;
		}
		err = evict_one(w);
		if (err)
			return err;
	}
	if (waste >= sizeof(struct note))
		*note_at(w, w->tail) = (struct note){
			.len = (uint32_t)(waste - sizeof(struct note)), .p = PAD_P };
	w->tail += waste;
	if (w->head == w->tail - waste)
		w->head = w->tail;
	return 0;
}

int gt_window__push(struct gt_window *w, uint32_t p, uint64_t first_ts, uint64_t last_ts,
		    const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen)
{
	size_t need = entry_size(hlen + blen);
	struct note *n;
	int err = 0;

	if (w->err)
		return w->err;
	if (hlen + blen > UINT32_MAX || (hlen && !hdr) || (blen && !body) || first_ts > last_ts ||
	    p == PAD_P)
		return -EINVAL;
	w->stats.pushed++;
	if (last_ts > w->newest)
		w->newest = last_ts;
	if (need > w->cap) {
		err = evict_oversize(w, p, first_ts, last_ts, hdr, hlen, body, blen);
		goto out;
	}
	err = make_room(w, need);
	if (err)
		return err;
	n = note_at(w, w->tail);
	*n = (struct note){ .len = (uint32_t)(hlen + blen), .p = p, .first_ts = first_ts,
			    .last_ts = last_ts };
	if (hlen)
		memcpy(n + 1, hdr, hlen);
	if (blen)
		memcpy((uint8_t *)(n + 1) + hlen, body, blen);
	w->tail += need;
	w->stats.batches++;
	if (w->tail - w->head > w->stats.peak_bytes)
		w->stats.peak_bytes = w->tail - w->head;
	/* Time limit: the oldest batches ended too long before the newest one did. */
	while (!err && w->opts.span && w->head < w->tail &&
	       note_at(w, w->head)->last_ts + w->opts.span < w->newest)
		err = evict_one(w);
out:
	punch(w);
	return err;
}

bool gt_window__next(const struct gt_window *w, uint64_t *pos, struct gt_window_batch *b)
{
	const struct note *n;

	if (*pos < w->head)
		*pos = w->head;
	*pos = skip_pad(w, *pos);
	if (*pos >= w->tail)
		return false;
	n = note_at(w, *pos);
	*b = (struct gt_window_batch){
		.data = (const uint8_t *)(n + 1), .len = n->len, .p = n->p,
		.first_ts = n->first_ts, .last_ts = n->last_ts,
	};
	*pos += entry_size(n->len);
	return true;
}

/* Pages of the ring backed by memory now. */
static uint64_t resident(const struct gt_window *w)
{
	size_t npages = w->cap / w->page;
	unsigned char *vec = malloc(npages);
	uint64_t n = 0;

	if (!vec || mincore(w->ring, w->cap, vec)) {
		free(vec);
		return 0;
	}
	for (size_t i = 0; i < npages; i++)
		n += vec[i] & 1;
	free(vec);
	return n * w->page;
}

void gt_window__stats(const struct gt_window *w, struct gt_window_stats *out)
{
	*out = w->stats;
	out->bytes = w->tail - w->head;
	out->resident = resident(w);
}

void gt_window__free(struct gt_window *w)
{
	if (!w)
		return;
	if (w->ring != MAP_FAILED)
		munmap(w->ring, w->cap);
	free(w);
}
