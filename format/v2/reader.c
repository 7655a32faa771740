/* reader.c - the Go 1.22+ decoder's front (reader.h): a generation read whole and checked
 * (reader_gen.c), then its events handed out in file order, batch by batch, then its CPU
 * samples; and the reader's life (docs/format.md §18.9). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/v2/reader_core.h"
#include "format/v2/state.h"
#include "lib/u64map.h"

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
		n = gt2_reader_take(r, hdr, sizeof(hdr));
		if (n < 0)
			return (int)n;
		if (!gt2_reader__is_header(hdr, (size_t)n))
			return gt2_reader_fail(r, -EINVAL, 0,
					       "not a Go 1.22+ execution trace (bad header)");
	}
	ret = gt2_reader_read_generation(r);
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
			size_t n = gt2_reader_decode(r, b, r->boff, e, &dt);

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

uint64_t gt2_reader__generations(const struct gt2_reader *r)
{
	return r->ngens;
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
