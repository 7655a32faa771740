/* reader.c - decodes a whole Go 1.19 trace held in memory, distrusting every byte of it.
 *
 * Bounds: nothing is allocated from a count the file claims. Strings and UserLog messages are
 * copied into one arena no larger than the input (each record spends at least one byte on
 * framing, which pays for the NUL); frames and events grow with what was actually read.
 *
 * What is refused is what Go 1.19 or 1.23 refuse at the byte level: a wrong header, unknown
 * types, wrong value counts, truncated records, malformed varints, bad string ids and
 * lengths, over-long bodies (1.23), records before the first batch (1.23), a missing or zero
 * frequency and a trace without events. The goroutine state machine is not checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/reader.h"
#include "format/varint.h"
#include "lib/grow.h"
#include "lib/u64map.h"

#define MAX_VALUES (2 + 4 * GT_MAX_STACK_FRAMES)

struct rstack {
	uint64_t id;
	size_t n;
	size_t raw;		/* index of its first value in raw_frames */
};

struct gt_trace {
	struct gt_event *events;
	size_t nevents, events_cap;
	uint64_t frequency;
	char *arena;		/* strings (NUL-terminated) and UserLog messages */
	size_t arena_len;
	struct u64map *strings;	/* id -> arena offset */
	struct u64map *stack_ids;	/* id -> index in stacks */
	struct gt_stack *stacks;
	struct rstack *rstacks;
	size_t nstacks, stacks_cap;
	uint64_t *raw_frames;	/* pc, func sid, file sid, line for every frame read */
	size_t nraw, raw_cap;
	struct gt_rframe *frames;
};

struct parser {
	const uint8_t *buf, *p, *end;
	struct gt_trace *t;
	char *err;
	size_t errlen;
	uint64_t vals[MAX_VALUES];
	unsigned nvals;
	/* Batch state, as Go's parser keeps it. */
	struct u64map *last_g;	/* P -> G running on it when its batch ended */
	bool in_batch;
	uint64_t cur_p, cur_g, last_ts;
};

static int failf(struct parser *ps, const uint8_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->err && ps->errlen) {
		n = snprintf(ps->err, ps->errlen, "offset %zu: ", (size_t)(at - ps->buf));
		if (n >= 0 && (size_t)n < ps->errlen) {
			va_start(ap, fmt);
			vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static int read_val(struct parser *ps, const uint8_t *end, const uint8_t *rec, uint64_t *v)
{
	size_t n = gt_varint_get(ps->p, end, v);

	if (!n)
		return failf(ps, rec, ps->p >= end ? "truncated record" : "malformed varint");
	ps->p += n;
	return 0;
}

/* String record: id, len, bytes. */
static int read_string(struct parser *ps, const uint8_t *rec)
{
	struct gt_trace *t = ps->t;
	uint64_t id, len, *slot;
	bool added;
	int err;

	err = read_val(ps, ps->end, rec, &id);
	if (!err)
		err = read_val(ps, ps->end, rec, &len);
	if (err)
		return err;
	if (!id)
		return failf(ps, rec, "string id 0");
	if (!len || len > GT_MAX_STRING_LEN)
		return failf(ps, rec, "string %llu has bad length %llu", (unsigned long long)id,
			     (unsigned long long)len);
	if (len > (uint64_t)(ps->end - ps->p))
		return failf(ps, rec, "truncated string %llu", (unsigned long long)id);
	slot = u64map__put(t->strings, id, &added);
	if (!slot)
		return -ENOMEM;
	if (!added)
		return failf(ps, rec, "string id %llu redefined", (unsigned long long)id);
	*slot = t->arena_len;
	memcpy(t->arena + t->arena_len, ps->p, len);
	t->arena[t->arena_len + len] = '\0';
	t->arena_len += len + 1;
	ps->p += len;
	return 0;
}

/* The values of a record whose header byte is b: inline, or length-prefixed. */
static int read_values(struct parser *ps, const uint8_t *rec, uint8_t b)
{
	const uint8_t *end = ps->end;
	unsigned k = b >> 6;
	uint64_t len;
	int err;

	ps->nvals = 0;
	if (k < 3) {
		for (unsigned i = 0; i <= k; i++) {
			err = read_val(ps, end, rec, &ps->vals[ps->nvals++]);
			if (err)
				return err;
		}
		return 0;
	}
	err = read_val(ps, end, rec, &len);
	if (err)
		return err;
	if (len > GT_MAX_LONG_BODY)
		return failf(ps, rec, "record body of %llu bytes exceeds %d",
			     (unsigned long long)len, GT_MAX_LONG_BODY);
	if (len > (uint64_t)(end - ps->p))
		return failf(ps, rec, "truncated record");
	end = ps->p + len;
	while (ps->p < end) {
		if (ps->nvals == MAX_VALUES)
			return failf(ps, rec, "too many values");
		err = read_val(ps, end, rec, &ps->vals[ps->nvals++]);
		if (err)
			return err;
	}
	return 0;
}

static int read_stack(struct parser *ps, const uint8_t *rec)
{
	struct gt_trace *t = ps->t;
	uint64_t n, *slot;
	bool added;

	if (ps->nvals < 2)
		return failf(ps, rec, "Stack has %u values, want at least 2", ps->nvals);
	n = ps->vals[1];
	if (n > GT_MAX_STACK_FRAMES)
		return failf(ps, rec, "Stack has %llu frames, limit %d", (unsigned long long)n,
			     GT_MAX_STACK_FRAMES);
	if (ps->nvals != 2 + 4 * n)
		return failf(ps, rec, "Stack has %u values, want %llu", ps->nvals,
			     (unsigned long long)(2 + 4 * n));
	/* Like Go's parsers: id 0 or no frames defines nothing; a later definition wins. */
	if (!ps->vals[0] || !n)
		return 0;
	if (grow_array((void **)&t->rstacks, &t->stacks_cap, t->nstacks + 1, sizeof(*t->rstacks),
		    64) ||
	    grow_array((void **)&t->raw_frames, &t->raw_cap, t->nraw + 4 * n, sizeof(uint64_t), 64))
		return -ENOMEM;
	slot = u64map__put(t->stack_ids, ps->vals[0], &added);
	if (!slot)
		return -ENOMEM;
	*slot = t->nstacks;
	t->rstacks[t->nstacks++] = (struct rstack){ ps->vals[0], n, t->nraw };
	memcpy(t->raw_frames + t->nraw, ps->vals + 2, 4 * n * sizeof(uint64_t));
	t->nraw += 4 * n;
	return 0;
}

static int read_batch(struct parser *ps, const uint8_t *rec, uint8_t b)
{
	uint64_t *slot;
	bool added;

	/* Go 1.23 insists on exactly this header byte. */
	if (b != gt_header_byte(GT_EV_BATCH))
		return failf(ps, rec, "Batch header byte 0x%02x", b);
	if (ps->nvals != 2)
		return failf(ps, rec, "Batch has %u values, want 2", ps->nvals);
	if (ps->vals[0] > INT32_MAX && ps->vals[0] != UINT64_MAX)
		return failf(ps, rec, "Batch P %llu out of range", (unsigned long long)ps->vals[0]);
	if (ps->in_batch) {
		slot = u64map__put(ps->last_g, ps->cur_p, &added);
		if (!slot)
			return -ENOMEM;
		*slot = ps->cur_g;
	}
	ps->in_batch = true;
	ps->cur_p = ps->vals[0];
	slot = u64map__get(ps->last_g, ps->cur_p);
	ps->cur_g = slot ? *slot : 0;
	ps->last_ts = ps->vals[1];
	return 0;
}

static int add_event(struct parser *ps, const uint8_t *rec, uint8_t type)
{
	struct gt_trace *t = ps->t;
	struct gt_event *e;
	uint64_t len;
	int err;

	if (grow_array((void **)&t->events, &t->events_cap, t->nevents + 1, sizeof(*e), 64))
		return -ENOMEM;
	e = &t->events[t->nevents];
	memset(e, 0, sizeof(*e));
	e->off = (uint64_t)(rec - ps->buf);
	e->type = type;
	e->nargs = (uint8_t)(ps->nvals - 1);
	memcpy(e->args, ps->vals + 1, e->nargs * sizeof(uint64_t));
	ps->last_ts += ps->vals[0];
	e->ts = ps->last_ts;
	e->p = (int64_t)ps->cur_p;
	e->g = ps->cur_g;
	switch (gt_specs[type].g) {
	case GT_G_START:
		ps->cur_g = e->args[0];
		e->g = ps->cur_g;
		break;
	case GT_G_STOP:
	case GT_G_END:
		ps->cur_g = 0;
		break;
	case GT_G_SELF:
		e->g = e->args[0];
		break;
	default:
		break;
	}
	switch (type) {
	case GT_EV_GC_START:
	case GT_EV_GC_DONE:
	case GT_EV_GC_STW_START:
	case GT_EV_GC_STW_DONE:
		e->g = 0;
		break;
	case GT_EV_CPU_SAMPLE:
		e->ts = e->args[0];
		e->p = (int64_t)e->args[1];
		e->g = e->args[2];
		break;
	case GT_EV_USER_LOG:
		err = read_val(ps, ps->end, rec, &len);
		if (err)
			return err;
		if (len > GT_MAX_STRING_LEN)
			return failf(ps, rec, "UserLog message of %llu bytes", (unsigned long long)len);
		if (len > (uint64_t)(ps->end - ps->p))
			return failf(ps, rec, "truncated UserLog message");
		e->msg = t->arena + t->arena_len;
		e->msg_len = len;
		memcpy(t->arena + t->arena_len, ps->p, len);
		t->arena_len += len;
		ps->p += len;
		break;
	default:
		break;
	}
	t->nevents++;
	return 0;
}

static int read_record(struct parser *ps)
{
	const uint8_t *rec = ps->p;
	uint8_t b = *ps->p++, type = b & 0x3f;
	const struct gt_spec *s;
	unsigned want;
	int err;

	if (type == GT_EV_NONE || type >= GT_EV_COUNT)
		return failf(ps, rec, "unknown event type %u", type);
	if (type == GT_EV_STRING)
		return read_string(ps, rec);
	s = &gt_specs[type];
	if (type != GT_EV_BATCH && !ps->in_batch)
		return failf(ps, rec, "%s before the first Batch", s->name);
	err = read_values(ps, rec, b);
	if (err)
		return err;
	switch (type) {
	case GT_EV_BATCH:
		return read_batch(ps, rec, b);
	case GT_EV_STACK:
		return read_stack(ps, rec);
	default:
		break;
	}
	want = gt_nvalues(type) + !(s->flags & GT_NO_TS);
	if (ps->nvals != want)
		return failf(ps, rec, "%s has %u values, want %u", s->name, ps->nvals, want);
	switch (type) {
	case GT_EV_FREQUENCY:
		if (!ps->vals[0] || ps->vals[0] > INT64_MAX)
			return failf(ps, rec, "bad Frequency %llu", (unsigned long long)ps->vals[0]);
		ps->t->frequency = ps->vals[0];
		return 0;
	case GT_EV_TIMER_GOROUTINE:
		return 0;
	default:
		return add_event(ps, rec, type);
	}
}

/* Stacks and events get their resolved pointers once every string and stack is known. */
static int resolve(struct gt_trace *t)
{
	size_t nframes = t->nraw / 4, f = 0;

	t->stacks = calloc(t->nstacks ? t->nstacks : 1, sizeof(*t->stacks));
	t->frames = calloc(nframes ? nframes : 1, sizeof(*t->frames));
	if (!t->stacks || !t->frames)
		return -ENOMEM;
	for (size_t i = 0; i < t->nstacks; i++) {
		const struct rstack *r = &t->rstacks[i];

		t->stacks[i] = (struct gt_stack){ r->id, r->n, &t->frames[f] };
		for (size_t j = 0; j < r->n; j++, f++) {
			const uint64_t *v = &t->raw_frames[r->raw + 4 * j];
			const char *fn = gt_trace__string(t, v[1]), *file = gt_trace__string(t, v[2]);

			t->frames[f] = (struct gt_rframe){ v[0], fn ? fn : "", file ? file : "", v[3] };
		}
	}
	for (size_t i = 0; i < t->nevents; i++) {
		struct gt_event *e = &t->events[i];

		if (e->nargs && (gt_specs[e->type].flags & GT_STACK))
			e->stack = gt_trace__stack(t, e->args[e->nargs - 1]);
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct gt_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

int gt_trace__parse(const uint8_t *buf, size_t len, struct gt_trace **out, char *err, size_t errlen)
{
	struct parser ps = { .buf = buf, .p = buf, .end = buf + len, .err = err, .errlen = errlen };
	struct gt_trace *t;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (len < GT_HEADER_LEN || memcmp(buf, GT_HEADER, GT_HEADER_LEN))
		return failf(&ps, buf, "not a Go 1.19 trace (bad header)");
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ps.t = t;
	ps.p += GT_HEADER_LEN;
	t->arena = malloc(len);
	t->strings = u64map__new();
	t->stack_ids = u64map__new();
	ps.last_g = u64map__new();
	ret = -ENOMEM;
	if (!t->arena || !t->strings || !t->stack_ids || !ps.last_g)
		goto fail;
	while (ps.p < ps.end) {
		ret = read_record(&ps);
		if (ret)
			goto fail;
	}
	ret = -EINVAL;
	if (!t->frequency) {
		failf(&ps, ps.end, "no Frequency record");
		goto fail;
	}
	if (!t->nevents) {
		failf(&ps, ps.end, "trace has no events");
		goto fail;
	}
	ret = resolve(t);
	if (ret)
		goto fail;
	qsort(t->events, t->nevents, sizeof(*t->events), by_time);
	u64map__free(ps.last_g);
	*out = t;
	return 0;
fail:
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	u64map__free(ps.last_g);
	gt_trace__free(t);
	return ret;
}

int gt_trace__load(const char *path, struct gt_trace **out, char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (len == cap && grow_array((void **)&buf, &cap, len + 65536, 1, 64)) {
			ret = -ENOMEM;
			goto fail;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	ret = gt_trace__parse(buf, len, out, err, errlen);
	free(buf);
	return ret;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

size_t gt_trace__nevents(const struct gt_trace *t)
{
	return t->nevents;
}

const struct gt_event *gt_trace__events(const struct gt_trace *t)
{
	return t->events;
}

uint64_t gt_trace__frequency(const struct gt_trace *t)
{
	return t->frequency;
}

const char *gt_trace__string(const struct gt_trace *t, uint64_t id)
{
	const uint64_t *off = u64map__get(t->strings, id);

	return off ? t->arena + *off : NULL;
}

const struct gt_stack *gt_trace__stack(const struct gt_trace *t, uint64_t id)
{
	const uint64_t *i = u64map__get(t->stack_ids, id);

	return i && t->stacks ? &t->stacks[*i] : NULL;
}

void gt_trace__free(struct gt_trace *t)
{
	if (!t)
		return;
	free(t->events);
	free(t->arena);
	u64map__free(t->strings);
	u64map__free(t->stack_ids);
	free(t->stacks);
	free(t->rstacks);
	free(t->raw_frames);
	free(t->frames);
	free(t);
}
