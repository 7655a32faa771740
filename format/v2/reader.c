/* reader.c - the Go 1.22+ decoder: a generation read whole into memory, checked as Go 1.23's
 * reader checks its structure (internal/trace: batch.go, generation.go, batchcursor.go), then
 * its events handed out (reader.h, docs/format.md §18.9). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/v2/reader.h"
#include "format/v2/state.h"
#include "format/varint.h"
#include "lib/grow.h"
#include "lib/u64map.h"

#define IN_SIZE (64u << 10)
/* What an index entry costs beside its bytes, counted against the budget. */
#define ENTRY_COST 64

struct batch {
	uint64_t body;		/* file offset of its first event */
	uint64_t m, base;
	size_t data;		/* offset of its bytes in the generation's buffer */
	size_t len;
};

struct str {
	size_t data;
	size_t len;
};

struct frame {
	uint64_t func, file, line;
};

struct sample {
	uint64_t off;
	uint64_t args[5];	/* time, M, P, G, stack */
};

/* A batch's header as read. */
struct hdr {
	uint64_t off, gen, m, base, len;
	uint64_t body;		/* offset of its first byte after the header */
	bool exp;		/* an experimental batch: kept by Go for its experiments only */
};

struct gt2_reader {
	int fd;
	uint64_t limit;
	size_t budget;
	uint8_t *in;		/* the input's next bytes: [in_pos, in_len) */
	size_t in_pos, in_len;
	uint64_t pos;		/* offset of in[in_pos] */
	bool eof;
	int err;
	char msg[256];
	bool started;		/* the header has been read */
	bool done;		/* the last generation has been handed out */

	/* The generation being read. */
	uint64_t gen, freq, gen_start, gen_end, ngens;
	uint64_t gen_events, lo, hi;	/* its events and samples, their first and last ticks */
	uint64_t gen_timed;	/* its events without the samples */
	size_t used;		/* of the budget */
	uint8_t *g;		/* the bytes of its batches */
	size_t glen, gcap;
	struct batch *b;	/* its event batches, in file order */
	size_t nb, capb;
	struct u64map *strs;	/* string id -> index in str + 1 */
	struct str *str;
	size_t nstr, capstr;
	struct u64map *stks;	/* stack id -> offset of its frame count in g */
	struct u64map *pcs;	/* PC -> index in fr + 1: the first frame read for it */
	struct frame *fr;
	size_t nfr, capfr;
	struct sample *smp;
	size_t nsmp, capsmp;
	uint64_t nbatches;	/* of every kind */
	struct gt2_state_batch *sb;	/* its event batches for the state tracker */
	size_t capsb;
	struct gt2_state *state;	/* the scheduler's, since the first generation */

	/* The next generation's first batch, read while reading this one; or the error reading
	 * it, which Go reports after this generation's events. */
	bool have_spill;
	struct hdr spill;
	uint8_t *spbuf;
	int spill_err;
	char spill_msg[256];

	/* Where the events are handed out. */
	bool open;
	size_t bi, boff, si;
	uint64_t last;
};

static int fail(struct gt2_reader *r, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->msg, sizeof(r->msg), "offset %llu: ", (unsigned long long)off);

	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

/* ---- input ----------------------------------------------------------------------------------- */

/* Bytes ready in the input after filling it: > 0, 0 at its end, or a negative errno. */
static ssize_t fill(struct gt2_reader *r)
{
	size_t want = IN_SIZE;
	ssize_t n;

	if (r->in_pos < r->in_len)
		return (ssize_t)(r->in_len - r->in_pos);
	if (r->eof)
		return 0;
	if (r->limit) {
		if (r->pos >= r->limit) {
			r->eof = true;
			return 0;
		}
		if (r->limit - r->pos < want)
			want = (size_t)(r->limit - r->pos);
	}
	do
		n = read(r->fd, r->in, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail(r, -errno, r->pos, "reading: %s", strerror(errno));
	r->in_pos = 0;
	r->in_len = (size_t)n;
	if (!n)
		r->eof = true;
	return n;
}

/* Copies up to n bytes to dst (NULL: skips them); the count, short at the end, or an error. */
static ssize_t take(struct gt2_reader *r, uint8_t *dst, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t avail = fill(r);
		size_t k;

		if (avail <= 0)
			return avail < 0 ? avail : (ssize_t)got;
		k = (size_t)avail < n - got ? (size_t)avail : n - got;
		if (dst)
			memcpy(dst + got, r->in + r->in_pos, k);
		r->in_pos += k;
		r->pos += k;
		got += k;
	}
	return (ssize_t)got;
}

/* A varint of the input: 1, 0 when the input ends before it, -EINVAL when it is cut or too
 * long (what binary.ReadUvarint refuses), another error. */
static int take_varint(struct gt2_reader *r, uint64_t *v)
{
	uint8_t b[GT_MAX_VARINT_LEN];

	for (size_t i = 0; i < sizeof(b); i++) {
		ssize_t n = take(r, &b[i], 1);

		if (n <= 0)
			return n < 0 ? (int)n : i ? -EINVAL : 0;
		if (!(b[i] & 0x80))
			return gt_varint_get(b, b + i + 1, v) ? 1 : -EINVAL;
	}
	return -EINVAL;
}

/* The header of the next batch: 1, 0 at the input's end, or an error with its message. */
static int take_header(struct gt2_reader *r, struct hdr *h)
{
	uint64_t *f[] = { &h->gen, &h->m, &h->base, &h->len };
	static const char *const names[] = { "generation", "M", "time", "size" };
	uint8_t t, exp;
	ssize_t n;

	h->off = r->pos;
	if ((n = take(r, &t, 1)) <= 0)
		return n < 0 ? (int)n : 0;
	if (t != GT2_EV_BATCH && t != GT2_EV_EXPERIMENTAL_BATCH)
		return fail(r, -EINVAL, h->off, "expected a batch, found type %u", t);
	h->exp = t == GT2_EV_EXPERIMENTAL_BATCH;
	if (h->exp && take(r, &exp, 1) != 1)
		return r->err ? r->err : fail(r, -EINVAL, h->off, "batch header cut short");
	for (size_t i = 0; i < 4; i++) {
		int ret = take_varint(r, f[i]);

		if (ret < 0 && ret != -EINVAL)
			return ret;
		if (ret != 1)
			return fail(r, -EINVAL, h->off, "batch header: bad or missing %s", names[i]);
	}
	if (h->len > GT2_MAX_BATCH)
		return fail(r, -EINVAL, h->off, "batch size %llu over the maximum %u",
			    (unsigned long long)h->len, GT2_MAX_BATCH);
	h->body = r->pos;
	return 1;
}

/* The body of batch h into dst (h->len bytes). */
static int take_body(struct gt2_reader *r, const struct hdr *h, uint8_t *dst)
{
	ssize_t n = take(r, dst, h->len);

	if (n < 0)
		return (int)n;
	if ((uint64_t)n != h->len)
		return fail(r, -EINVAL, h->off, "batch cut short: %zd of %llu bytes", n,
			    (unsigned long long)h->len);
	return 0;
}

/* ---- a generation's tables ------------------------------------------------------------------- */

/* Counts cost against the budget. */
static int spend(struct gt2_reader *r, size_t cost, uint64_t off)
{
	if (cost > r->budget - r->used)
		return fail(r, -EFBIG, off, "generation %llu takes more than %zu bytes, the reader's "
			    "budget", (unsigned long long)r->gen, r->budget);
	r->used += cost;
	return 0;
}

/* A cursor over a table batch's bytes. */
struct cur {
	const uint8_t *p, *end;
	uint64_t off;		/* file offset of p */
};

static bool cur_varint(struct cur *c, uint64_t *v)
{
	size_t n = gt_varint_get(c->p, c->end, v);

	c->p += n;
	c->off += n;
	return n;
}

static bool cur_varints(struct cur *c, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!cur_varint(c, &v[i]))
			return false;
	return true;
}

static int add_strings(struct gt2_reader *r, struct cur *c)
{
	while (c->p < c->end) {
		uint64_t at = c->off, id, len, *slot;
		bool added;

		if (*c->p != GT2_EV_STRING)
			return fail(r, -EINVAL, at, "expected a string entry, found type %u", *c->p);
		c->p++;
		c->off++;
		if (!cur_varint(c, &id) || !cur_varint(c, &len))
			return fail(r, -EINVAL, at, "string entry cut short");
		if (len > GT2_MAX_STRING)
			return fail(r, -EINVAL, at, "string of %llu bytes, over the maximum %u",
				    (unsigned long long)len, GT2_MAX_STRING);
		if (len > (uint64_t)(c->end - c->p))
			return fail(r, -EINVAL, at, "string cut short");
		if (!id || u64map__get(r->strs, id))
			return fail(r, -EINVAL, at, "string id %llu defined twice%s",
				    (unsigned long long)id, id ? "" : " (0 is the empty string)");
		if (spend(r, ENTRY_COST, at))
			return r->err;
		if (grow_array((void **)&r->str, &r->capstr, r->nstr + 1, sizeof(*r->str), 64) ||
		    !(slot = u64map__put(r->strs, id, &added)))
			return fail(r, -ENOMEM, at, "out of memory");
		r->str[r->nstr++] = (struct str){ (size_t)(c->p - r->g), (size_t)len };
		*slot = r->nstr;
		c->p += len;
		c->off += len;
	}
	return 0;
}

static int add_stacks(struct gt2_reader *r, struct cur *c)
{
	while (c->p < c->end) {
		uint64_t at = c->off, id, n, *slot;
		size_t frames;
		bool added;

		if (*c->p != GT2_EV_STACK)
			return fail(r, -EINVAL, at, "expected a stack entry, found type %u", *c->p);
		c->p++;
		c->off++;
		if (!cur_varint(c, &id))
			return fail(r, -EINVAL, at, "stack entry cut short");
		frames = (size_t)(c->p - r->g);
		if (!cur_varint(c, &n))
			return fail(r, -EINVAL, at, "stack entry cut short");
		if (n > GT2_MAX_FRAMES)
			return fail(r, -EINVAL, at, "stack of %llu frames, over the maximum %u",
				    (unsigned long long)n, GT2_MAX_FRAMES);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t f[4];

			if (!cur_varints(c, f, 4))
				return fail(r, -EINVAL, at, "stack %llu: frame %llu cut short",
					    (unsigned long long)id, (unsigned long long)i + 1);
			if (u64map__get(r->pcs, f[0]))
				continue;
			if (spend(r, ENTRY_COST, at))
				return r->err;
			if (grow_array((void **)&r->fr, &r->capfr, r->nfr + 1, sizeof(*r->fr), 64) ||
			    !(slot = u64map__put(r->pcs, f[0], &added)))
				return fail(r, -ENOMEM, at, "out of memory");
			r->fr[r->nfr++] = (struct frame){ f[1], f[2], f[3] };
			*slot = r->nfr;
		}
		if (!id || u64map__get(r->stks, id))
			return fail(r, -EINVAL, at, "stack id %llu defined twice%s",
				    (unsigned long long)id, id ? "" : " (0 is no stack)");
		if (spend(r, ENTRY_COST, at))
			return r->err;
		if (!(slot = u64map__put(r->stks, id, &added)))
			return fail(r, -ENOMEM, at, "out of memory");
		*slot = frames;
	}
	return 0;
}

static int add_samples(struct gt2_reader *r, struct cur *c)
{
	while (c->p < c->end) {
		struct sample s = { .off = c->off };

		if (*c->p != GT2_EV_CPU_SAMPLE)
			return fail(r, -EINVAL, s.off, "expected a CPU sample, found type %u", *c->p);
		c->p++;
		c->off++;
		if (!cur_varints(c, s.args, 5))
			return fail(r, -EINVAL, s.off, "CPU sample cut short");
		if (spend(r, ENTRY_COST, s.off))
			return r->err;
		if (grow_array((void **)&r->smp, &r->capsmp, r->nsmp + 1, sizeof(*r->smp), 64))
			return fail(r, -ENOMEM, s.off, "out of memory");
		r->smp[r->nsmp++] = s;
	}
	return 0;
}

/* Files batch h, whose bytes are at data in g, as Go's processBatch does. */
static int add_batch(struct gt2_reader *r, const struct hdr *h, size_t data)
{
	uint64_t body = h->body;
	struct cur c = { r->g + data + 1, r->g + data + h->len, body + 1 };
	uint8_t first = h->len ? r->g[data] : 0;

	r->nbatches++;
	if (h->exp) {
		r->glen = data;	/* an experiment's data: not lxtrace's to read */
		return 0;
	}
	switch (h->len ? first : 0) {
	case GT2_EV_STRINGS:
		return add_strings(r, &c);
	case GT2_EV_STACKS:
		return add_stacks(r, &c);
	case GT2_EV_CPU_SAMPLES:
		return add_samples(r, &c);
	case GT2_EV_FREQUENCY:
		if (r->freq)
			return fail(r, -EINVAL, h->off, "a second Frequency in generation %llu",
				    (unsigned long long)r->gen);
		if (!cur_varint(&c, &r->freq))
			return fail(r, -EINVAL, h->off, "Frequency cut short");
		if (!r->freq)
			return fail(r, -EINVAL, h->off, "Frequency of 0 ticks per second");
		return 0;
	default:
		if (grow_array((void **)&r->b, &r->capb, r->nb + 1, sizeof(*r->b), 16))
			return fail(r, -ENOMEM, h->off, "out of memory");
		r->b[r->nb++] = (struct batch){ body, h->m, h->base, data, (size_t)h->len };
		return 0;
	}
}

/* Room for a batch's bytes in the generation's buffer: their offset there, or an error. */
static int room(struct gt2_reader *r, const struct hdr *h, size_t *data)
{
	if (spend(r, (size_t)h->len + ENTRY_COST, h->off))
		return r->err;
	/* One more: an empty batch has an address too. */
	if (grow_array((void **)&r->g, &r->gcap, r->glen + h->len + 1, 1, IN_SIZE))
		return fail(r, -ENOMEM, h->off, "out of memory");
	*data = r->glen;
	r->glen += h->len;
	return 0;
}

/* ---- a generation's checks ------------------------------------------------------------------- */

static bool has_string(const struct gt2_reader *r, uint64_t id)
{
	return !id || u64map__get(r->strs, id);
}

/* Decodes the event at p (< end) of batch b: its length, or 0 when it is malformed (message
 * set). */
static size_t decode(struct gt2_reader *r, const struct batch *b, size_t boff,
		     struct gt2_event *e, uint64_t *dt)
{
	const uint8_t *p = r->g + b->data + boff, *end = r->g + b->data + b->len;
	const struct gt2_spec *s = gt2_spec(*p);
	size_t n;

	e->off = b->body + boff;
	e->type = *p;
	if (!s) {
		fail(r, -EINVAL, e->off, "event type %u is not a timed event", *p);
		return 0;
	}
	e->nargs = s->nargs;
	if (!(n = gt2_spec__decode(p, end, dt, e->args)))
		fail(r, -EINVAL, e->off, "%s cut short or malformed", s->name);
	return n;
}

/* What Go's reader checks once the generation is in: a Frequency, the frames' strings, every
 * event decodable with its strings and stacks in the tables, and something to show. */
static int check_generation(struct gt2_reader *r)
{
	uint64_t events = 0, ts = 0;

	r->lo = UINT64_MAX;
	r->hi = 0;

	if (!r->freq)
		return fail(r, -EINVAL, r->gen_start, "generation %llu has no Frequency",
			    (unsigned long long)r->gen);
	for (size_t i = 0; i < r->nfr; i++)
		if (!has_string(r, r->fr[i].func) || !has_string(r, r->fr[i].file))
			return fail(r, -EINVAL, r->gen_start, "generation %llu: a frame names string "
				    "%llu, not in its table", (unsigned long long)r->gen,
				    (unsigned long long)(has_string(r, r->fr[i].func) ?
							 r->fr[i].file : r->fr[i].func));
	for (size_t i = 0; i < r->nb; i++) {
		for (size_t off = 0; off < r->b[i].len; events++) {
			struct gt2_event e;
			const struct gt2_spec *s;
			uint64_t dt;
			size_t n = decode(r, &r->b[i], off, &e, &dt);

			if (!n)
				return r->err;
			ts = (off ? ts : r->b[i].base) + dt;
			r->lo = ts < r->lo ? ts : r->lo;
			r->hi = ts > r->hi ? ts : r->hi;
			s = gt2_spec(e.type);
			for (unsigned a = 0; a < s->nargs; a++) {
				if ((s->strings >> a & 1) && !has_string(r, e.args[a]))
					return fail(r, -EINVAL, e.off, "%s names string %llu, not in "
						    "generation %llu's table", s->name,
						    (unsigned long long)e.args[a],
						    (unsigned long long)r->gen);
				if ((s->stacks >> a & 1) && e.args[a] &&
				    !u64map__get(r->stks, e.args[a]))
					return fail(r, -EINVAL, e.off, "%s names stack %llu, not in "
						    "generation %llu's table", s->name,
						    (unsigned long long)e.args[a],
						    (unsigned long long)r->gen);
			}
			off += n;
		}
	}
	if (!events && !r->nsmp)
		return fail(r, -EINVAL, r->gen_start, "generation %llu has no event",
			    (unsigned long long)r->gen);
	for (size_t i = 0; i < r->nsmp; i++) {
		/* Go 1.23 takes it, then panics printing its stack. */
		if (r->smp[i].args[4] && !u64map__get(r->stks, r->smp[i].args[4]))
			return fail(r, -EINVAL, r->smp[i].off, "CPU sample names stack %llu, not in "
				    "generation %llu's table", (unsigned long long)r->smp[i].args[4],
				    (unsigned long long)r->gen);
		r->lo = r->smp[i].args[0] < r->lo ? r->smp[i].args[0] : r->lo;
		r->hi = r->smp[i].args[0] > r->hi ? r->smp[i].args[0] : r->hi;
	}
	/* Go turns ticks into int64 ns (through a float64): past 2^63 ns its times wrap, and so
	 * would every difference taken of them. */
	if ((unsigned __int128)r->hi * 1000000000u / r->freq > INT64_MAX)
		return fail(r, -EINVAL, r->gen_start, "generation %llu: time %llu at %llu ticks per "
			    "second is past 2^63 ns, what Go's clock holds", (unsigned long long)r->gen,
			    (unsigned long long)r->hi, (unsigned long long)r->freq);
	r->gen_events = events + r->nsmp;
	r->gen_timed = events;
	return 0;
}

static const char *state_string(void *ctx, uint64_t id, size_t *len)
{
	return gt2_reader__string(ctx, id, len);
}

/* What Go's ordering checks once the generation's structure is whole (state.h). */
static int check_state(struct gt2_reader *r)
{
	int ret;

	if (grow_array((void **)&r->sb, &r->capsb, r->nb, sizeof(*r->sb), 16))
		return fail(r, -ENOMEM, r->gen_start, "out of memory");
	for (size_t i = 0; i < r->nb; i++)
		r->sb[i] = (struct gt2_state_batch){ r->b[i].m, r->b[i].base, r->b[i].body,
						     r->g + r->b[i].data, r->b[i].len };
	ret = gt2_state__generation(r->state, r->gen, r->freq, r->sb, r->nb, state_string, r,
				    r->msg, sizeof(r->msg));
	return ret ? (r->err = ret) : 0;
}

static void clear_generation(struct gt2_reader *r)
{
	r->gen = r->freq = 0;
	r->used = r->glen = r->nb = r->nstr = r->nfr = r->nsmp = r->nbatches = 0;
	u64map__clear(r->strs);
	u64map__clear(r->stks);
	u64map__clear(r->pcs);
	r->open = false;
}

/* Reads the next generation whole, as Go's readGeneration does: 1, 0 at the end, or an
 * error. */
static int read_generation(struct gt2_reader *r)
{
	struct hdr h;
	size_t data;
	int ret;

	clear_generation(r);
	if (r->spill_err || (!r->have_spill && r->ngens)) {
		r->done = true;
		if (!r->spill_err)
			return 0;
		snprintf(r->msg, sizeof(r->msg), "%s", r->spill_msg);
		return r->err = r->spill_err;
	}
	r->gen_start = r->pos;
	if (r->have_spill) {
		r->have_spill = false;
		r->gen = r->spill.gen;
		r->gen_start = r->spill.off;
		if (room(r, &r->spill, &data))
			return r->err;
		memcpy(r->g + data, r->spbuf, r->spill.len);
		if ((ret = add_batch(r, &r->spill, data)))
			return ret;
	}
	for (;;) {
		ret = take_header(r, &h);
		if (!ret)
			break;
		if (ret > 0 && !h.gen)
			return fail(r, -EINVAL, h.off, "batch of generation 0");
		if (ret > 0 && !r->gen)
			r->gen = h.gen;
		if (ret > 0 && h.gen == r->gen + 1) {
			ret = take_body(r, &h, r->spbuf);
			if (!ret) {
				r->spill = h;
				r->have_spill = true;
				r->gen_end = h.off;
				break;
			}
		}
		if (ret > 0 && h.gen != r->gen)
			return fail(r, -EINVAL, h.off, "batch of generation %llu in generation %llu: "
				    "generations out of order", (unsigned long long)h.gen,
				    (unsigned long long)r->gen);
		if (ret > 0 && !(ret = room(r, &h, &data)))
			ret = take_body(r, &h, r->g + data);
		if (ret < 0 && r->gen && ret != -EFBIG && ret != -ENOMEM) {
			/* Go keeps what came before a bad batch and reports it after. */
			r->spill_err = ret;
			snprintf(r->spill_msg, sizeof(r->spill_msg), "%s", r->msg);
			r->err = 0;
			r->msg[0] = '\0';
			r->gen_end = h.off;
			goto check;
		}
		if (ret < 0)
			return ret;
		if ((ret = add_batch(r, &h, data)))
			return ret;
	}
	r->gen_end = r->have_spill ? r->spill.off : r->pos;
	if (!r->gen)
		return fail(r, -EINVAL, r->pos, "no generation: no Frequency");
check:
	if ((ret = check_generation(r)) || (ret = check_state(r)))
		return ret;
	r->ngens++;
	r->open = true;
	r->bi = r->boff = r->si = 0;
	return 1;
}

/* ---- handing out ----------------------------------------------------------------------------- */

int gt2_reader__next_generation(struct gt2_reader *r)
{
	uint8_t hdr[GT2_HEADER_LEN];
	ssize_t n;
	int ret;

	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (!r->started) {
		r->started = true;
		n = take(r, hdr, sizeof(hdr));
		if (n < 0)
			return (int)n;
		if (!gt2_reader__is_header(hdr, (size_t)n))
			return fail(r, -EINVAL, 0, "not a Go 1.22+ execution trace (bad header)");
	}
	ret = read_generation(r);
	if (ret <= 0)
		r->open = false;
	return ret;
}

int gt2_reader__next(struct gt2_reader *r, struct gt2_event *e)
{
	int ret;

	for (;;) {
		if (r->err)
			return r->err;
		if (!r->open) {
			if ((ret = gt2_reader__next_generation(r)) <= 0)
				return ret;
			continue;
		}
		while (r->bi < r->nb && r->boff == r->b[r->bi].len) {
			r->bi++;
			r->boff = 0;
		}
		if (r->bi < r->nb) {
			const struct batch *b = &r->b[r->bi];
			uint64_t dt;
			size_t n = decode(r, b, r->boff, e, &dt);

			if (!n)
				return r->err;	/* checked already: cannot happen */
			if (!r->boff)
				r->last = b->base;
			r->last += dt;
			r->boff += n;
			e->ts = r->last;
			e->gen = r->gen;
			e->m = b->m;
			return 1;
		}
		if (r->si < r->nsmp) {
			const struct sample *s = &r->smp[r->si++];

			*e = (struct gt2_event){ .gen = r->gen, .ts = s->args[0], .off = s->off,
						 .m = s->args[1], .type = GT2_EV_CPU_SAMPLE,
						 .nargs = 5 };
			memcpy(e->args, s->args, sizeof(s->args));
			return 1;
		}
		r->open = false;
	}
}

uint64_t gt2_reader__generation(const struct gt2_reader *r)
{
	return r->gen;
}

uint64_t gt2_reader__gen_start(const struct gt2_reader *r)
{
	return r->gen_start;
}

uint64_t gt2_reader__gen_end(const struct gt2_reader *r)
{
	return r->gen_end;
}

uint64_t gt2_reader__gen_events(const struct gt2_reader *r)
{
	return r->gen_events;
}

void gt2_reader__gen_split(const struct gt2_reader *r, uint64_t *batches, uint64_t *events)
{
	*batches = r->nbatches;
	*events = r->gen_timed;
}

int64_t gt2_reader__ns(const struct gt2_reader *r, uint64_t ts)
{
	uint64_t f = r->freq ? r->freq : 1000000000;

	return (int64_t)((__int128)ts * 1000000000 / f);
}

void gt2_reader__gen_span(const struct gt2_reader *r, int64_t *first_ns, int64_t *last_ns)
{
	*first_ns = gt2_reader__ns(r, r->lo);
	*last_ns = gt2_reader__ns(r, r->hi);
}

uint64_t gt2_reader__generations(const struct gt2_reader *r)
{
	return r->ngens;
}

const char *gt2_reader__string(const struct gt2_reader *r, uint64_t id, size_t *len)
{
	uint64_t *i = id ? u64map__get(r->strs, id) : NULL;

	*len = i ? r->str[*i - 1].len : 0;
	if (!id)
		return "";
	return i ? (const char *)r->g + r->str[*i - 1].data : NULL;
}

int gt2_reader__stack(const struct gt2_reader *r, uint64_t id, struct gt2_frame *out)
{
	uint64_t *at = id ? u64map__get(r->stks, id) : NULL, n;
	struct cur c;

	if (!id)
		return 0;
	if (!at)
		return -1;
	/* Checked when read: the count and every frame decode. */
	c = (struct cur){ r->g + *at, r->g + r->glen, 0 };
	cur_varint(&c, &n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t f[4];
		const struct frame *fr;

		cur_varints(&c, f, 4);
		fr = &r->fr[*u64map__get(r->pcs, f[0]) - 1];
		out[i] = (struct gt2_frame){ .pc = f[0], .line = fr->line };
		out[i].func = gt2_reader__string(r, fr->func, &out[i].func_len);
		out[i].file = gt2_reader__string(r, fr->file, &out[i].file_len);
	}
	return (int)n;
}

const char *gt2_reader__error(const struct gt2_reader *r)
{
	return r->err ? r->msg : "";
}

bool gt2_reader__is_header(const uint8_t *p, size_t len)
{
	return len >= GT2_HEADER_LEN && (!memcmp(p, "go 1.22 trace\0\0\0", GT2_HEADER_LEN) ||
					 !memcmp(p, "go 1.23 trace\0\0\0", GT2_HEADER_LEN));
}

struct gt2_reader *gt2_reader__new(const struct gt2_reader_opts *o)
{
	struct gt2_reader *r;

	if (!o || o->sz < sizeof(*o) || o->fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = o->fd;
	r->limit = o->limit;
	r->budget = o->gen_budget ? o->gen_budget : GT2_READER_BUDGET;
	r->started = o->header_read;
	r->pos = !o->header_read ? 0 : o->start ? o->start : GT2_HEADER_LEN;
	r->in = malloc(IN_SIZE);
	r->spbuf = malloc(GT2_MAX_BATCH);
	r->strs = u64map__new();
	r->stks = u64map__new();
	r->pcs = u64map__new();
	r->state = gt2_state__new(0);
	if (!r->in || !r->spbuf || !r->strs || !r->stks || !r->pcs || !r->state) {
		gt2_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void gt2_reader__free(struct gt2_reader *r)
{
	if (!r)
		return;
	free(r->in);
	free(r->spbuf);
	free(r->g);
	free(r->b);
	free(r->str);
	free(r->fr);
	free(r->smp);
	free(r->sb);
	gt2_state__free(r->state);
	u64map__free(r->strs);
	u64map__free(r->stks);
	u64map__free(r->pcs);
	free(r);
}
