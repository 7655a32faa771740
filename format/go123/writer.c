/* writer.c - the go1.23 trace encoder's calls (writer.h): each a transition of the scheduler
 * state - threads as Ms and goroutines, CPUs as Ps, their sequence numbers - checked against
 * what the encoder knows of the thread and its CPU, then written as events; and the writer's
 * life. Batches, tables, times and generations are its other files' (writer_core.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/go123/writer_core.h"
#include "lib/grow.h"
#include "lib/u64map.h"

static struct thr *find(struct go123_writer *w, uint64_t tid)
{
	uint64_t *i = u64map__get(w->by_tid, tid);

	return i ? &w->thr[*i - 1] : NULL;
}

/* Takes goroutine id g for a thread; -EINVAL when another has it. */
static int take_goid(struct go123_writer *w, uint64_t g)
{
	bool added;

	if (!g || u64map__get(w->goids, g))
		return -EINVAL;
	return u64map__put(w->goids, g, &added) ? 0 : -ENOMEM;
}

/* A new thread, before anything is written of it; NULL with errno set. */
static struct thr *add_thread(struct go123_writer *w, uint64_t tid, uint8_t st)
{
	void *arr = w->thr;
	uint64_t *i;
	bool added;
	int err;

	if (!tid || find(w, tid) || u64map__get(w->goids, tid)) {
		errno = EINVAL;
		return NULL;
	}
	if (grow_array(&arr, &w->cap_thr, w->nthr + 1, sizeof(*w->thr), 16)) {
		errno = ENOMEM;
		return NULL;
	}
	w->thr = arr;
	i = u64map__put(w->by_tid, tid, &added);
	if (!i)
		return NULL;
	if ((err = take_goid(w, tid))) {
		u64map__del(w->by_tid, tid);
		errno = -err;
		return NULL;
	}
	*i = w->nthr + 1;
	w->thr[w->nthr++] = (struct thr){ .tid = tid, .g = tid, .st = st, .p = -1 };
	return &w->thr[w->nthr - 1];
}

static void drop_thread(struct go123_writer *w, struct thr *t)
{
	size_t i = (size_t)(t - w->thr);

	free(t->m.data);
	u64map__del(w->goids, t->g);
	u64map__del(w->by_tid, t->tid);
	if (i != w->nthr - 1) {
		w->thr[i] = w->thr[w->nthr - 1];
		*u64map__get(w->by_tid, w->thr[i].tid) = i + 1;
	}
	w->nthr--;
}

/* Thread t's M starts P p (idle). */
static int start_proc(struct go123_writer *w, uint64_t ts, struct thr *t, uint32_t p)
{
	struct proc *pr = &w->procs[p];
	int err = go123_writer_idle_proc(w, ts, p);

	if (err || (err = EV(w, t, ts, GO123_EV_PROC_START, p, ++pr->seq)))
		return err;
	pr->st = GO123_P_RUNNING;
	pr->holder = t->tid;
	t->p = (int32_t)p;
	return 0;
}

/* Thread t's M lets go of its P: stopped, or stolen by thief's M (t's own for a P it left in a
 * syscall). */
static int release_proc(struct go123_writer *w, uint64_t ts, struct thr *t, struct thr *thief)
{
	struct proc *pr = &w->procs[t->p];
	int err = thief ? EV(w, thief, ts, GO123_EV_PROC_STEAL, (uint64_t)t->p, ++pr->seq, t->tid) :
			  EV0(w, t, ts, GO123_EV_PROC_STOP);

	if (err)
		return err;
	pr->st = GO123_P_IDLE;
	pr->holder = 0;
	t->p = -1;
	return 0;
}

static bool cpu_ok(const struct go123_writer *w, int32_t cpu)
{
	return cpu >= 0 && (uint32_t)cpu < w->nprocs;
}

/* A runnable thread on a CPU starts running. */
static int go_start(struct go123_writer *w, uint64_t ts, struct thr *t)
{
	int err = EV(w, t, ts, GO123_EV_GO_START, t->g, ++t->seq);

	if (!err)
		t->st = GO123_G_RUNNING;
	return err;
}

/* A thread in a syscall on its M, holding a running P, returns to user space. */
static int syscall_return(struct go123_writer *w, uint64_t ts, struct thr *t)
{
	int err = EV0(w, t, ts, GO123_EV_GO_SYSCALL_END_BLOCKED);

	t->st = GO123_G_RUNNABLE;
	return err ? err : go_start(w, ts, t);
}

int go123_writer__run(struct go123_writer *w, uint64_t ts, uint32_t cpu, uint64_t tid)
{
	struct thr *t = find(w, tid);
	struct proc *pr;
	int err;

	if (!t || !cpu_ok(w, (int32_t)cpu))
		return -EINVAL;
	if (t->st != GO123_G_RUNNABLE && t->st != GO123_G_SYSCALL)
		return -EINVAL;
	pr = &w->procs[cpu];
	if (t->p == (int32_t)cpu)
		return go123_writer_enter(w, ts);
	if (pr->st != GO123_P_IDLE && pr->st != GO123_P_SYSCALL)
		return -EBUSY;
	if (pr->st == GO123_P_SYSCALL && find(w, pr->holder)->st != GO123_G_SYSCALL)
		return -EBUSY;
	if ((err = go123_writer_enter(w, ts)))
		return err;
	if (t->p >= 0 && (err = release_proc(w, ts, t,
					     w->procs[t->p].st == GO123_P_SYSCALL ? t : NULL)))
		return err;
	if (pr->st == GO123_P_SYSCALL && (err = release_proc(w, ts, find(w, pr->holder), t)))
		return err;
	if ((err = start_proc(w, ts, t, cpu)))
		return err;
	return t->st == GO123_G_RUNNABLE ? go_start(w, ts, t) : 0;
}

int go123_writer__leave(struct go123_writer *w, uint64_t ts, uint64_t tid, enum go123_leave how,
		      const char *reason, const struct go123_stack *stk)
{
	struct thr *t = find(w, tid);
	uint64_t sid, sk;
	int err;

	if (!t || t->p < 0 || (t->st != GO123_G_RUNNING && t->st != GO123_G_SYSCALL))
		return -EINVAL;
	if ((err = go123_writer_enter(w, ts)))
		return err;
	if (t->st == GO123_G_SYSCALL) {
		/* Left in a syscall: the P stays its own until taken. */
		if (w->procs[t->p].st == GO123_P_SYSCALL)
			return 0;
		return release_proc(w, ts, t, NULL);
	}
	if (how == GO123_PREEMPTED && !reason)
		reason = "preempted";
	if ((err = go123_writer_cstring_id(w, reason, &sid)) ||
	    (err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	err = EV(w, t, ts, how == GO123_BLOCKED ? GO123_EV_GO_BLOCK : GO123_EV_GO_STOP, sid, sk);
	if (err)
		return err;
	t->st = how == GO123_BLOCKED ? GO123_G_WAITING : GO123_G_RUNNABLE;
	return release_proc(w, ts, t, NULL);
}

int go123_writer__wake(struct go123_writer *w, uint64_t ts, uint64_t waker, uint64_t tid,
		     const struct go123_stack *stk)
{
	struct thr *t = find(w, tid), *by = waker ? find(w, waker) : NULL;
	uint64_t sk;
	int err;

	if (!t || (waker && !by))
		return -EINVAL;
	if ((err = go123_writer_enter(w, ts)) || t->st != GO123_G_WAITING)
		return err;
	if ((err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	err = by ? EV(w, by, ts, GO123_EV_GO_UNBLOCK, t->g, ++t->seq, sk) :
		   NOM(w, ts, GO123_EV_GO_UNBLOCK, t->g, ++t->seq, sk);
	if (!err)
		t->st = GO123_G_RUNNABLE;
	return err;
}

int go123_writer__syscall_begin(struct go123_writer *w, uint64_t ts, uint64_t tid,
			      const struct go123_stack *stk)
{
	struct thr *t = find(w, tid);
	uint64_t sk;
	int err;

	if (!t || t->p < 0 || t->st != GO123_G_RUNNING)
		return -EINVAL;
	if ((err = go123_writer_enter(w, ts)) || (err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	err = EV(w, t, ts, GO123_EV_GO_SYSCALL_BEGIN, ++w->procs[t->p].seq, sk);
	if (err)
		return err;
	t->st = GO123_G_SYSCALL;
	w->procs[t->p].st = GO123_P_SYSCALL;
	return 0;
}

int go123_writer__syscall_end(struct go123_writer *w, uint64_t ts, uint64_t tid)
{
	struct thr *t = find(w, tid);
	int err;

	if (!t || t->p < 0 || t->st != GO123_G_SYSCALL)
		return -EINVAL;
	if ((err = go123_writer_enter(w, ts)))
		return err;
	if (w->procs[t->p].st == GO123_P_RUNNING)	/* came back on a CPU it started anew */
		return syscall_return(w, ts, t);
	if ((err = EV0(w, t, ts, GO123_EV_GO_SYSCALL_END)))
		return err;
	t->st = GO123_G_RUNNING;
	w->procs[t->p].st = GO123_P_RUNNING;
	return 0;
}

/* A thread the first generation did not state is born in a syscall on its own M, then brought
 * to st. */
static int appear(struct go123_writer *w, uint64_t ts, struct thr *t, enum go123_gstatus st,
		  int32_t cpu, const char *reason, const struct go123_stack *stk)
{
	int err = EV(w, t, ts, GO123_EV_GO_CREATE_SYSCALL, t->g);
	uint32_t p;

	if (err || st == GO123_G_SYSCALL) {
		if (!err && cpu >= 0)
			err = start_proc(w, ts, t, (uint32_t)cpu);
		return err;
	}
	if (st == GO123_G_RUNNING) {
		if ((err = start_proc(w, ts, t, (uint32_t)cpu)))
			return err;
		return syscall_return(w, ts, t);
	}
	if ((err = EV0(w, t, ts, GO123_EV_GO_SYSCALL_END_BLOCKED)))
		return err;
	t->st = GO123_G_RUNNABLE;
	if (st == GO123_G_RUNNABLE)
		return 0;
	for (p = 0; p < w->nprocs && w->procs[p].st != GO123_P_IDLE; p++)
		;
	if (p == w->nprocs)
		return -EBUSY;
	if ((err = start_proc(w, ts, t, p)) || (err = go_start(w, ts, t)))
		return err;
	return go123_writer__leave(w, ts, t->tid, GO123_BLOCKED, reason, stk);
}

int go123_writer__thread_found(struct go123_writer *w, uint64_t ts, uint64_t tid,
			     enum go123_gstatus st, int32_t cpu, const char *reason,
			     const struct go123_stack *stk)
{
	bool on_cpu = st == GO123_G_RUNNING || (st == GO123_G_SYSCALL && cpu >= 0);
	struct thr *t;
	uint64_t sk;
	int err;

	if (st < GO123_G_RUNNABLE || st > GO123_G_WAITING || find(w, tid) || !tid)
		return -EINVAL;
	if (on_cpu ? !cpu_ok(w, cpu) : cpu != -1)
		return -EINVAL;
	if (on_cpu && (w->procs[cpu].st != GO123_P_IDLE ||
		       (w->open && w->procs[cpu].status_gen == w->gen && w->gen == 1)))
		return -EBUSY;
	if ((err = go123_writer_enter(w, ts)))
		return err;
	t = add_thread(w, tid, (uint8_t)(w->gen == 1 ? st : GO123_G_SYSCALL));
	if (!t)
		return -errno;
	if (w->gen > 1)
		return appear(w, ts, t, st, cpu, reason, stk);
	if ((err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	if (on_cpu) {
		struct proc *pr = &w->procs[cpu];

		pr->st = st == GO123_G_RUNNING ? GO123_P_RUNNING : GO123_P_SYSCALL;
		pr->holder = tid;
		pr->status_gen = w->gen;
		t->p = cpu;
		if ((err = EV(w, t, ts, GO123_EV_PROC_STATUS, (uint64_t)cpu, pr->st)))
			return err;
	}
	if (on_cpu || st == GO123_G_SYSCALL)
		return EV(w, t, ts, GO123_EV_GO_STATUS_STACK, t->g, tid, st, sk);
	return NOM(w, ts, GO123_EV_GO_STATUS_STACK, t->g, GO123_NO_THREAD, st, sk);
}

int go123_writer__thread_new(struct go123_writer *w, uint64_t ts, uint64_t parent, uint64_t tid,
			   const struct go123_stack *stk, const struct go123_stack *start)
{
	struct thr *pt = find(w, parent), *t;
	uint64_t sk, ssk;
	int err;

	if (!pt || !tid || find(w, tid))
		return -EINVAL;
	if (pt->p < 0 || pt->st != GO123_G_RUNNING || w->procs[pt->p].st != GO123_P_RUNNING)
		return go123_writer__thread_found(w, ts, tid, GO123_G_RUNNABLE, -1, NULL, start);
	if ((err = go123_writer_enter(w, ts)) || (err = go123_writer_stack_id(w, stk, &sk)) ||
	    (err = go123_writer_stack_id(w, start, &ssk)))
		return err;
	if (!(t = add_thread(w, tid, GO123_G_RUNNABLE)))
		return -errno;
	/* Adding may have moved the table of threads. */
	pt = find(w, parent);
	return EV(w, pt, ts, GO123_EV_GO_CREATE, t->g, ssk, sk);
}

int go123_writer__exec(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t goid,
		     const struct go123_stack *stk, const struct go123_stack *start)
{
	struct thr *t = find(w, tid);
	uint64_t sk, ssk, old;
	int32_t p;
	int err;

	if (!t || t->p < 0 || (t->st != GO123_G_RUNNING && t->st != GO123_G_SYSCALL))
		return -EINVAL;
	if (!goid || u64map__get(w->goids, goid))
		return -EINVAL;
	if ((err = go123_writer_enter(w, ts)) || (err = go123_writer_stack_id(w, stk, &sk)) ||
	    (err = go123_writer_stack_id(w, start, &ssk)) || (err = take_goid(w, goid)))
		return err;
	old = t->g;
	p = t->p;
	if (t->st == GO123_G_RUNNING) {
		/* Created by the goroutine it replaces, which then ends: the M keeps its P. */
		if ((err = EV(w, t, ts, GO123_EV_GO_CREATE, goid, ssk, sk)) ||
		    (err = EV0(w, t, ts, GO123_EV_GO_DESTROY)))
			return err;
		t->g = goid;
		t->seq = 0;
		t->st = GO123_G_RUNNABLE;
		err = go_start(w, ts, t);
	} else {
		/* In the syscall (execve): the old goroutine ends in it and the new one is born in
		 * it; the P is let go first, as at an exit (§18.5), and taken again. */
		if ((err = release_proc(w, ts, t, w->procs[p].st == GO123_P_SYSCALL ? t : NULL)) ||
		    (err = EV0(w, t, ts, GO123_EV_GO_DESTROY_SYSCALL)) ||
		    (err = EV(w, t, ts, GO123_EV_GO_CREATE_SYSCALL, goid)))
			return err;
		t->g = goid;
		t->seq = 0;
		err = start_proc(w, ts, t, (uint32_t)p);
	}
	u64map__del(w->goids, old);
	return err;
}

int go123_writer__thread_exit(struct go123_writer *w, uint64_t ts, uint64_t tid)
{
	struct thr *t = find(w, tid);
	int err;

	if (!t || (t->st != GO123_G_SYSCALL && (t->st != GO123_G_RUNNING || t->p < 0)))
		return -EINVAL;
	if ((err = go123_writer_enter(w, ts)))
		return err;
	if (t->st == GO123_G_RUNNING) {
		if ((err = EV0(w, t, ts, GO123_EV_GO_DESTROY)) ||
		    (err = release_proc(w, ts, t, NULL)))
			return err;
	} else {
		/* Let go of the P first: a P that leaves with its thread's end is lost to the
		 * parser ("abandoned"), never to be started again. */
		if (t->p >= 0 &&
		    (err = release_proc(w, ts, t, w->procs[t->p].st == GO123_P_SYSCALL ? t : NULL)))
			return err;
		if ((err = EV0(w, t, ts, GO123_EV_GO_DESTROY_SYSCALL)))
			return err;
	}
	if ((err = go123_writer_put_batch(w, t->tid, &t->m)))
		return err;
	drop_thread(w, t);
	return 0;
}

int go123_writer__cpu_sample(struct go123_writer *w, uint64_t ts, uint64_t tid, uint32_t cpu,
			   const struct go123_stack *stk)
{
	uint8_t e[1 + 5 * GT_MAX_VARINT_LEN], *p = e;
	uint64_t sk;
	int err;

	if (!ts || (uint32_t)cpu >= w->nprocs)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->open && (err = go123_writer_enter(w, ts > w->last_ts ? ts : w->last_ts)))
		return err;
	if ((err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	*p++ = GO123_EV_CPU_SAMPLE;
	p = gt_varint_put(p, go123_writer_ticks(w, ts));
	p = gt_varint_put(p, tid ? tid : GO123_NO_THREAD);
	p = gt_varint_put(p, cpu);
	p = gt_varint_put(p, find(w, tid) ? find(w, tid)->g : tid);
	p = gt_varint_put(p, sk);
	w->st.events++;
	w->gen_events++;
	return go123_writer_table_add(w, &w->samples, GO123_EV_CPU_SAMPLES, e, (size_t)(p - e));
}

/* The thread of an annotation: it holds a CPU, so its M has a P and its goroutine. */
static struct thr *annotating(struct go123_writer *w, uint64_t ts, uint64_t tid, int *err)
{
	struct thr *t = find(w, tid);

	if (!t || t->p < 0 || (t->st != GO123_G_RUNNING && t->st != GO123_G_SYSCALL)) {
		*err = -EINVAL;
		return NULL;
	}
	*err = go123_writer_enter(w, ts);
	return *err ? NULL : t;
}

int go123_writer__task_begin(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t task,
			   uint64_t parent, const char *name, const struct go123_stack *stk)
{
	uint64_t sid, sk;
	int err;
	struct thr *t = annotating(w, ts, tid, &err);

	if (!t || (err = go123_writer_cstring_id(w, name, &sid)) ||
	    (err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	return EV(w, t, ts, GO123_EV_USER_TASK_BEGIN, task, parent, sid, sk);
}

int go123_writer__task_end(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t task,
			 const struct go123_stack *stk)
{
	uint64_t sk;
	int err;
	struct thr *t = annotating(w, ts, tid, &err);

	if (!t || (err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	return EV(w, t, ts, GO123_EV_USER_TASK_END, task, sk);
}

int go123_writer__region(struct go123_writer *w, uint64_t ts, uint64_t tid, bool begin,
		       uint64_t task, const char *name, const struct go123_stack *stk)
{
	uint64_t sid, sk;
	int err;
	struct thr *t = annotating(w, ts, tid, &err);

	if (!t || (err = go123_writer_cstring_id(w, name, &sid)) ||
	    (err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	return EV(w, t, ts, begin ? GO123_EV_USER_REGION_BEGIN : GO123_EV_USER_REGION_END, task,
		  sid, sk);
}

int go123_writer__log(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t task,
		    const char *key, const char *value, size_t value_len,
		    const struct go123_stack *stk)
{
	uint64_t kid, vid, sk;
	int err;
	struct thr *t = annotating(w, ts, tid, &err);

	if (!t || (err = go123_writer_cstring_id(w, key, &kid)) ||
	    (err = go123_writer_string_id(w, value, value_len, &vid)) ||
	    (err = go123_writer_stack_id(w, stk, &sk)))
		return err;
	return EV(w, t, ts, GO123_EV_USER_LOG, task, kid, vid, sk);
}

int go123_writer__heap(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t bytes)
{
	int err;
	struct thr *t = annotating(w, ts, tid, &err);

	return t ? EV(w, t, ts, GO123_EV_HEAP_ALLOC, bytes) : err;
}

void go123_writer__stats(const struct go123_writer *w, struct go123_writer_stats *out)
{
	*out = w->st;
}

struct go123_writer *go123_writer__new(const struct go123_writer_opts *o)
{
	struct go123_writer *w;
	int err;

	if (!o || o->sz < sizeof(*o) || !o->nprocs || !o->frequency || (o->fd < 0 && !o->sink)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = o->sink ? -1 : o->fd;
	w->sink = o->sink;
	w->sink_ctx = o->sink_ctx;
	w->nprocs = o->nprocs;
	w->freq = o->frequency;
	w->gen_ticks = o->gen_ticks ? o->gen_ticks : o->frequency;
	w->gen_bytes = o->gen_bytes ? o->gen_bytes : GO123_WRITER_GEN_BYTES;
	w->batch_size = o->batch_size && o->batch_size <= GO123_MAX_BATCH ? o->batch_size :
									  GO123_MAX_BATCH;
	if (w->batch_size < 2 * EV_ROOM)
		w->batch_size = 2 * EV_ROOM;
	w->gen = 1;
	w->base = w->sink ? -1 : lseek(o->fd, 0, SEEK_CUR);
	w->out = w->sink ? gt_outq__new_sink(go123_writer_gather, w) :
			   gt_outq__new(o->fd, GO123_MAX_BATCH, 0);
	w->procs = calloc(o->nprocs, sizeof(*w->procs));
	w->pcs = calloc(GO123_MAX_FRAMES, sizeof(*w->pcs));
	w->by_tid = u64map__new();
	w->goids = u64map__new();
	w->sids = gt_tracemap__new();
	w->stkids = gt_tracemap__new();
	if (!w->out || !w->procs || !w->pcs || !w->by_tid || !w->goids || !w->sids || !w->stkids)
		goto fail;
	for (uint32_t p = 0; p < o->nprocs; p++)
		w->procs[p].st = GO123_P_IDLE;
	err = gt_outq__bytes(w->out, GO123_HEADER, GO123_HEADER_LEN);
	if (!err)
		err = gt_outq__flush(w->out);
	if (err) {
		errno = -err;
		goto fail;
	}
	w->gen_mark = w->st.bytes = gt_outq__written(w->out);
	return w;
fail:
	go123_writer__free(w);
	return NULL;
}

void go123_writer__free(struct go123_writer *w)
{
	if (!w)
		return;
	gt_outq__free(w->out);
	for (size_t i = 0; i < w->nthr; i++)
		free(w->thr[i].m.data);
	free(w->thr);
	u64map__free(w->by_tid);
	u64map__free(w->goids);
	free(w->procs);
	free(w->nom.data);
	free(w->whole.data);
	free(w->strings.data);
	free(w->stacks.data);
	free(w->samples.data);
	gt_tracemap__free(w->sids);
	gt_tracemap__free(w->stkids);
	free(w->pcs);
	free(w);
}
