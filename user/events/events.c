/* events.c - a trace file of either format, or the flight recorder's window, as one event
 * stream (events.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/dict.h"
#include "format/go119/order.h"
#include "format/go119/reader.h"
#include "format/go119/state.h"
#include "format/go123/reader.h"
#include "user/events/events.h"
#include "user/events/events_go123.h"

struct events {
	/* One of: a go1.19 file read as it is (r, state), or loaded whole and put in order
	 * (tr, ordered), or a go1.23 file (go123), or a window of batches (r, batch). */
	struct gt_reader *r;
	struct gt_state *state;
	struct gt_trace *tr;
	struct gt_event *ordered;
	size_t nordered, next;
	struct events_go123 *go123;
	events_batch_fn batch;
	void *batch_ctx;
	const struct gt_dict *dict;
	/* A go1.19 file lxtrace wrote: r's dictionary, and the file's definitions read to its
	 * end beforehand, whose refined stacks it takes (gt_dict__refine_from). */
	struct gt_dict *own, *whole;
};

/* A go1.19 file Go's runtime wrote, read whole and put in Go's order: 0, or a negative errno
 * with the message in err. */
static int open_ordered(struct events *s, int fd, char *err, size_t errlen)
{
	int ret;

	if (lseek(fd, 0, SEEK_SET) != 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -errno;
	}
	ret = gt_trace__read(fd, &s->tr, err, errlen);
	if (!ret)
		ret = gt_order__events(gt_trace__events(s->tr), gt_trace__nevents(s->tr),
				       &s->ordered, err, errlen);
	if (!ret)
		ret = gt_state__check(s->ordered, gt_trace__nevents(s->tr), err, errlen);
	if (ret)
		return ret;
	s->nordered = gt_trace__nevents(s->tr);
	s->dict = gt_trace__dict(s->tr);
	return 0;
}

/* The definitions of the go1.19 file open on fd (at its first batch), read to its end, fd put
 * back: the stacks the recorder named at its stop refine those its events were written under
 * (JIT frames a perf map written at exit names), which one pass would show unnamed. NULL when
 * fd cannot be read twice (a pipe: each event keeps its stack as written); a bad file's
 * definitions up to its fault, which the stream itself then meets and says. */
static struct gt_dict *whole_dict(int fd)
{
	struct gt_reader_opts ro = { .sz = sizeof(ro), .fd = fd, .headerless = true,
				     .offset = GT_HEADER_LEN };
	off_t at = lseek(fd, 0, SEEK_CUR);
	struct gt_reader *r;
	struct gt_event e;

	if (at < 0 || !(ro.dict = gt_dict__new(NULL, 0)))
		return NULL;
	r = gt_reader__new(&ro);
	while (r && gt_reader__next(r, &e) == 1)
		;
	gt_reader__free(r);
	if (!r || lseek(fd, at, SEEK_SET) != at) {
		gt_dict__free(ro.dict);
		return NULL;
	}
	return ro.dict;
}

/* The file's header read, the adapter of its format made: 0, or a negative errno with the
 * message in err. */
static int open_source(struct events *s, int fd, char *err, size_t errlen)
{
	struct gt_reader_opts ro = { .sz = sizeof(ro), .fd = fd, .headerless = true,
				     .offset = GT_HEADER_LEN };
	uint8_t hdr[GT_HEADER_LEN];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(hdr) && (n = read(fd, hdr + got, sizeof(hdr) - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s", strerror(errno));
			return -errno;
		}
		got += (size_t)n;
	}
	if (got == sizeof(hdr) && go123_reader__is_header(hdr, got)) {
		s->go123 = events_go123__new(fd);
		s->dict = s->go123 ? events_go123__dict(s->go123) : NULL;
	} else if (got == sizeof(hdr) && !memcmp(hdr, GT_HEADER, GT_HEADER_LEN) &&
		   gt_order__needed(fd)) {
		return open_ordered(s, fd, err, errlen);
	} else if (got == sizeof(hdr) && !memcmp(hdr, GT_HEADER, GT_HEADER_LEN)) {
		s->whole = whole_dict(fd);
		s->own = ro.dict = gt_dict__new(NULL, 0);
		if (s->own && (!s->whole || !gt_dict__refine_from(s->own, s->whole)))
			s->r = gt_reader__new(&ro);
		s->state = gt_state__new();
		s->dict = s->r && s->state ? gt_reader__dict(s->r) : NULL;
	} else {
		snprintf(err, errlen, "offset 0: not a go1.19 or go1.23 trace (bad header)");
		return -EINVAL;
	}
	if (!s->dict) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

int events__open(int fd, struct events **out, char *err, size_t errlen)
{
	struct events *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = open_source(s, fd, err, errlen);
	if (ret) {
		events__free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int events__open_window(const struct gt_state *before, events_batch_fn next, void *ctx,
			struct events **out, char *err, size_t errlen)
{
	const struct gt_pstat *ps = gt_state__procs(before);
	struct events *s = calloc(1, sizeof(*s));
	int ret = s ? 0 : -ENOMEM;

	*out = NULL;
	if (s)
		s->r = gt_reader__new(&(struct gt_reader_opts){
			.sz = sizeof(struct gt_reader_opts), .fd = -1, .headerless = true,
			.parent = gt_state__dict(before) });
	if (s && !s->r)
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < gt_state__nprocs(before); i++)
		ret = gt_reader__set_running(s->r, ps[i].id, ps[i].g);
	if (ret) {
		events__free(s);
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	s->batch = next;
	s->batch_ctx = ctx;
	s->dict = gt_reader__dict(s->r);
	*out = s;
	return 0;
}

/* The window's next event: the reader's, fed a batch at a time. */
static int window_next(struct events *s, struct gt_event *e, char *err, size_t errlen)
{
	const uint8_t *data;
	size_t len;
	int ret;

	while (!(ret = gt_reader__next(s->r, e))) {
		if (!s->batch(s->batch_ctx, &data, &len))
			return 0;
		gt_reader__feed(s->r, data, len);
	}
	if (ret < 0)
		snprintf(err, errlen, "%s", gt_reader__error(s->r));
	return ret;
}

int events__next(struct events *s, struct gt_event *e, char *err, size_t errlen)
{
	int ret;

	if (s->batch)
		return window_next(s, e, err, errlen);
	if (s->tr) {
		if (s->next == s->nordered)
			return 0;
		*e = s->ordered[s->next++];
		return 1;
	}
	if (!s->go123)
		return gt_state__next(s->state, s->r, e, err, errlen);
	ret = events_go123__next(s->go123, e);
	if (ret < 0)
		snprintf(err, errlen, "%s", *events_go123__error(s->go123) ?
			 events_go123__error(s->go123) : strerror(-ret));
	return ret;
}

const struct gt_dict *events__dict(const struct events *s)
{
	return s->dict;
}

uint64_t events__frequency(const struct events *s)
{
	/* go1.23 times are told in ns. */
	if (s->tr)
		return gt_trace__frequency(s->tr);
	return s->go123 ? 1000000000u : gt_reader__frequency(s->r);
}

uint64_t events__last(const struct events *s)
{
	return s->go123 ? events_go123__last_ns(s->go123) : 0;
}

void events__free(struct events *s)
{
	if (!s)
		return;
	gt_reader__free(s->r);
	gt_dict__free(s->own);
	gt_dict__free(s->whole);
	gt_state__free(s->state);
	gt_trace__free(s->tr);
	free(s->ordered);
	events_go123__free(s->go123);
	free(s);
}
