/* flight.c - the flight recorder (flight.h): the window of batches, the state at its start,
 * and each file written from them.
 *
 * A file from memory, after format/go119/cut.h: the tracker of the evicted batches holds the
 * state at its last event. The window is in the writer's output order, not in time order: a P's
 * batch that stayed open long comes after other Ps' batches holding later events, so the window
 * can begin with events older than the tracker's last one. Those are folded into a copy of the
 * state (first pass over the window), and the file begins just after the tracker's last event
 * (second pass, through the cut). Both passes read the window through the event stream
 * (user/events/events.h), each with its own reader, because a dictionary refuses a string
 * defined twice; both resolve ids through the evicted batches' dictionary, under their own.
 *
 * A window of go1.23 generations keeps each as its event count (8 bytes, for the count of
 * what eviction drops) then its bytes; a file is the header then those bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "format/go119/cut.h"
#include "format/go119/dict.h"
#include "format/go119/state.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "user/events/events.h"
#include "user/flight/flight.h"

/* An id the writer forgot, to be forgotten by the tracker once the batches that may name it
 * (the first `seq` pushed) have left the window. */
struct forgot {
	uint64_t seq;
	uint64_t id;
	bool stack;
};

struct flight {
	struct flight_opts opts;
	struct gt_window *window;
	struct gt_state *evicted;	/* fed every batch that left the window */
	uint64_t pushed, nevicted;	/* batches */
	struct forgot *forgot;		/* forgot[forgot_head .. nforgot), oldest first */
	size_t forgot_head, nforgot, forgot_cap;
	uint64_t *ids[2];		/* scratch for gt_state__forget: strings, stacks */
	size_t ids_cap[2];
	struct flight_plan plan;
	struct trigger_fired pending;	/* the trigger of the file the plan has pending */
	struct tally too_soon;
	struct flight_stats st;
	pid_t child;			/* writing a file, or 0 */
	int child_fd, child_pipe;	/* its file; the read end of its error line */
	uint64_t child_start;
};

static int forget_due(struct flight *f);

/* The window's evict callback: the tracker reads the batch before its bytes are reused. A
 * transition the tracker did not allow is applied all the same and counted in its stats (the
 * writer's output never has one); only running out of memory or a malformed batch stops the
 * window. */
static int on_evict(void *ctx, const struct gt_window_batch *b)
{
	struct flight *f = ctx;
	uint64_t events;
	int err;

	if (f->opts.generations) {
		memcpy(&events, b->data, sizeof(events));
		f->st.evicted_events += events;
		f->nevicted++;
		return 0;
	}
	err = gt_state__feed(f->evicted, b->data, b->len);

	if (err && err != -EPROTO)
		return err;
	f->nevicted++;
	return forget_due(f);
}

/* Hands the tracker the ids whose last possible users have all left the window. */
static int forget_due(struct flight *f)
{
	size_t i, n[2] = { 0, 0 };

	for (i = f->forgot_head; i < f->nforgot && f->forgot[i].seq <= f->nevicted; i++) {
		bool k = f->forgot[i].stack;

		if (grow_array((void **)&f->ids[k], &f->ids_cap[k], n[k] + 1, sizeof(*f->ids[k]),
			       1024))
			return -ENOMEM;
		f->ids[k][n[k]++] = f->forgot[i].id;
	}
	if (i == f->forgot_head)
		return 0;
	f->forgot_head = i;
	if (i == f->nforgot)
		f->forgot_head = f->nforgot = 0;
	return gt_state__forget(f->evicted, f->ids[0], n[0], f->ids[1], n[1]);
}

void flight__forgot(void *ctx, bool stack, uint64_t id)
{
	struct flight *f = ctx;

	if (f->forgot_head && f->nforgot == f->forgot_cap) {
		memmove(f->forgot, f->forgot + f->forgot_head,
			(f->nforgot - f->forgot_head) * sizeof(*f->forgot));
		f->nforgot -= f->forgot_head;
		f->forgot_head = 0;
	}
	/* Out of memory the definition is kept: the tracker holds more, never less. */
	if (grow_array((void **)&f->forgot, &f->forgot_cap, f->nforgot + 1, sizeof(*f->forgot),
		       1024))
		return;
	f->forgot[f->nforgot++] = (struct forgot){ .seq = f->pushed, .id = id, .stack = stack };
}

struct flight *flight__new(const struct flight_opts *opts)
{
	struct flight *f;
	int err;

	if (!opts || opts->sz < sizeof(*opts) || !opts->span || !opts->nprocs || !opts->frequency) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->opts = *opts;
	f->child_pipe = -1;
	flight_plan__init(&f->plan, opts->after, opts->gap, opts->max_files);
	f->evicted = opts->generations ? NULL : gt_state__new();
	f->window = gt_window__new(&(struct gt_window_opts){
		.sz = sizeof(struct gt_window_opts), .bytes = opts->bytes, .span = opts->span,
		.evict = on_evict, .ctx = f });
	if ((!opts->generations && !f->evicted) || !f->window) {
		err = errno ? errno : ENOMEM;
		flight__free(f);
		errno = err;
		return NULL;
	}
	return f;
}

int flight__sink(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr, size_t hlen,
		 const uint8_t *body, size_t blen)
{
	struct flight *f = ctx;
	int err = gt_window__push(f->window, b->p, b->first_ts, b->last_ts, hdr, hlen, body, blen);

	if (!err)
		f->pushed++;
	return err;
}

int flight__generation(void *ctx, const struct go123_generation *g)
{
	struct flight *f = ctx;
	int err = gt_window__push(f->window, 0, g->first_ts, g->last_ts,
				  (const uint8_t *)&g->events, sizeof(g->events), g->data, g->len);

	if (!err)
		f->pushed++;
	return err;
}

void flight__trigger(void *ctx, const struct trigger_fired *fired)
{
	struct flight *f = ctx;

	switch (flight_plan__trigger(&f->plan, fired->ts)) {
	case FLIGHT_FILE:
		f->pending = *fired;
		break;
	case FLIGHT_TOO_SOON:
		tally__add(&f->too_soon, fired);
		break;
	default:
		break;
	}
}

bool flight__due(const struct flight *f, uint64_t now)
{
	return flight_plan__due(&f->plan, now);
}

void flight__abandon(struct flight *f)
{
	flight_plan__abandon(&f->plan);
}

bool flight__done(const struct flight *f)
{
	return flight_plan__done(&f->plan);
}

static int failf(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* Where a reading of the window is. */
struct window_pos {
	const struct gt_window *window;
	uint64_t pos;
};

/* The window's batches, oldest first, to the event stream. */
static int window_batch(void *ctx, const uint8_t **data, size_t *len)
{
	struct window_pos *wp = ctx;
	struct gt_window_batch b;

	if (!gt_window__next(wp->window, &wp->pos, &b))
		return 0;
	*data = b.data;
	*len = b.len;
	return 1;
}

/* One pass over the window's events in output order, read through the event stream on top of
 * the evicted batches' state: those before from go to start (the first pass), the others to
 * the cut c (the second). *last gets the latest time seen. */
static int pass(struct flight *f, uint64_t from, struct gt_state *start, struct gt_cut *c,
		uint64_t *last, char *err, size_t errlen)
{
	struct window_pos wp = { f->window, 0 };
	struct events *s;
	struct gt_event e;
	char why[256];
	int ret = events__open_window(f->evicted, window_batch, &wp, &s, why, sizeof(why));

	if (ret)
		return failf(err, errlen, ret, "reading the window: %s", why);
	while ((ret = events__next(s, &e, why, sizeof(why))) == 1) {
		if (e.ts > *last)
			*last = e.ts;
		/* A transition the copy does not allow is applied all the same. */
		if (start && e.ts < from && gt_state__event(start, &e) == -ENOMEM) {
			ret = failf(err, errlen, -ENOMEM, "the state at the window's start: "
				    "out of memory");
			break;
		}
		if (c && e.ts >= from && (ret = gt_cut__event(c, &e, events__dict(s)))) {
			failf(err, errlen, ret, "%s", gt_cut__error(c));
			break;
		}
	}
	if (ret < 0 && !err[0])
		failf(err, errlen, ret, "reading the window: %s", why);
	events__free(s);
	return ret;
}

/* The file from the window and the state at its start, written to fd: in the child. */
static int write_window(struct flight *f, int fd, uint64_t from, char *err, size_t errlen)
{
	struct gt_state *start;
	struct gt_cut *c = NULL;
	uint64_t last = 0;
	int ret;

	err[0] = '\0';
	start = gt_state__clone(f->evicted);
	if (!start)
		return failf(err, errlen, -ENOMEM, "copying the state at the window's start: %s",
			     strerror(errno));
	ret = pass(f, from, start, NULL, &last, err, errlen);
	if (!ret) {
		c = gt_cut__new(&(struct gt_cut_opts){
			.sz = sizeof(struct gt_cut_opts), .fd = fd, .nprocs = f->opts.nprocs,
			.frequency = f->opts.frequency, .from = from, .start = start,
			.dict = gt_state__dict(f->evicted) }, err, errlen);
		ret = c ? 0 : -errno;
	}
	if (!ret)
		ret = pass(f, from, NULL, c, &last, err, errlen);
	if (!ret && gt_cut__finish(c, last + 1))
		ret = failf(err, errlen, -EIO, "%s", gt_cut__error(c));
	gt_cut__free(c);
	gt_state__free(start);
	return ret;
}

static int write_all(int fd, const uint8_t *p, size_t len, char *err, size_t errlen)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return failf(err, errlen, n ? -errno : -EIO, "writing: %s",
				     n ? strerror(errno) : "nothing written");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The file from a window of generations: the header, then each one's bytes; in the child. */
static int write_generations(struct flight *f, int fd, char *err, size_t errlen)
{
	struct gt_window_batch b;
	uint64_t pos = 0;
	int ret = write_all(fd, (const uint8_t *)GO123_HEADER, GO123_HEADER_LEN, err, errlen);

	while (!ret && gt_window__next(f->window, &pos, &b))
		ret = write_all(fd, b.data + sizeof(uint64_t), b.len - sizeof(uint64_t), err,
				errlen);
	return ret;
}

/* Closes every fd from 3 up but keep (the file) and pipe. */
static void close_others(int keep, int pipe)
{
	int lo = keep < pipe ? keep : pipe, hi = keep < pipe ? pipe : keep;

	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0u, 0);
}

int flight__write_start(struct flight *f, int fd)
{
	struct gt_window_batch b;
	struct gt_state_stats ss;
	uint64_t pos = 0, first = UINT64_MAX, last = 0, from;
	int pipefd[2];
	pid_t pid;

	if (f->child)
		return -EBUSY;
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	/* The file's window, known here already: the cut begins after the state's last event. */
	memset(&ss, 0, sizeof(ss));
	if (f->evicted)
		gt_state__stats(f->evicted, &ss);
	while (gt_window__next(f->window, &pos, &b)) {
		first = b.first_ts < first ? b.first_ts : first;
		last = b.last_ts > last ? b.last_ts : last;
	}
	flight_plan__written(&f->plan);
	f->st.last_trigger = f->pending;
	from = ss.last_ts + 1;
	f->st.last_to = (last > ss.last_ts ? last : ss.last_ts) + 1;
	/* Before any batch has left the window the file is the trace from its own start: its
	 * span begins at the window's first event, not at the cut's tick 1. Generations are
	 * whole: the file begins at its first one's. */
	f->st.last_from = !f->evicted || (!ss.events && first < f->st.last_to) ? first : from;
	f->child_start = now_ns();
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (!pid) {
		char err[512];
		int ret;

		/* The recorder reads the rings at a raised priority; this is no reader. Nothing
		 * of the recording is ours to keep alive: programs, rings, targets. */
		setpriority(PRIO_PROCESS, 0, 0);
		close_others(fd, pipefd[1]);
		ret = f->evicted ? write_window(f, fd, from, err, sizeof(err)) :
				   write_generations(f, fd, err, sizeof(err));
		if (ret && write(pipefd[1], err, strlen(err)) < 0)
			ret = -EIO;
		_exit(ret ? (-ret & 0xff ? -ret & 0xff : EIO) : 0);
	}
	close(pipefd[1]);
	f->child = pid;
	f->child_fd = fd;
	f->child_pipe = pipefd[0];
	return 0;
}

bool flight__writing(const struct flight *f)
{
	return f->child != 0;
}

int flight__reap(struct flight *f, bool wait, int *result, char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;
	int status;
	pid_t r;

	err[0] = '\0';
	if (!f->child)
		return -ECHILD;
	do
		r = waitpid(f->child, &status, wait ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	if (r < 0)
		*result = -errno;
	else if (WIFEXITED(status))
		*result = -WEXITSTATUS(status);
	else
		*result = -EINTR;	/* killed */
	if (*result) {
		n = read(f->child_pipe, err, errlen - 1);
		err[n > 0 ? n : 0] = '\0';
		if (!err[0])
			snprintf(err, errlen, "%s",
				 r < 0 || WIFEXITED(status) ? strerror(-*result) :
				 "the process writing it was killed");
	}
	close(f->child_pipe);
	f->child_pipe = -1;
	f->child = 0;
	f->st.last_write_ns = now_ns() - f->child_start;
	if (f->st.last_write_ns > f->st.max_write_ns)
		f->st.max_write_ns = f->st.last_write_ns;
	f->st.last_file_bytes = !fstat(f->child_fd, &st) ? (uint64_t)st.st_size : 0;
	return 1;
}

void flight__note_memory(struct flight *f)
{
	struct gt_window_stats ws;

	gt_window__stats(f->window, &ws);
	if (ws.resident > f->st.peak_resident)
		f->st.peak_resident = ws.resident;
}

void flight__stats(const struct flight *f, struct flight_stats *out)
{
	struct gt_state_stats ss;

	*out = f->st;
	out->plan = f->plan.st;
	gt_window__stats(f->window, &out->window);
	if (!f->evicted)
		return;
	gt_state__stats(f->evicted, &ss);
	out->evicted_events = ss.events;
	out->dict_bytes =
		gt_state__dict(f->evicted) ? gt_dict__bytes(gt_state__dict(f->evicted)) : 0;
}

const struct tally *flight__too_soon(const struct flight *f)
{
	return &f->too_soon;
}

void flight__free(struct flight *f)
{
	int result;
	char err[8];

	if (!f)
		return;
	/* A file being written is finished: the child holds its own copy of everything. */
	if (f->child)
		flight__reap(f, true, &result, err, sizeof(err));
	gt_window__free(f->window);
	gt_state__free(f->evicted);
	free(f->forgot);
	free(f->ids[0]);
	free(f->ids[1]);
	free(f);
}

int flight__file_name(const char *base, unsigned n, char *buf, size_t len)
{
	const char *name = strrchr(base, '/'), *dot;

	name = name ? name + 1 : base;
	dot = strrchr(name, '.');
	/* A leading dot is a hidden file's name, not an extension. */
	if (!dot || dot == name)
		return snprintf(buf, len, "%s-%03u", base, n);
	return snprintf(buf, len, "%.*s-%03u%s", (int)(dot - base), base, n, dot);
}
