/* reader_tables.c - a go1.23 generation's tables (reader_core.h): its strings, stacks (each
 * frame kept once per PC, as Go's reader keeps them), CPU samples and Frequency, each entry
 * checked as Go 1.23 checks it and counted against the budget; and the lookups of a string or
 * a stack by the generation's id. */
#include <errno.h>

#include "format/go123/reader_core.h"
#include "format/varint.h"
#include "lib/grow.h"
#include "lib/u64map.h"

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

int go123_reader_add_strings(struct go123_reader *r, struct cur *c)
{
	while (c->p < c->end) {
		uint64_t at = c->off, id, len, *slot;
		bool added;

		if (*c->p != GO123_EV_STRING)
			return go123_reader_fail(r, -EINVAL, at,
					       "expected a string entry, found type %u", *c->p);
		c->p++;
		c->off++;
		if (!cur_varint(c, &id) || !cur_varint(c, &len))
			return go123_reader_fail(r, -EINVAL, at, "string entry cut short");
		if (len > GO123_MAX_STRING)
			return go123_reader_fail(r, -EINVAL, at,
					       "string of %llu bytes, over the maximum %u",
					       (unsigned long long)len, GO123_MAX_STRING);
		if (len > (uint64_t)(c->end - c->p))
			return go123_reader_fail(r, -EINVAL, at, "string cut short");
		if (!id || u64map__get(r->strs, id))
			return go123_reader_fail(r, -EINVAL, at, "string id %llu defined twice%s",
					       (unsigned long long)id,
					       id ? "" : " (0 is the empty string)");
		if (go123_reader_spend(r, ENTRY_COST, at))
			return r->err;
		if (grow_array((void **)&r->str, &r->capstr, r->nstr + 1, sizeof(*r->str), 64) ||
		    !(slot = u64map__put(r->strs, id, &added)))
			return go123_reader_fail(r, -ENOMEM, at, "out of memory");
		r->str[r->nstr++] = (struct str){ (size_t)(c->p - r->g), (size_t)len };
		*slot = r->nstr;
		c->p += len;
		c->off += len;
	}
	return 0;
}

int go123_reader_add_stacks(struct go123_reader *r, struct cur *c)
{
	while (c->p < c->end) {
		uint64_t at = c->off, id, n, *slot;
		size_t frames;
		bool added;

		if (*c->p != GO123_EV_STACK)
			return go123_reader_fail(r, -EINVAL, at,
					       "expected a stack entry, found type %u", *c->p);
		c->p++;
		c->off++;
		if (!cur_varint(c, &id))
			return go123_reader_fail(r, -EINVAL, at, "stack entry cut short");
		frames = (size_t)(c->p - r->g);
		if (!cur_varint(c, &n))
			return go123_reader_fail(r, -EINVAL, at, "stack entry cut short");
		if (n > GO123_MAX_FRAMES)
			return go123_reader_fail(r, -EINVAL, at,
					       "stack of %llu frames, over the maximum %u",
					       (unsigned long long)n, GO123_MAX_FRAMES);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t f[4];

			if (!cur_varints(c, f, 4))
				return go123_reader_fail(r, -EINVAL, at,
						       "stack %llu: frame %llu cut short",
						       (unsigned long long)id,
						       (unsigned long long)i + 1);
			if (u64map__get(r->pcs, f[0]))
				continue;
			if (go123_reader_spend(r, ENTRY_COST, at))
				return r->err;
			if (grow_array((void **)&r->fr, &r->capfr, r->nfr + 1, sizeof(*r->fr),
				       64) ||
			    !(slot = u64map__put(r->pcs, f[0], &added)))
				return go123_reader_fail(r, -ENOMEM, at, "out of memory");
			r->fr[r->nfr++] = (struct frame){ f[1], f[2], f[3] };
			*slot = r->nfr;
		}
		if (!id || u64map__get(r->stks, id))
			return go123_reader_fail(r, -EINVAL, at, "stack id %llu defined twice%s",
					       (unsigned long long)id,
					       id ? "" : " (0 is no stack)");
		if (go123_reader_spend(r, ENTRY_COST, at))
			return r->err;
		if (!(slot = u64map__put(r->stks, id, &added)))
			return go123_reader_fail(r, -ENOMEM, at, "out of memory");
		*slot = frames;
	}
	return 0;
}

int go123_reader_add_samples(struct go123_reader *r, struct cur *c)
{
	while (c->p < c->end) {
		struct sample s = { .off = c->off };

		if (*c->p != GO123_EV_CPU_SAMPLE)
			return go123_reader_fail(r, -EINVAL, s.off,
					       "expected a CPU sample, found type %u", *c->p);
		c->p++;
		c->off++;
		if (!cur_varints(c, s.args, 5))
			return go123_reader_fail(r, -EINVAL, s.off, "CPU sample cut short");
		if (go123_reader_spend(r, ENTRY_COST, s.off))
			return r->err;
		if (grow_array((void **)&r->smp, &r->capsmp, r->nsmp + 1, sizeof(*r->smp), 64))
			return go123_reader_fail(r, -ENOMEM, s.off, "out of memory");
		r->smp[r->nsmp++] = s;
	}
	return 0;
}

int go123_reader_add_frequency(struct go123_reader *r, const struct hdr *h, struct cur *c)
{
	if (r->freq)
		return go123_reader_fail(r, -EINVAL, h->off,
					 "a second Frequency in generation %llu",
					 (unsigned long long)r->gen);
	if (!cur_varint(c, &r->freq))
		return go123_reader_fail(r, -EINVAL, h->off, "Frequency cut short");
	if (!r->freq)
		return go123_reader_fail(r, -EINVAL, h->off, "Frequency of 0 ticks per second");
	return 0;
}

bool go123_reader_has_string(const struct go123_reader *r, uint64_t id)
{
	return !id || u64map__get(r->strs, id);
}

const char *go123_reader__string(const struct go123_reader *r, uint64_t id, size_t *len)
{
	uint64_t *i = id ? u64map__get(r->strs, id) : NULL;

	*len = i ? r->str[*i - 1].len : 0;
	if (!id)
		return "";
	return i ? (const char *)r->g + r->str[*i - 1].data : NULL;
}

int go123_reader__stack(const struct go123_reader *r, uint64_t id, struct go123_frame *out)
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
		out[i] = (struct go123_frame){ .pc = f[0], .line = fr->line };
		out[i].func = go123_reader__string(r, fr->func, &out[i].func_len);
		out[i].file = go123_reader__string(r, fr->file, &out[i].file_len);
	}
	return (int)n;
}

