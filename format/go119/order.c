/* order.c - a go1.19 trace Go's runtime wrote, ordered as Go 1.19's parser orders it
 * (order.h). Memory: a queue index per event and a state per goroutine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/order.h"
#include "lib/u64map.h"

/* A goroutine's state as the ordering follows it, kept in a u64map value: seq << 2 | status. */
enum { G_DEAD, G_RUNNABLE, G_RUNNING, G_WAITING };
#define NOSEQ UINT64_MAX		/* any seq (from), the same seq (to) */
#define SEQINC (UINT64_MAX - 1)		/* the next seq (to) */
#define UNORDERED UINT64_MAX		/* an event no goroutine's state orders */
#define GARBAGE (UINT64_MAX - 1)	/* the GC's sequence, as a goroutine of its own */

struct gstate {
	uint64_t seq;
	unsigned status;
};

struct step {
	uint64_t g;
	struct gstate from, to;
};

bool gt_order__needed(int fd)
{
	struct gt_reader_opts ro = { .sz = sizeof(ro), .fd = fd, .headerless = true,
				     .offset = GT_HEADER_LEN };
	off_t at = lseek(fd, 0, SEEK_CUR);
	struct gt_reader *r;
	struct gt_event e;
	bool late;

	if (at < 0 || !(r = gt_reader__new(&ro)))
		return false;
	late = gt_reader__next(r, &e) == 1 && !gt_reader__frequency(r);
	gt_reader__free(r);
	return lseek(fd, at, SEEK_SET) == at && late;
}

/* What the event does to which goroutine (Go 1.19's stateTransition). */
static struct step step_of(const struct gt_event *e)
{
	if (gt_blocks(e->type) || e->type == GT_EV_GO_SYSBLOCK)
		return (struct step){ e->g, { NOSEQ, G_RUNNING }, { NOSEQ, G_WAITING } };
	switch (e->type) {
	case GT_EV_GO_CREATE:
		return (struct step){ e->args[0], { 0, G_DEAD }, { 1, G_RUNNABLE } };
	case GT_EV_GO_WAITING:
	case GT_EV_GO_IN_SYSCALL:
		return (struct step){ e->g, { 1, G_RUNNABLE }, { 2, G_WAITING } };
	case GT_EV_GO_START:
	case GT_EV_GO_START_LABEL:
		return (struct step){ e->args[0], { e->args[1], G_RUNNABLE },
				      { e->args[1] + 1, G_RUNNING } };
	case GT_EV_GO_START_LOCAL:
		return (struct step){ e->args[0], { NOSEQ, G_RUNNABLE }, { SEQINC, G_RUNNING } };
	case GT_EV_GO_SCHED:
	case GT_EV_GO_PREEMPT:
		return (struct step){ e->g, { NOSEQ, G_RUNNING }, { NOSEQ, G_RUNNABLE } };
	case GT_EV_GO_UNBLOCK:
	case GT_EV_GO_SYSEXIT:
		return (struct step){ e->args[0], { e->args[1], G_WAITING },
				      { e->args[1] + 1, G_RUNNABLE } };
	case GT_EV_GO_UNBLOCK_LOCAL:
	case GT_EV_GO_SYSEXIT_LOCAL:
		return (struct step){ e->args[0], { NOSEQ, G_WAITING }, { SEQINC, G_RUNNABLE } };
	case GT_EV_GC_START:
		return (struct step){ GARBAGE, { e->args[0], G_DEAD }, { e->args[0] + 1, G_DEAD } };
	default:
		return (struct step){ UNORDERED, { 0, 0 }, { 0, 0 } };
	}
}

static struct gstate state_of(const struct u64map *gs, uint64_t g)
{
	const uint64_t *v = u64map__get(gs, g);

	return v ? (struct gstate){ *v >> 2, (unsigned)(*v & 3) } : (struct gstate){ 0, G_DEAD };
}

static bool ready(const struct step *s, struct gstate cur)
{
	return s->g == UNORDERED ||
	       ((s->from.seq == NOSEQ || s->from.seq == cur.seq) && s->from.status == cur.status);
}

/* A ...Local event as its plain kind, with the seq it took (cur's): its values after the g
 * move one on. */
static void unlocal(struct gt_event *e, uint64_t seq)
{
	static const uint8_t plain[GT_EV_COUNT] = {
		[GT_EV_GO_START_LOCAL] = GT_EV_GO_START,
		[GT_EV_GO_UNBLOCK_LOCAL] = GT_EV_GO_UNBLOCK,
		[GT_EV_GO_SYSEXIT_LOCAL] = GT_EV_GO_SYSEXIT,
	};

	if (!plain[e->type] || e->nargs + 1 > GT_MAX_ARGS)
		return;
	memmove(&e->args[2], &e->args[1], (size_t)(e->nargs - 1) * sizeof(e->args[0]));
	e->args[1] = seq;
	e->nargs++;
	e->type = plain[e->type];
}

static int by_time(const void *a, const void *b)
{
	const struct gt_event *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Each step looks at every P's next event: a file of more Ps than a machine has CPUs is
 * refused rather than merged in time that grows with events times Ps. */
#define MAX_QUEUES 1024

/* Each P's queue: the indexes of its events in ev, in order; the Ps in first-seen order. */
struct queues {
	size_t *idx;		/* n indexes, P after P */
	size_t *start, *len, *head;	/* per queue */
	int64_t *p;
	size_t nq;
};

/* 0, -E2BIG past MAX_QUEUES Ps, -ENOMEM. */
static int make_queues(const struct gt_event *ev, size_t n, struct queues *q)
{
	struct u64map *of = u64map__new();	/* P -> its queue */
	size_t fill[MAX_QUEUES] = { 0 };
	int ret = 0;

	memset(q, 0, sizeof(*q));
	q->idx = malloc((n ? n : 1) * sizeof(*q->idx));
	q->p = malloc(MAX_QUEUES * sizeof(*q->p));
	q->start = calloc(MAX_QUEUES, sizeof(*q->start));
	q->len = calloc(MAX_QUEUES, sizeof(*q->len));
	q->head = calloc(MAX_QUEUES, sizeof(*q->head));
	if (!of || !q->idx || !q->p || !q->start || !q->len || !q->head)
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < n; i++) {
		bool added;
		uint64_t *k = u64map__put(of, (uint64_t)ev[i].p, &added);

		if (!k)
			ret = -ENOMEM;
		else if (added && q->nq == MAX_QUEUES)
			ret = -E2BIG;
		else if (added)
			q->p[*k = q->nq++] = ev[i].p;
		if (!ret)
			q->len[*k]++;
	}
	for (size_t k = 1; !ret && k < q->nq; k++)
		q->start[k] = q->start[k - 1] + q->len[k - 1];
	for (size_t i = 0; !ret && i < n; i++) {
		size_t k = (size_t)*u64map__get(of, (uint64_t)ev[i].p);

		q->idx[q->start[k] + fill[k]++] = i;
	}
	u64map__free(of);
	return ret;
}

static void free_queues(struct queues *q)
{
	free(q->idx);
	free(q->p);
	free(q->start);
	free(q->len);
	free(q->head);
}

int gt_order__events(const struct gt_event *ev, size_t n, struct gt_event **ordered, char *err,
		     size_t errlen)
{
	struct gt_event *out = malloc((n ? n : 1) * sizeof(*out));
	struct u64map *gs = u64map__new();
	struct queues q;
	int ret = make_queues(ev, n, &q);

	if (ret == -E2BIG) {
		snprintf(err, errlen, "more than %d Ps: lxtrace does not order it", MAX_QUEUES);
		ret = -EINVAL;
		goto done;
	}
	if (!out || !gs || ret) {
		ret = -ENOMEM;
		goto done;
	}
	for (size_t done = 0; done < n; done++) {
		size_t best = SIZE_MAX;
		struct step s, bs = { 0 };
		struct gstate cur;
		uint64_t *slot;
		bool added;

		for (size_t k = 0; k < q.nq; k++) {
			const struct gt_event *e;

			if (q.head[k] == q.len[k])
				continue;
			e = &ev[q.idx[q.start[k] + q.head[k]]];
			s = step_of(e);
			if (ready(&s, state_of(gs, s.g)) &&
			    (best == SIZE_MAX ||
			     e->ts < ev[q.idx[q.start[best] + q.head[best]]].ts)) {
				best = k;
				bs = s;
			}
		}
		if (best == SIZE_MAX) {
			snprintf(err, errlen, "no consistent ordering of events possible (as Go "
				 "1.19 refuses it), %zu events in", done);
			ret = -EINVAL;
			goto done;
		}
		out[done] = ev[q.idx[q.start[best] + q.head[best]++]];
		if (bs.g == UNORDERED)
			continue;
		cur = state_of(gs, bs.g);
		unlocal(&out[done], cur.seq);
		bs.to.seq = bs.to.seq == NOSEQ ? cur.seq :
			    bs.to.seq == SEQINC ? cur.seq + 1 : bs.to.seq;
		if (!(slot = u64map__put(gs, bs.g, &added))) {
			ret = -ENOMEM;
			goto done;
		}
		*slot = bs.to.seq << 2 | bs.to.status;
	}
	/* A syscall's exit took its time from its real return (Go 1.19, order1007). */
	for (size_t i = 0; i < n; i++)
		if (out[i].type == GT_EV_GO_SYSEXIT && out[i].nargs >= 3 && out[i].args[2])
			out[i].ts = out[i].args[2];
	/* Stable, as Go's sort is and qsort is not: ties keep the order found. The exits moved
	 * are few, and go back a short way. */
	for (size_t i = 1; i < n; i++) {
		struct gt_event x = out[i];
		size_t j = i;

		while (j > 0 && by_time(&out[j - 1], &x) > 0) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	*ordered = out;
	out = NULL;
	ret = 0;
done:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	free_queues(&q);
	u64map__free(gs);
	free(out);
	return ret;
}
