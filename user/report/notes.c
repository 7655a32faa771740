/* notes.c - loss, repairs and triggers, with when and why (notes.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/grow.h"
#include "user/report/json.h"
#include "user/report/notes.h"

/* A listed message is cut here: the report stays a few lines a note. */
#define NOTE_MSG_MAX 160

struct note {
	uint64_t at;
	struct walk_thread who;
	char msg[NOTE_MSG_MAX + 1];
	size_t len;
};

struct list {
	uint64_t count;
	struct note *v;		/* the first `top` */
	size_t n;
};

/* Repairs by event name: a handful of kinds. */
struct repair {
	const char *event;	/* static: the wire table's name */
	uint64_t count, first, last;
};

struct notes {
	size_t top;
	bool oom;
	uint64_t lost;		/* records, summed from the messages */
	struct list losses, triggers;
	struct repair *repairs;
	size_t nrepairs, cap;
};

struct notes *notes__new(size_t top)
{
	struct notes *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->top = top;
	n->losses.v = calloc(top ? top : 1, sizeof(struct note));
	n->triggers.v = calloc(top ? top : 1, sizeof(struct note));
	if (!n->losses.v || !n->triggers.v) {
		notes__free(n);
		errno = ENOMEM;
		return NULL;
	}
	return n;
}

static void keep(struct notes *n, struct list *l, const struct walk_thread *t, const char *msg,
		 size_t len, uint64_t at)
{
	struct note *x;

	l->count++;
	if (l->n >= n->top)
		return;
	x = &l->v[l->n++];
	x->at = at;
	x->who = *t;
	x->len = len < NOTE_MSG_MAX ? len : NOTE_MSG_MAX;
	memcpy(x->msg, msg, x->len);
}

void notes__log(struct notes *n, const struct walk_thread *t, const char *key, const char *msg,
		size_t len, uint64_t at)
{
	if (!strcmp(key, "lxtrace.lost")) {
		char num[24];
		size_t k = 0;

		/* "N records lost on CPU c" */
		while (k < len && k < sizeof(num) - 1 && msg[k] >= '0' && msg[k] <= '9') {
			num[k] = msg[k];
			k++;
		}
		num[k] = '\0';
		n->lost += strtoull(num, NULL, 10);
		keep(n, &n->losses, t, msg, len, at);
	} else if (!strcmp(key, "lxtrace.trigger")) {
		keep(n, &n->triggers, t, msg, len, at);
	}
}

void notes__repair(struct notes *n, const struct walk_thread *t, const char *event, uint64_t at)
{
	struct repair *r = NULL;

	for (size_t i = 0; i < n->nrepairs && !r; i++)
		if (!strcmp(n->repairs[i].event, event))
			r = &n->repairs[i];
	if (!r) {
		if (grow_array((void **)&n->repairs, &n->cap, n->nrepairs + 1, sizeof(*n->repairs),
			       8)) {
			n->oom = true;
			return;
		}
		r = &n->repairs[n->nrepairs++];
		*r = (struct repair){ .event = event, .first = at };
	}
	r->count++;
	r->last = at;
}

bool notes__ok(const struct notes *n)
{
	return !n->oom;
}

void notes__counts(const struct notes *n, uint64_t *lost, uint64_t *triggers, uint64_t *repairs)
{
	*lost = n->lost;
	*triggers = n->triggers.count;
	*repairs = 0;
	for (size_t i = 0; i < n->nrepairs; i++)
		*repairs += n->repairs[i].count;
}

static void print_list(const struct notes *n, const struct list *l, FILE *out)
{
	for (size_t i = 0; i < l->n; i++) {
		fprintf(out, "  at %.6f s: ", l->v[i].at / 1e9);
		escape__print(out, l->v[i].msg, l->v[i].len);
		fprintf(out, "\n");
	}
	if (l->count > l->n)
		fprintf(out, "  (%llu more: --top N)\n", (unsigned long long)(l->count - l->n));
}

void notes__print(const struct notes *n, FILE *out)
{
	uint64_t repairs = 0;

	for (size_t i = 0; i < n->nrepairs; i++)
		repairs += n->repairs[i].count;
	fprintf(out, "\n== The recording: loss, repairs, triggers ==\n\n");
	fprintf(out, "records lost: %llu, in %llu reports\n", (unsigned long long)n->lost,
		(unsigned long long)n->losses.count);
	print_list(n, &n->losses, out);
	fprintf(out, "events lxtrace invented to keep the trace valid: %llu\n",
		(unsigned long long)repairs);
	for (size_t i = 0; i < n->nrepairs; i++)
		fprintf(out, "  %-12s %8llu, from %.6f s to %.6f s\n", n->repairs[i].event,
			(unsigned long long)n->repairs[i].count, n->repairs[i].first / 1e9,
			n->repairs[i].last / 1e9);
	fprintf(out, "triggers fired: %llu\n", (unsigned long long)n->triggers.count);
	print_list(n, &n->triggers, out);
}

static void json_list(struct json *j, const char *key, const struct list *l)
{
	json__array(j, key);
	for (size_t i = 0; i < l->n; i++) {
		json__object(j, NULL);
		json__uint(j, "at_ns", l->v[i].at);
		json__strn(j, "message", l->v[i].msg, l->v[i].len);
		json__end(j);
	}
	json__end(j);
}

void notes__json(const struct notes *n, struct json *j)
{
	json__object(j, "recording");
	json__uint(j, "records_lost", n->lost);
	json__uint(j, "loss_reports", n->losses.count);
	json_list(j, "losses", &n->losses);
	json__array(j, "repairs");
	for (size_t i = 0; i < n->nrepairs; i++) {
		json__object(j, NULL);
		json__str(j, "event", n->repairs[i].event);
		json__uint(j, "count", n->repairs[i].count);
		json__uint(j, "first_ns", n->repairs[i].first);
		json__uint(j, "last_ns", n->repairs[i].last);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "triggers_fired", n->triggers.count);
	json_list(j, "triggers", &n->triggers);
	json__end(j);
}

void notes__free(struct notes *n)
{
	if (!n)
		return;
	free(n->losses.v);
	free(n->triggers.v);
	free(n->repairs);
	free(n);
}
