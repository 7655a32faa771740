/* window.c - a byte ring of encoded batches with a fixed budget, oldest evicted first.
 *
 * Layout: entries back to back, each a struct note then the batch bytes, padded to 8 bytes.
 * head and tail are byte counts since the start (never wrapped), so tail - head is what is
 * held and an entry's place is its count modulo the budget. The memfd is mapped twice in a
 * row: an entry that runs past the end of the first mapping continues, at the same addresses,
 * into the second, which shows the start of the file. So a batch is always one contiguous
 * span for the evict callback and for whoever writes it out, and no byte is wasted on a wrap.
 *
 * Memory: pages are touched as the tail moves through the ring. Evicted bytes are punched out
 * of the memfd (FALLOC_FL_PUNCH_HOLE) once PUNCH_MIN of them have gathered, so under a time
 * limit the window's memory is what it holds plus less than one chunk, not the whole budget;
 * the chunk keeps the cost to one system call per PUNCH_MIN bytes recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/window.h"

#define PUNCH_MIN (1024 * 1024)

struct note {
	uint32_t len;		/* batch bytes after the note */
	uint32_t p;
	uint64_t first_ts, last_ts;
};

_Static_assert(sizeof(struct note) == 24, "note layout");

struct gt_window {
	struct gt_window_opts opts;
	uint8_t *ring;		/* 2 * cap bytes of address space, both halves the memfd */
	int fd;
	size_t cap;
	size_t page;
	uint64_t head, tail;	/* byte counts: the oldest entry, the next free byte */
	uint64_t punched;	/* bytes below this count were handed back (page aligned) */
	uint64_t newest;	/* latest last_ts pushed */
	int err;		/* sticky */
	struct gt_window_stats stats;
};

static size_t entry_size(size_t len)
{
	return (sizeof(struct note) + len + 7) & ~(size_t)7;
}

static struct note *note_at(const struct gt_window *w, uint64_t pos)
{
	return (struct note *)(w->ring + pos % w->cap);
}

struct gt_window *gt_window__new(const struct gt_window_opts *opts)
{
	struct gt_window *w;
	long page = sysconf(_SC_PAGESIZE);
	void *half;
	int err;

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
	w->ring = MAP_FAILED;
	w->fd = memfd_create("lxtrace-window", MFD_CLOEXEC);
	if (w->fd < 0 || ftruncate(w->fd, (off_t)w->cap))
		goto fail;
	/* Reserve both halves at once so nothing else lands between them. */
	w->ring = mmap(NULL, 2 * w->cap, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->ring == MAP_FAILED)
		goto fail;
	for (int i = 0; i < 2; i++) {
		half = mmap(w->ring + i * w->cap, w->cap, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_FIXED, w->fd, 0);
		if (half == MAP_FAILED)
			goto fail;
	}
	return w;
fail:
	err = errno;
	gt_window__free(w);
	errno = err;
	return NULL;
}

/* Hands the pages below head back to the kernel once a chunk of them has gathered. A failure
 * costs only memory, never data: the bytes there are dead. */
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
		fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at,
			  (off_t)(w->cap - at));
		len -= w->cap - at;
		at = 0;
	}
	fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at, (off_t)len);
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

	w->head += entry_size(n->len);
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

int gt_window__push(struct gt_window *w, uint32_t p, uint64_t first_ts, uint64_t last_ts,
		    const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen)
{
	size_t need = entry_size(hlen + blen);
	struct note *n;
	int err = 0;

	if (w->err)
		return w->err;
	if (hlen + blen > UINT32_MAX || (hlen && !hdr) || (blen && !body) || first_ts > last_ts)
		return -EINVAL;
	w->stats.pushed++;
	if (last_ts > w->newest)
		w->newest = last_ts;
	if (need > w->cap) {
		err = evict_oversize(w, p, first_ts, last_ts, hdr, hlen, body, blen);
		goto out;
	}
	while (!err && w->cap - (w->tail - w->head) < need)
		err = evict_one(w);
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

void gt_window__stats(const struct gt_window *w, struct gt_window_stats *out)
{
	struct stat st;

	*out = w->stats;
	out->bytes = w->tail - w->head;
	out->resident = fstat(w->fd, &st) ? 0 : (uint64_t)st.st_blocks * 512;
}

void gt_window__free(struct gt_window *w)
{
	if (!w)
		return;
	if (w->ring != MAP_FAILED)
		munmap(w->ring, 2 * w->cap);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}
