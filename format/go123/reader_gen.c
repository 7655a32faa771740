/* reader_gen.c - a go1.23 generation read whole (reader_core.h), as Go 1.23's readGeneration
 * reads it: its batches filed (event batches indexed, tables read), then checked as Go's reader
 * checks its structure (internal/trace: batch.go, generation.go, batchcursor.go), then its
 * scheduler state (state.h), before any of its events is handed out. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "format/go123/reader_core.h"
#include "format/go123/state.h"
#include "lib/grow.h"
#include "lib/u64map.h"

/* Files batch h, whose bytes are at data in g, as Go's processBatch does. */
static int add_batch(struct go123_reader *r, const struct hdr *h, size_t data)
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
	case GO123_EV_STRINGS:
		return go123_reader_add_strings(r, &c);
	case GO123_EV_STACKS:
		return go123_reader_add_stacks(r, &c);
	case GO123_EV_CPU_SAMPLES:
		return go123_reader_add_samples(r, &c);
	case GO123_EV_FREQUENCY:
		return go123_reader_add_frequency(r, h, &c);
	default:
		if (grow_array((void **)&r->b, &r->capb, r->nb + 1, sizeof(*r->b), 16))
			return go123_reader_fail(r, -ENOMEM, h->off, "out of memory");
		r->b[r->nb++] = (struct batch){ body, h->m, h->base, data, (size_t)h->len };
		return 0;
	}
}

/* Room for a batch's bytes in the generation's buffer: their offset there, or an error. */
static int room(struct go123_reader *r, const struct hdr *h, size_t *data)
{
	if (go123_reader_spend(r, (size_t)h->len + ENTRY_COST, h->off))
		return r->err;
	/* One more: an empty batch has an address too. */
	if (grow_array((void **)&r->g, &r->gcap, r->glen + h->len + 1, 1, IN_SIZE))
		return go123_reader_fail(r, -ENOMEM, h->off, "out of memory");
	*data = r->glen;
	r->glen += h->len;
	return 0;
}

/* Decodes the event at p (< end) of batch b: its length, or 0 when it is malformed (message
 * set). */
size_t go123_reader_decode(struct go123_reader *r, const struct batch *b, size_t boff,
			 struct go123_event *e, uint64_t *dt)
{
	const uint8_t *p = r->g + b->data + boff, *end = r->g + b->data + b->len;
	const struct go123_spec *s = go123_spec(*p);
	size_t n;

	e->off = b->body + boff;
	e->type = *p;
	if (!s) {
		go123_reader_fail(r, -EINVAL, e->off, "event type %u is not a timed event", *p);
		return 0;
	}
	e->nargs = s->nargs;
	if (!(n = go123_spec__decode(p, end, dt, e->args)))
		go123_reader_fail(r, -EINVAL, e->off, "%s cut short or malformed", s->name);
	return n;
}

/* What Go's reader checks once the generation is in: a Frequency, the frames' strings, every
 * event decodable with its strings and stacks in the tables, and something to show. */
static int check_generation(struct go123_reader *r)
{
	uint64_t events = 0, ts = 0;

	r->lo = UINT64_MAX;
	r->hi = 0;

	if (!r->freq)
		return go123_reader_fail(r, -EINVAL, r->gen_start,
					 "generation %llu has no Frequency",
					 (unsigned long long)r->gen);
	for (size_t i = 0; i < r->nfr; i++)
		if (!go123_reader_has_string(r, r->fr[i].func) ||
		    !go123_reader_has_string(r, r->fr[i].file))
			return go123_reader_fail(
				r, -EINVAL, r->gen_start,
				"generation %llu: a frame names string "
				"%llu, not in its table",
				(unsigned long long)r->gen,
				(unsigned long long)(go123_reader_has_string(r, r->fr[i].func)
							     ? r->fr[i].file
							     : r->fr[i].func));
	for (size_t i = 0; i < r->nb; i++) {
		for (size_t off = 0; off < r->b[i].len; events++) {
			struct go123_event e;
			const struct go123_spec *s;
			uint64_t dt;
			size_t n = go123_reader_decode(r, &r->b[i], off, &e, &dt);

			if (!n)
				return r->err;
			ts = (off ? ts : r->b[i].base) + dt;
			r->lo = ts < r->lo ? ts : r->lo;
			r->hi = ts > r->hi ? ts : r->hi;
			s = go123_spec(e.type);
			for (unsigned a = 0; a < s->nargs; a++) {
				const char *missing = NULL;

				if ((s->strings >> a & 1) && !go123_reader_has_string(r, e.args[a]))
					missing = "string";
				else if ((s->stacks >> a & 1) && e.args[a] &&
					 !u64map__get(r->stks, e.args[a]))
					missing = "stack";
				if (missing)
					return go123_reader_fail(r, -EINVAL, e.off,
								 "%s names %s %llu, not in "
								 "generation %llu's table", s->name,
								 missing, (unsigned long long)e.args[a],
								 (unsigned long long)r->gen);
			}
			off += n;
		}
	}
	if (!events && !r->nsmp)
		return go123_reader_fail(r, -EINVAL, r->gen_start, "generation %llu has no event",
				       (unsigned long long)r->gen);
	for (size_t i = 0; i < r->nsmp; i++) {
		/* Go 1.23 takes it, then panics printing its stack. */
		if (r->smp[i].args[4] && !u64map__get(r->stks, r->smp[i].args[4]))
			return go123_reader_fail(r, -EINVAL, r->smp[i].off,
					       "CPU sample names stack %llu, not in "
					       "generation %llu's table",
					       (unsigned long long)r->smp[i].args[4],
					       (unsigned long long)r->gen);
		r->lo = r->smp[i].args[0] < r->lo ? r->smp[i].args[0] : r->lo;
		r->hi = r->smp[i].args[0] > r->hi ? r->smp[i].args[0] : r->hi;
	}
	if (go123_reader_check_time(r))
		return r->err;
	r->gen_events = events + r->nsmp;
	r->gen_timed = events;
	return 0;
}

static const char *state_string(void *ctx, uint64_t id, size_t *len)
{
	return go123_reader__string(ctx, id, len);
}

/* What Go's ordering checks once the generation's structure is whole (state.h). */
static int check_state(struct go123_reader *r)
{
	int ret;

	if (grow_array((void **)&r->sb, &r->capsb, r->nb, sizeof(*r->sb), 16))
		return go123_reader_fail(r, -ENOMEM, r->gen_start, "out of memory");
	for (size_t i = 0; i < r->nb; i++)
		r->sb[i] = (struct go123_state_batch){ r->b[i].m, r->b[i].base, r->b[i].body,
						     r->g + r->b[i].data, r->b[i].len };
	ret = go123_state__generation(r->state, r->gen, r->freq, r->sb, r->nb, state_string, r,
				    r->msg, sizeof(r->msg));
	return ret ? (r->err = ret) : 0;
}

static void clear_generation(struct go123_reader *r)
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
int go123_reader_read_generation(struct go123_reader *r)
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
		ret = go123_reader_take_header(r, &h);
		if (!ret)
			break;
		if (ret > 0 && !h.gen)
			return go123_reader_fail(r, -EINVAL, h.off, "batch of generation 0");
		if (ret > 0 && !r->gen)
			r->gen = h.gen;
		if (ret > 0 && h.gen == r->gen + 1) {
			ret = go123_reader_take_body(r, &h, r->spbuf);
			if (!ret) {
				r->spill = h;
				r->have_spill = true;
				r->gen_end = h.off;
				break;
			}
		}
		if (ret > 0 && h.gen != r->gen)
			return go123_reader_fail(r, -EINVAL, h.off,
					       "batch of generation %llu in generation %llu: "
					       "generations out of order",
					       (unsigned long long)h.gen,
					       (unsigned long long)r->gen);
		if (ret > 0 && !(ret = room(r, &h, &data)))
			ret = go123_reader_take_body(r, &h, r->g + data);
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
		return go123_reader_fail(r, -EINVAL, r->pos, "no generation: no Frequency");
check:
	if ((ret = check_generation(r)) || (ret = check_state(r)))
		return ret;
	r->ngens++;
	r->open = true;
	r->bi = r->boff = r->si = 0;
	return 1;
}
