/* trace.c - a whole trace decoded into memory, sorted by time: what the tests query.
 *
 * Built on the streaming reader: every event is kept, UserLog messages are copied into
 * chunks that never move, and once the input has ended every stack is resolved against the
 * file's final definitions (Go runtime traces define their stacks at the end). Memory grows
 * with the events; lxtrace's own tools stream instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "lib/grow.h"

#define CHUNK_SIZE (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct gt_trace {
	struct gt_event *events;
	size_t nevents, events_cap;
	uint64_t frequency;
	struct gt_dict *dict;
	struct chunk *msgs;
};

/* A copy of a UserLog message that stays where it is. */
static const char *keep_msg(struct gt_trace *t, const char *msg, size_t len)
{
	struct chunk *c = t->msgs;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > CHUNK_SIZE ? len : CHUNK_SIZE;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		*c = (struct chunk){ .next = t->msgs, .cap = cap };
		t->msgs = c;
	}
	memcpy(c->data + c->used, msg, len);
	c->used += len;
	return c->data + c->used - len;
}

static int by_time(const void *a, const void *b)
{
	const struct gt_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Reads r to its end into a new trace. */
static int load(struct gt_reader *r, struct gt_trace *t, bool fed)
{
	struct gt_event e;
	int ret;

	while ((ret = gt_reader__next(r, &e)) == 1) {
		if (grow_array((void **)&t->events, &t->events_cap, t->nevents + 1, sizeof(e), 64))
			return -ENOMEM;
		if (e.msg_len && !(e.msg = keep_msg(t, e.msg, e.msg_len)))
			return -ENOMEM;
		t->events[t->nevents++] = e;
	}
	if (!ret && fed)
		ret = gt_reader__end(r);
	if (ret)
		return ret;
	t->frequency = gt_reader__frequency(r);
	gt_dict__resolve(t->dict);
	for (size_t i = 0; i < t->nevents; i++) {
		struct gt_event *ev = &t->events[i];

		if (ev->nargs && (gt_specs[ev->type].flags & GT_STACK))
			ev->stack = gt_dict__stack(t->dict, ev->args[ev->nargs - 1]);
	}
	qsort(t->events, t->nevents, sizeof(*t->events), by_time);
	return 0;
}

/* Decodes from fd (>= 0) or from buf, into *out. */
static int decode(int fd, const uint8_t *buf, size_t len, struct gt_trace **out, char *err,
		  size_t errlen)
{
	struct gt_trace *t = calloc(1, sizeof(*t));
	struct gt_reader *r = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (t)
		t->dict = gt_dict__new(NULL, 0);
	if (t && t->dict)
		r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts),
							     .fd = fd, .dict = t->dict });
	if (r) {
		if (fd < 0)
			gt_reader__feed(r, buf, len);
		ret = load(r, t, fd < 0);
	}
	if (err && errlen) {
		if (r && *gt_reader__error(r))
			snprintf(err, errlen, "%s", gt_reader__error(r));
		else if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
	}
	gt_reader__free(r);
	if (ret) {
		gt_trace__free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int gt_trace__parse(const uint8_t *buf, size_t len, struct gt_trace **out, char *err, size_t errlen)
{
	return decode(-1, buf, len, out, err, errlen);
}

int gt_trace__read(int fd, struct gt_trace **out, char *err, size_t errlen)
{
	return decode(fd, NULL, 0, out, err, errlen);
}

int gt_trace__load(const char *path, struct gt_trace **out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0) {
		ret = -errno;
		*out = NULL;
		if (err && errlen)
			snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	ret = decode(fd, NULL, 0, out, err, errlen);
	close(fd);
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
	return gt_dict__string(t->dict, id);
}

const struct gt_stack *gt_trace__stack(const struct gt_trace *t, uint64_t id)
{
	return gt_dict__stack(t->dict, id);
}

const struct gt_dict *gt_trace__dict(const struct gt_trace *t)
{
	return t->dict;
}

void gt_trace__free(struct gt_trace *t)
{
	if (!t)
		return;
	while (t->msgs) {
		struct chunk *c = t->msgs;

		t->msgs = c->next;
		free(c);
	}
	free(t->events);
	gt_dict__free(t->dict);
	free(t);
}
