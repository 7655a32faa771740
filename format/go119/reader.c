/* reader.c - streaming decoder of go1.19 traces, distrusting every byte.
 *
 * The input is read through a window that always holds the next whole record when there is
 * one: before each record, the window is refilled whenever fewer bytes than the largest
 * possible record remain. So records are decoded in place, the window never grows, and a
 * file is refused at its first bad record, after reading at most one window past it (what
 * `dump` on /dev/zero needs: a bad header is seen in the first 2 MiB).
 *
 * What is refused is what Go 1.19 or 1.23 refuse at the byte level: a wrong header, unknown
 * types, wrong value counts, truncated records, malformed varints, bad string ids and
 * lengths, over-long bodies (1.23), records before the first batch (1.23), a missing or zero
 * frequency and a trace without events; and what breaks their tables and their merge: a
 * string named before its definition (1.23 stops on an undefined one; lxtrace's writer always
 * defines first), a stack named and never defined, stack ids past 32 bits (1.23), times past
 * 2^63 (the parsers' clocks are signed), times spanning more than 2^63 ns at the file's
 * frequency (both parsers turn ticks since the first event into int64 ns, through a float64:
 * past that their times are garbage, and so would ours be) and a P's events going back in time
 * from one of its batches to the next. The goroutine state machine is the tracker's business
 * (format/go119/state.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "format/varint.h"
#include "lib/grow.h"
#include "lib/u64map.h"

#define MAX_VALUES (2 + 4 * GT_MAX_STACK_FRAMES)
/* The largest record: a UserLog, whose length-prefixed part is followed by its message. */
#define MAX_RECORD (1 + 2 * GT_MAX_VARINT_LEN + GT_MAX_LONG_BODY + GT_MAX_STRING_LEN)
/* Each refill reads at least this much, so the window moves rarely. */
#define READ_CHUNK (1u << 20)
/* Stacks named before their definition (Go runtime traces write theirs at the end) that the
 * reader remembers until they are defined: more is refused, so no file makes it hold more. */
#define MAX_FORWARD_STACKS (1u << 20)

/* A stack named before it is defined: where it was first named. */
struct fwd_ref {
	uint64_t id, rec_off, batch_off;
};

struct gt_reader {
	int fd;				/* -1: fed */
	uint8_t *buf;			/* fd mode: the window */
	size_t cap;
	const uint8_t *start;		/* the byte at offset base_off */
	const uint8_t *p, *end;		/* unread input */
	uint64_t base_off;
	bool eof;			/* end is the end of what the input has now */
	bool header_done;
	uint64_t limit;
	struct gt_dict *dict;
	bool own_dict;
	int err;			/* sticky */
	char msg[256];
	uint64_t vals[MAX_VALUES];
	unsigned nvals;
	/* Batch state, as Go's parser keeps it. */
	struct u64map *last_g;	/* P -> G running on it when its batch ended */
	struct u64map *p_time;	/* P -> the time of its latest event, when its batch ended */
	struct u64map *fwd;	/* stack id named but not defined yet -> index in fwd_refs */
	struct fwd_ref *fwd_refs;
	size_t nfwd, fwd_cap;
	bool in_batch;
	uint64_t cur_p, cur_g, last_ts, batch_off;
	uint64_t rec_off;		/* where the record read last (or failing) begins */
	uint64_t frequency, nevents;
	uint64_t min_ts, max_ts;	/* over the events so far, valid once there is one */
};

static uint64_t offset_of(const struct gt_reader *r, const uint8_t *at)
{
	return r->base_off + (uint64_t)(at - r->start);
}

static int vfail(struct gt_reader *r, uint64_t off, const char *fmt, va_list ap)
{
	int n = snprintf(r->msg, sizeof(r->msg), "offset %llu: ", (unsigned long long)off);

	if (n >= 0 && (size_t)n < sizeof(r->msg))
		vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	r->err = -EINVAL;
	return r->err;
}

static int failf(struct gt_reader *r, const uint8_t *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, offset_of(r, at), fmt, ap);
	va_end(ap);
	return r->err;
}

/* A failure found after the record it is about (a stack never defined). */
static int fail_at(struct gt_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, off, fmt, ap);
	va_end(ap);
	return r->err;
}

/* A failure that is not the input's fault. */
static int fail_sys(struct gt_reader *r, const uint8_t *at, int err, const char *what)
{
	failf(r, at, "%s: %s", what, strerror(-err));
	r->err = err;
	return err;
}

/* Reads until the window holds a whole record (or the input ends). */
static int refill(struct gt_reader *r)
{
	size_t keep = (size_t)(r->end - r->p);

	memmove(r->buf, r->p, keep);
	r->base_off += (uint64_t)(r->p - r->start);
	r->start = r->p = r->buf;
	r->end = r->buf + keep;
	while (!r->eof && (size_t)(r->end - r->p) < MAX_RECORD) {
		size_t want = (size_t)(r->buf + r->cap - r->end);
		uint64_t at = r->base_off + (uint64_t)(r->end - r->buf);
		ssize_t n;

		if (r->limit && want > r->limit - at)
			want = (size_t)(r->limit - at);
		if (!want) {
			r->eof = true;
			break;
		}
		n = read(r->fd, (uint8_t *)r->end, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_sys(r, r->end, -errno, "read");
		if (!n)
			r->eof = true;
		r->end += n;
	}
	return 0;
}

struct gt_reader *gt_reader__new(const struct gt_reader_opts *opts)
{
	struct gt_reader *r;

	if (!opts || opts->sz < sizeof(*opts)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = opts->fd;
	r->header_done = opts->headerless;
	r->base_off = opts->offset;
	r->limit = opts->limit;
	r->dict = opts->dict;
	if (!r->dict) {
		r->dict = gt_dict__new(opts->parent, opts->dict_budget);
		r->own_dict = true;
	}
	r->last_g = u64map__new();
	r->p_time = u64map__new();
	r->fwd = u64map__new();
	if (r->fd >= 0) {
		r->cap = MAX_RECORD + READ_CHUNK;
		r->buf = malloc(r->cap);
		r->start = r->p = r->end = r->buf;
	} else {
		r->eof = true;
	}
	if (!r->dict || !r->last_g || !r->p_time || !r->fwd || (r->fd >= 0 && !r->buf)) {
		gt_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void gt_reader__feed(struct gt_reader *r, const void *buf, size_t len)
{
	r->base_off = offset_of(r, r->p);
	r->start = r->p = buf;
	r->end = r->p + len;
	if (r->limit && r->base_off + len > r->limit)
		r->end = r->p + (r->limit > r->base_off ? r->limit - r->base_off : 0);
}

static int read_val(struct gt_reader *r, const uint8_t *end, const uint8_t *rec, uint64_t *v)
{
	size_t n = gt_varint_get(r->p, end, v);

	if (!n)
		return failf(r, rec, r->p >= end ? "truncated record" : "malformed varint");
	r->p += n;
	return 0;
}

static int dict_error(struct gt_reader *r, const uint8_t *rec, int err, const char *what,
		      uint64_t id)
{
	if (err == -EEXIST)
		return failf(r, rec, "%s id %llu redefined", what, (unsigned long long)id);
	if (err == -E2BIG)
		return failf(r, rec, "%s %llu: the file's strings and stacks exceed the reader's "
			     "budget", what, (unsigned long long)id);
	return fail_sys(r, rec, err, what);
}

/* String record: id, len, bytes. */
static int read_string(struct gt_reader *r, const uint8_t *rec)
{
	uint64_t id, len;
	int err;

	err = read_val(r, r->end, rec, &id);
	if (!err)
		err = read_val(r, r->end, rec, &len);
	if (err)
		return err;
	if (!id)
		return failf(r, rec, "string id 0");
	if (!len || len > GT_MAX_STRING_LEN)
		return failf(r, rec, "string %llu has bad length %llu", (unsigned long long)id,
			     (unsigned long long)len);
	if (len > (uint64_t)(r->end - r->p))
		return failf(r, rec, "truncated string %llu", (unsigned long long)id);
	err = gt_dict__add_string(r->dict, id, r->p, (size_t)len);
	if (err)
		return dict_error(r, rec, err, "string", id);
	r->p += len;
	return 0;
}

/* The values of a record whose header byte is b: inline, or length-prefixed. */
static int read_values(struct gt_reader *r, const uint8_t *rec, uint8_t b)
{
	const uint8_t *end = r->end;
	unsigned k = b >> 6;
	uint64_t len;
	int err;

	r->nvals = 0;
	if (k < 3) {
		for (unsigned i = 0; i <= k; i++) {
			err = read_val(r, end, rec, &r->vals[r->nvals++]);
			if (err)
				return err;
		}
		return 0;
	}
	err = read_val(r, end, rec, &len);
	if (err)
		return err;
	if (len > GT_MAX_LONG_BODY)
		return failf(r, rec, "record body of %llu bytes exceeds %d",
			     (unsigned long long)len, GT_MAX_LONG_BODY);
	if (len > (uint64_t)(end - r->p))
		return failf(r, rec, "truncated record");
	end = r->p + len;
	while (r->p < end) {
		if (r->nvals == MAX_VALUES)
			return failf(r, rec, "too many values");
		err = read_val(r, end, rec, &r->vals[r->nvals++]);
		if (err)
			return err;
	}
	return 0;
}

/* A string an event or a frame names must be defined before it (or be 0, the empty one). */
static int check_string(struct gt_reader *r, const uint8_t *rec, const char *who, uint64_t id)
{
	if (!id || gt_dict__string(r->dict, id))
		return 0;
	return failf(r, rec, "%s names string %llu, not defined before it", who,
		     (unsigned long long)id);
}

/* An event names stack id: it must fit 32 bits (Go 1.23 reads it so) and be defined by the
 * end of the trace. */
static int name_stack(struct gt_reader *r, const uint8_t *rec, const char *who, uint64_t id)
{
	uint64_t *slot;
	bool added;

	if (!id || gt_dict__stack(r->dict, id) || u64map__get(r->fwd, id))
		return 0;
	if (id > UINT32_MAX)
		return failf(r, rec, "%s names stack %llu, past 32 bits", who,
			     (unsigned long long)id);
	if (r->nfwd == MAX_FORWARD_STACKS)
		return failf(r, rec, "more than %u stacks named before their definition",
			     MAX_FORWARD_STACKS);
	if (grow_array((void **)&r->fwd_refs, &r->fwd_cap, r->nfwd + 1, sizeof(*r->fwd_refs), 16))
		return fail_sys(r, rec, -ENOMEM, "stack");
	slot = u64map__put(r->fwd, id, &added);
	if (!slot)
		return fail_sys(r, rec, -ENOMEM, "stack");
	*slot = r->nfwd;
	r->fwd_refs[r->nfwd++] = (struct fwd_ref){ id, offset_of(r, rec), r->batch_off };
	return 0;
}

/* Stack id is defined: no longer owed. */
static void stack_defined(struct gt_reader *r, uint64_t id)
{
	uint64_t *slot = u64map__get(r->fwd, id);
	size_t i;

	if (!slot)
		return;
	i = (size_t)*slot;
	u64map__del(r->fwd, id);
	if (i != --r->nfwd) {
		r->fwd_refs[i] = r->fwd_refs[r->nfwd];
		*u64map__get(r->fwd, r->fwd_refs[i].id) = i;
	}
}

static int read_stack(struct gt_reader *r, const uint8_t *rec)
{
	uint64_t n;
	int err;

	if (r->nvals < 2)
		return failf(r, rec, "Stack has %u values, want at least 2", r->nvals);
	n = r->vals[1];
	if (n > GT_MAX_STACK_FRAMES)
		return failf(r, rec, "Stack has %llu frames, limit %d", (unsigned long long)n,
			     GT_MAX_STACK_FRAMES);
	if (r->nvals != 2 + 4 * n)
		return failf(r, rec, "Stack has %u values, want %llu", r->nvals,
			     (unsigned long long)(2 + 4 * n));
	/* Like Go's parsers: id 0 or no frames defines nothing; a later definition wins. */
	if (!r->vals[0] || !n)
		return 0;
	if (r->vals[0] > UINT32_MAX)
		return failf(r, rec, "stack id %llu past 32 bits", (unsigned long long)r->vals[0]);
	for (size_t i = 0; i < n; i++) {
		err = check_string(r, rec, "Stack", r->vals[2 + 4 * i + 1]);
		if (!err)
			err = check_string(r, rec, "Stack", r->vals[2 + 4 * i + 2]);
		if (err)
			return err;
	}
	err = gt_dict__add_stack(r->dict, r->vals[0], r->vals + 2, (size_t)n);
	if (err)
		return dict_error(r, rec, err, "stack", r->vals[0]);
	stack_defined(r, r->vals[0]);
	return 0;
}

static int read_batch(struct gt_reader *r, const uint8_t *rec, uint8_t b)
{
	uint64_t *slot;
	bool added;

	/* Go 1.23 insists on exactly this header byte. */
	if (b != gt_header_byte(GT_EV_BATCH))
		return failf(r, rec, "Batch header byte 0x%02x", b);
	if (r->nvals != 2)
		return failf(r, rec, "Batch has %u values, want 2", r->nvals);
	if (r->vals[0] > INT32_MAX && r->vals[0] != UINT64_MAX)
		return failf(r, rec, "Batch P %llu out of range", (unsigned long long)r->vals[0]);
	if (r->vals[1] > INT64_MAX)
		return failf(r, rec, "Batch time %llu past 2^63", (unsigned long long)r->vals[1]);
	if (r->in_batch) {
		slot = u64map__put(r->last_g, r->cur_p, &added);
		if (!slot)
			return fail_sys(r, rec, -ENOMEM, "batch");
		*slot = r->cur_g;
		slot = u64map__put(r->p_time, r->cur_p, &added);
		if (!slot)
			return fail_sys(r, rec, -ENOMEM, "batch");
		*slot = r->last_ts;
	}
	/* A P's events are its batches in file order: the parsers' merge needs them in time
	 * order (docs/format.md §3). */
	slot = u64map__get(r->p_time, r->vals[0]);
	if (slot && r->vals[1] < *slot)
		return failf(r, rec, "Batch of P %lld starts at %llu, before its previous event at "
			     "%llu", (long long)r->vals[0], (unsigned long long)r->vals[1],
			     (unsigned long long)*slot);
	r->in_batch = true;
	r->cur_p = r->vals[0];
	slot = u64map__get(r->last_g, r->cur_p);
	r->cur_g = slot ? *slot : 0;
	r->last_ts = r->vals[1];
	r->batch_off = offset_of(r, rec);
	return 0;
}

/* The strings and stacks e names, which Go 1.23 looks up. */
static int check_names(struct gt_reader *r, const uint8_t *rec, uint8_t type,
		       const struct gt_event *e)
{
	const struct gt_spec *s = &gt_specs[type];
	int err = 0;

	if (s->str_arg)
		err = check_string(r, rec, s->name, e->args[s->str_arg - 1]);
	if (!err && s->stk_arg)
		err = name_stack(r, rec, s->name, e->args[s->stk_arg - 1]);
	if (!err && e->nargs && (s->flags & GT_STACK))
		err = name_stack(r, rec, s->name, e->args[e->nargs - 1]);
	return err;
}

/* The events so far span no more than 2^63 ns at the frequency, once it is known: what the
 * parsers can tell (docs/format.md §3). */
static int check_span(struct gt_reader *r, const uint8_t *rec)
{
	if (!r->frequency || !r->nevents ||
	    (unsigned __int128)(r->max_ts - r->min_ts) * 1000000000u / r->frequency <= INT64_MAX)
		return 0;
	return failf(r, rec, "times from tick %llu to %llu at %llu ticks per second span more than "
		     "2^63 ns, past what Go's parsers' clocks hold", (unsigned long long)r->min_ts,
		     (unsigned long long)r->max_ts, (unsigned long long)r->frequency);
}

static int make_event(struct gt_reader *r, const uint8_t *rec, uint8_t type, struct gt_event *e)
{
	uint64_t len;
	int err;

	memset(e, 0, sizeof(*e));
	e->off = offset_of(r, rec);
	e->type = type;
	e->nargs = (uint8_t)(r->nvals - 1);
	memcpy(e->args, r->vals + 1, e->nargs * sizeof(uint64_t));
	if (r->vals[0] > INT64_MAX - r->last_ts)
		return failf(r, rec, "%s: time past 2^63", gt_specs[type].name);
	r->last_ts += r->vals[0];
	e->ts = r->last_ts;
	err = check_names(r, rec, type, e);
	if (err)
		return err;
	e->p = (int64_t)r->cur_p;
	e->g = r->cur_g;
	switch (gt_specs[type].g) {
	case GT_G_START:
		r->cur_g = e->args[0];
		e->g = r->cur_g;
		break;
	case GT_G_STOP:
	case GT_G_END:
		r->cur_g = 0;
		break;
	case GT_G_SELF:
		e->g = e->args[0];
		break;
	case GT_G_GC:
		e->g = 0;
		break;
	default:
		break;
	}
	switch (type) {
	case GT_EV_CPU_SAMPLE:
		if (e->args[0] > INT64_MAX)
			return failf(r, rec, "CPUSample time past 2^63");
		e->ts = e->args[0];
		e->p = (int64_t)e->args[1];
		e->g = e->args[2];
		break;
	case GT_EV_USER_LOG:
		err = read_val(r, r->end, rec, &len);
		if (err)
			return err;
		if (len > GT_MAX_STRING_LEN)
			return failf(r, rec, "UserLog message of %llu bytes",
				     (unsigned long long)len);
		if (len > (uint64_t)(r->end - r->p))
			return failf(r, rec, "truncated UserLog message");
		e->msg = (const char *)r->p;
		e->msg_len = (size_t)len;
		r->p += len;
		break;
	default:
		break;
	}
	if (e->nargs && (gt_specs[type].flags & GT_STACK))
		e->stack = gt_dict__stack(r->dict, e->args[e->nargs - 1]);
	if (!r->nevents || e->ts < r->min_ts)
		r->min_ts = e->ts;
	if (!r->nevents || e->ts > r->max_ts)
		r->max_ts = e->ts;
	r->nevents++;
	err = check_span(r, rec);
	return err ? err : 1;
}

/* Decodes one record; 1 when it is an event (in *e), 0 when it is not, or an error. */
static int read_record(struct gt_reader *r, struct gt_event *e)
{
	const uint8_t *rec = r->p;
	uint8_t b = *r->p++, type = b & 0x3f;
	const struct gt_spec *s;
	unsigned want;
	int err;

	r->rec_off = offset_of(r, rec);
	if (type == GT_EV_NONE || type >= GT_EV_COUNT)
		return failf(r, rec, "unknown event type %u", type);
	s = &gt_specs[type];
	/* Go 1.23 skips a String there, and its id names one of its own strings. */
	if (type != GT_EV_BATCH && !r->in_batch)
		return failf(r, rec, "%s before the first Batch", s->name);
	if (type == GT_EV_STRING)
		return read_string(r, rec);
	err = read_values(r, rec, b);
	if (err)
		return err;
	switch (type) {
	case GT_EV_BATCH:
		return read_batch(r, rec, b);
	case GT_EV_STACK:
		return read_stack(r, rec);
	default:
		break;
	}
	want = gt_nvalues(type) + !(s->flags & GT_NO_TS);
	if (r->nvals != want)
		return failf(r, rec, "%s has %u values, want %u", s->name, r->nvals, want);
	switch (type) {
	case GT_EV_FREQUENCY:
		if (!r->vals[0] || r->vals[0] > INT64_MAX)
			return failf(r, rec, "bad Frequency %llu", (unsigned long long)r->vals[0]);
		r->frequency = r->vals[0];
		return check_span(r, rec);
	case GT_EV_TIMER_GOROUTINE:
		return 0;
	default:
		return make_event(r, rec, type, e);
	}
}

int gt_reader__end(struct gt_reader *r)
{
	if (r->err)
		return r->err;
	if (!r->frequency)
		return failf(r, r->p, "no Frequency record");
	if (!r->nevents)
		return failf(r, r->p, "trace has no events");
	if (r->nfwd) {
		const struct fwd_ref *first = &r->fwd_refs[0];

		for (size_t i = 1; i < r->nfwd; i++)
			if (r->fwd_refs[i].rec_off < first->rec_off)
				first = &r->fwd_refs[i];
		/* Where the first of them is named, for lxtrace repair to cut the file there. */
		r->rec_off = first->rec_off;
		r->batch_off = first->batch_off;
		return fail_at(r, first->rec_off, "stack %llu is named here and never defined",
			       (unsigned long long)first->id);
	}
	return 0;
}

int gt_reader__next(struct gt_reader *r, struct gt_event *e)
{
	int ret;

	if (r->err)
		return r->err;
	for (;;) {
		if (!r->eof && (size_t)(r->end - r->p) < MAX_RECORD && refill(r))
			return r->err;
		if (!r->header_done) {
			if ((size_t)(r->end - r->p) < GT_HEADER_LEN ||
			    memcmp(r->p, GT_HEADER, GT_HEADER_LEN))
				return failf(r, r->p, "not a go1.19 trace (bad header)");
			r->p += GT_HEADER_LEN;
			r->header_done = true;
			continue;
		}
		if (r->p == r->end)
			return r->fd >= 0 ? gt_reader__end(r) : 0;
		ret = read_record(r, e);
		if (ret)
			return ret;
	}
}

int gt_reader__set_running(struct gt_reader *r, int64_t p, uint64_t g)
{
	bool added;
	uint64_t *slot = u64map__put(r->last_g, (uint64_t)p, &added);

	if (!slot)
		return -ENOMEM;
	*slot = g;
	if (r->in_batch && r->cur_p == (uint64_t)p)
		r->cur_g = g;
	return 0;
}

const char *gt_reader__error(const struct gt_reader *r)
{
	return r->err ? r->msg : "";
}

uint64_t gt_reader__batch_offset(const struct gt_reader *r)
{
	return r->batch_off;
}

uint64_t gt_reader__record_offset(const struct gt_reader *r)
{
	return r->rec_off;
}

uint64_t gt_reader__frequency(const struct gt_reader *r)
{
	return r->frequency;
}

const struct gt_dict *gt_reader__dict(const struct gt_reader *r)
{
	return r->dict;
}

void gt_reader__free(struct gt_reader *r)
{
	if (!r)
		return;
	if (r->own_dict)
		gt_dict__free(r->dict);
	u64map__free(r->last_g);
	u64map__free(r->p_time);
	u64map__free(r->fwd);
	free(r->fwd_refs);
	free(r->buf);
	free(r);
}
