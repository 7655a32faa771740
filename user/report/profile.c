/* profile.c - a trace's profiles by call stack, read in one pass (profile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/events/ident.h"
#include "user/report/intern.h"
#include "user/report/offcpu.h"
#include "user/report/profile.h"
#include "user/report/stacktab.h"

struct profile {
	enum profile_kind kind;
	bool oom;
	uint64_t span_ns;
	struct stacktab *stacks;	/* label: an index in labels */
	/* PROFILE_SYSCALL: stacks holds the calls (count, whole length), blocks the times they
	 * blocked (count, time off the CPU), by the same stacks and labels (interned in
	 * stacks). */
	struct stacktab *blocks;
	bool calls;			/* a call was told: the file has entries */
	bool lengths;			/* one of them with its length: the file has returns */
	bool merge_pids;		/* PROFILE_MERGE_PIDS */
	struct gt_rframe *merged;	/* a stack without its process frame, for merge_pids */
	size_t merged_cap;
	struct intern *labels;		/* a label's index: its handle */
};

/* The index of a label's value, added when new. */
static uint32_t label_of(struct profile *p, const char *s)
{
	long h = intern__put(p->labels, s, strlen(s), &(bool){ 0 });

	if (h < 0)
		p->oom = true;
	return h < 0 ? 0 : (uint32_t)h;
}

/* stk without its process frame (the one before the program frame) into *out, a stack of
 * id 0, so the table reads its frames rather than its id. false when out of memory. */
static bool without_pid(struct profile *p, const struct gt_stack *stk, struct gt_stack *out)
{
	struct ident id;

	*out = *stk;
	if (!ident__of_stack(stk, &id))
		return true;
	if (grow_array((void **)&p->merged, &p->merged_cap, stk->n, sizeof(*p->merged), 64))
		return false;
	memcpy(p->merged, stk->frames, (stk->n - 2) * sizeof(*p->merged));
	p->merged[stk->n - 2] = stk->frames[stk->n - 1];
	*out = (struct gt_stack){ .n = stk->n - 1, .frames = p->merged };
	return true;
}

/* The thread's stack, or for none (a new thread's first wait) its process and program
 * frames alone, so every sample has its process; with merge_pids, its program's. */
static void add(struct profile *p, struct stacktab *tab, const struct walk_thread *t,
		const struct gt_stack *stk, const char *label, uint64_t count, uint64_t value)
{
	struct gt_rframe frames[2];
	struct gt_stack own = { .n = 2, .frames = frames }, merged;
	char name[96], file[24];
	uint32_t l = label ? label_of(p, label) : 0;

	if (!stk && t) {
		snprintf(name, sizeof(name), "%s (pid %u)", t->id.comm, t->id.pid);
		snprintf(file, sizeof(file), "pid %u", t->id.pid);
		frames[0] = (struct gt_rframe){ .func = name, .file = file };
		frames[1] = (struct gt_rframe){ .func = t->id.prog, .file = "program" };
		stk = &own;
	}
	if (stk && p->merge_pids) {
		if (!without_pid(p, stk, &merged)) {
			p->oom = true;
			return;
		}
		stk = &merged;
	}
	if (stacktab__add(tab, l, stk, SIZE_MAX, count, value))
		p->oom = true;
}

static void on_wait(void *ctx, const struct walk *w, const struct walk_thread *t,
		    enum walk_wait kind, const struct gt_stack *stk, uint64_t ns, uint64_t at,
		    int64_t cpu)
{
	struct profile *p = ctx;

	add(p, p->stacks, t, stk, kind == WALK_WAKEUP ? "wakeup" : "preemption", 1, ns);
}

static void on_offcpu(void *ctx, const struct walk_thread *t, enum walk_off why,
		      const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at)
{
	struct profile *p = ctx;

	if (p->kind == PROFILE_OFFCPU)
		add(p, p->stacks, t, stk, offcpu__reason(why), 1, ns);
	else if (sys && why != WALK_OFF_RUNQ)
		add(p, p->blocks, t, stk, sys, 1, ns);
}

/* A call whose return the file lacks counts with no time: its length is not known. */
static void on_syscall(void *ctx, const struct walk_thread *t, const struct gt_stack *stk,
		       const char *sys, uint64_t ns, uint64_t at)
{
	struct profile *p = ctx;

	if (!sys)
		return;
	p->calls = true;
	p->lengths |= ns != WALK_NO_LENGTH;
	add(p, p->stacks, t, stk, sys, 1, ns == WALK_NO_LENGTH ? 0 : ns);
}

static void on_sample(void *ctx, const struct walk_thread *t, const struct gt_stack *stk,
		      int64_t cpu, uint64_t at)
{
	struct profile *p = ctx;

	add(p, p->stacks, t, stk, NULL, 1, 1);
}

int profile__read(int fd, enum profile_kind kind, const struct walk_filter *f, unsigned flags,
		  struct profile **out, char *err, size_t errlen)
{
	struct profile *p = calloc(1, sizeof(*p));
	struct walk_sink sink = { .ctx = p };
	struct walk_stats st;
	int ret;

	*out = NULL;
	if (!p || !(p->stacks = stacktab__new(true)) || !(p->labels = intern__new()) ||
	    (kind == PROFILE_SYSCALL && !(p->blocks = stacktab__new(true)))) {
		profile__free(p);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	p->kind = kind;
	p->merge_pids = flags & PROFILE_MERGE_PIDS;
	if (kind == PROFILE_CPU)
		sink.sample = on_sample;
	else if (kind == PROFILE_SCHED)
		sink.wait = on_wait;
	else
		sink.offcpu = on_offcpu;
	if (kind == PROFILE_SYSCALL)
		sink.syscall = on_syscall;
	/* A wait the recording cut is time off the CPU, not a syscall's latency. */
	if (kind == PROFILE_OFFCPU)
		sink.offcpu_cut = on_offcpu;
	ret = walk__file(fd, f, &sink, &st, err, errlen);
	if (!ret && p->oom) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	}
	/* An empty profile would say the threads asked for never waited. */
	if (!ret && walk__none_kept(f, &st, err, errlen))
		ret = -ENOENT;
	if (ret) {
		profile__free(p);
		return ret;
	}
	p->span_ns = st.span_ns;
	*out = p;
	return 0;
}

enum profile_kind profile__kind(const struct profile *p)
{
	return p->kind;
}

uint64_t profile__span_ns(const struct profile *p)
{
	return p->span_ns;
}

const struct stacktab *profile__samples(const struct profile *p, const struct stacktab **blocks)
{
	*blocks = p->blocks && p->calls ? p->blocks : NULL;
	/* A file with no entries (recorded without --syscalls=all) has the blocks alone. */
	return p->blocks && !p->calls ? p->blocks : p->stacks;
}

const struct stacktab *profile__folded(const struct profile *p)
{
	return p->blocks && !p->lengths ? p->blocks : p->stacks;
}

const char *profile__label(const struct profile *p, uint32_t label)
{
	return intern__key(p->labels, label);
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	stacktab__free(p->stacks);
	stacktab__free(p->blocks);
	free(p->merged);
	intern__free(p->labels);
	free(p);
}
