/* model.c - the model's life: created, started with the threads alive at the start (the init
 * phase), told of lost records, finished, asked for its counters (docs/model.md). Records
 * themselves come in through dispatch.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "format/go119/tables.h"
#include "format/go123/tables.h"
#include "lib/u64map.h"
#include "user/model/annotations.h"
#include "user/model/core.h"
#include "user/model/model.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

static const char *const repair_names[MODEL_REPAIR_COUNT] = {
	[MODEL_REPAIR_UNKNOWN_THREAD] = "unknown-thread",
	[MODEL_REPAIR_MIGRATED] = "migrated",
	[MODEL_REPAIR_STALE_SWITCH] = "stale-switch",
	[MODEL_REPAIR_EXIT_UNKNOWN] = "exit-unknown",
	[MODEL_REPAIR_MISSED_WAKEUP] = "missed-wakeup",
	[MODEL_REPAIR_FOREIGN] = "foreign-record",
	[MODEL_REPAIR_TIME_CLAMPED] = "time-clamped",
	[MODEL_REPAIR_BAD_RECORD] = "bad-record",
	[MODEL_REPAIR_TASK_REUSE] = "task-reuse",
	[MODEL_REPAIR_REGION_NESTING] = "region-nesting",
	[MODEL_REPAIR_STACK_FORGOTTEN] = "stack-forgotten",
	[MODEL_REPAIR_NO_SYSRET] = "no-sysret",
};

const char *model__repair_name(enum model_repair r)
{
	return (unsigned)r < MODEL_REPAIR_COUNT ? repair_names[r] : "?";
}

static const char *const kind_names[MODEL_KIND_COUNT] = {
	[MODEL_KIND_SWITCH] = "switches",
	[MODEL_KIND_WAKEUP] = "wakeups",
	[MODEL_KIND_FORK] = "forks",
	[MODEL_KIND_EXEC] = "execs",
	[MODEL_KIND_EXIT] = "exits",
	[MODEL_KIND_SYSCALL] = "syscalls",
	[MODEL_KIND_SYSRET] = "syscall returns",
	[MODEL_KIND_RSS] = "memory",
	[MODEL_KIND_ANNOTATION] = "annotations",
	[MODEL_KIND_SAMPLE] = "samples",
	[MODEL_KIND_MMAP] = "mappings",
	/* Records: what fired without one (measured by the model) is not counted here. */
	[MODEL_KIND_TRIGGER] = "trigger requests",
	[MODEL_KIND_RENAME] = "renames",
	[MODEL_KIND_ENQUEUE] = "enqueues",
	[MODEL_KIND_OCCUPANT] = "CPU holders",
	[MODEL_KIND_PYSTACK] = "Python stacks",
};

const char *model__kind_name(enum model_kind k)
{
	return (unsigned)k < MODEL_KIND_COUNT ? kind_names[k] : "?";
}

struct model *model__new(const struct model_opts *opts)
{
	struct model *m;

	if (!opts || opts->sz < sizeof(*opts) || !opts->writer == !opts->writer2 || !opts->ncpus ||
	    opts->ncpus > INT32_MAX - 1 || opts->syscalls > MODEL_SYSCALLS_NONE) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->w = opts->writer;
	m->w2 = opts->writer2;
	m->out = m->w ? &model_out_go119 : &model_out_go123;
	if (m->w)
		gt_tables__writer(&m->tables, m->w);
	else if ((m->t2 = go123_tables__new(0)))
		go123_tables__as(m->t2, &m->tables);
	m->ncpus = opts->ncpus;
	m->hk = opts->ncpus;
	m->syscalls = opts->syscalls;
	m->sysrets = opts->sysrets && opts->syscalls == MODEL_SYSCALLS_ALL;
	m->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	m->keep = opts->keep;
	m->keep_ctx = opts->keep_ctx;
	m->rss = opts->rss;
	m->enqueue = opts->enqueue;
	m->triggers = opts->triggers;
	m->ntriggers = opts->triggers ? opts->ntriggers : 0;
	m->on_trigger = opts->on_trigger;
	m->trigger_ctx = opts->trigger_ctx;
	for (int k = 0; k < TRIGGER_KINDS; k++)
		m->trigger_over[k] = UINT64_MAX;
	for (size_t i = 0; i < m->ntriggers; i++)
		if (m->triggers[i].over_ns < m->trigger_over[m->triggers[i].kind])
			m->trigger_over[m->triggers[i].kind] = m->triggers[i].over_ns;
	m->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	m->rss_pages = u64map__new();
	m->threads = threads__new();
	m->idents = idents__new(&m->tables);
	m->ann = annotations__new();
	m->cur = calloc(opts->ncpus + 1, sizeof(*m->cur));
	m->held = calloc(opts->ncpus + 1, sizeof(*m->held));
	m->py = calloc(opts->ncpus + 1, sizeof(*m->py));
	m->helper_pid = opts->helper_pid;
	if (opts->stacks && m->idents)
		m->cs = callstacks__new(&m->tables, m->idents, m->proc_root, opts->trusted_uid);
	if ((!m->w && !m->t2) || !m->proc_root || !m->rss_pages || !m->threads || !m->idents ||
	    !m->ann || !m->cur || !m->held || !m->py || (opts->stacks && !m->cs)) {
		model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

/* The stack read at the start (model__start_stacks) of pt, kept, or NULL: one read while
 * the thread was as the scan found it, asleep or waiting for a CPU ('R' is both running and
 * waiting; a running thread has none); with py, its Python frames. *late: left out, as the
 * budget ran out before it. */
static const struct lx_stack *start_stack(const struct model *m, const struct procscan_thread *pt,
					  bool *late, const struct lx_pystack **py)
{
	const struct lx_stack *st;
	bool runnable;
	size_t size;

	if (!m->start_stack || !m->cs || model_left_out(m, pt))
		return NULL;
	st = m->start_stack(m->start_ctx, pt->tid, &runnable, &size, py);
	if (!st || runnable != (pt->state == 'R'))
		return NULL;
	/* Past the budget of model__prepare: not named ahead, so left out. */
	if (m->start_warmed && !u64map__get(m->start_warmed, pt->tid)) {
		*late = true;
		return NULL;
	}
	return st;
}

/* One thread alive at start: created runnable, then run and blocked on the housekeeping P
 * if it sleeps, or preempted there if it waits for a CPU, unless it is running (on a CPU the
 * model learns from its first record). */
static int init_thread(struct model *m, const struct procscan_thread *pt)
{
	struct thread *t;
	uint64_t new_stk;
	bool late = false;
	int err = 0;

	if (model_left_out(m, pt) || threads__find(m->threads, pt->tid))
		return 0;
	/* Unreadable memory counts 0 until the process's first rss record corrects it. */
	if (m->rss && pt->tid == pt->pid) {
		err = model_set_rss(m, pt->pid, procscan__resident(m->proc_root, pt->pid));
		if (err)
			return err;
	}
	t = model_entry(m, pt->tid, &err);
	if (!t)
		return err;
	if (m->cs && pt->tid == pt->pid)
		callstacks__note(m->cs, pt->pid);
	err = model_name(m, t, pt->pid, pt->comm, pt->program);
	if (err)
		return err;
	/* The program frame alone: the viewers group goroutines by it (idents.h). */
	new_stk = idents__create_stack(m->idents, m->hk, t->ident);
	if (!new_stk)
		return -errno;
	model_born(m, t);
	m->st.threads++;
	t->scanned = 1;
	m->rs = start_stack(m, pt, &late, &m->rpy);
	if (!m->rs)
		m->rpy = NULL;
	m->st.start_stacks_late += late;
	if (pt->state == 'R') {
		/* Waiting for a CPU, with the stack it was preempted at: run on the housekeeping P
		 * for an instant and preempted there, as in Go's own traces a goroutine waits for a
		 * P with its stack. Running, or not read: created runnable. */
		t->unplaced = 1;
		err = m->out->found(m, t, new_stk, m->rs ? GT_EV_GO_PREEMPT : GT_EV_NONE, -1);
		t->seq += m->rs != NULL;
		m->rs = NULL;
		m->rpy = NULL;
		return err;
	}
	return model_found_asleep(m, t, new_stk, pt);
}

/* The threads alive under proc_root that opts.keep keeps, in *out (malloc'd) and *n. */
static int kept_threads(const struct model *m, struct procscan_thread **out, size_t *n)
{
	size_t kept = 0;
	int err = procscan__threads(m->proc_root, out, n);

	if (err || !m->keep)
		return err;
	for (size_t i = 0; i < *n; i++)
		if (m->keep(m->keep_ctx, &(*out)[i]))
			(*out)[kept++] = (*out)[i];
	*n = kept;
	return 0;
}

int model__start_threads(struct model *m, uint32_t **tids, size_t *n)
{
	struct procscan_thread *live = NULL;
	size_t nlive = 0;
	int err = kept_threads(m, &live, &nlive);

	*tids = NULL;
	*n = 0;
	if (!err && nlive && !(*tids = calloc(nlive, sizeof(**tids))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < nlive; i++)
		if (!model_left_out(m, &live[i]))
			(*tids)[(*n)++] = live[i].tid;
	free(live);
	return err;
}

void model__start_stacks(struct model *m, model_start_stack_fn fn, void *ctx)
{
	m->start_stack = fn;
	m->start_ctx = ctx;
}

/* Waits, for at most limit_ns in all, until the rows wanted for the targets' binaries are
 * loaded (with targets) and each stack of a thread in live read at the start
 * (model__start_stacks) can be walked (callstacks__ready_within, whose first try asks for the
 * rows it lacks): one wait for both, as both are the unwind worker's. Then those stacks are
 * walked and named ahead (callstacks__warm), for at most MODEL_PREPARE_NS of CPU: the init
 * phase writes them once the programs are attached, while the rings fill. */
static void await_rows(struct model *m, const struct procscan_thread *live, size_t n,
		       bool targets, uint64_t limit_ns)
{
	uint64_t until = now_ns() + limit_ns;
	struct u64map *noted = u64map__new();
	bool added = false, late = false;
	size_t i = 0;

	/* Each process once: its maps are read (a map of thousands of threads' stacks). */
	for (size_t k = 0; noted && k < n; k++)
		if (start_stack(m, &live[k], &late, NULL) &&
		    u64map__put(noted, live[k].pid, &added) && added)
			callstacks__note(m->cs, live[k].pid);
	u64map__free(noted);
	for (;;) {
		for (const struct lx_stack *st; i < n; i++)
			if ((st = start_stack(m, &live[i], &late, NULL)) &&
			    !callstacks__ready_within(m->cs, live[i].pid, st, limit_ns))
				break;
		if ((i == n && (!targets || callstacks__rows_loaded(m->cs))) || now_ns() >= until)
			break;
		usleep(2000);
	}
	/* Within a budget of CPU time of its own: once it runs out, only the threads named by
	 * then keep their stacks (the others' blocks name their syscall alone, counted), rather
	 * than be named while the rings fill. */
	noted = u64map__new();
	until = thread_cpu_ns() + MODEL_PREPARE_NS;
	for (size_t k = 0; noted && k < n; k++) {
		const struct lx_stack *st = start_stack(m, &live[k], &late, NULL);

		if (!st)
			continue;
		if (thread_cpu_ns() >= until) {
			m->start_warmed = noted;
			return;
		}
		callstacks__warm(m->cs, live[k].pid, st);
		if (!u64map__put(noted, live[k].tid, &added))
			break;
	}
	u64map__free(noted);
}

int model__prepare(struct model *m, bool kernel, bool user, bool rows)
{
	struct procscan_thread *live = NULL;
	uint32_t *pids = NULL;
	size_t n = 0, np = 0;
	int err = 0;

	if (!m->cs)
		return 0;
	if (user || m->start_stack)
		err = kept_threads(m, &live, &n);
	if (!err && n && !(pids = calloc(n, sizeof(*pids))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		if (live[i].tid == live[i].pid && live[i].pid != (uint32_t)getpid() &&
		    live[i].pid != m->helper_pid)
			pids[np++] = live[i].pid;
	/* The rows first, within a bound: under load (the worker's 0.3-1 s of CPU took 1-3 s
	 * beside CPU hogs) the first stacks would otherwise need copies, more than the rings have
	 * room for. Then the symbols, which compiling beside would leave no time. */
	if (!err && user && rows)
		callstacks__want_rows(m->cs, pids, np);
	/* The whole machine's: short, as its short-lived processes (a compiler's) would often
	 * hold the start for the whole bound while their large binaries compile. */
	if (!err)
		await_rows(m, live, n, user && rows,
			   m->keep ? MODEL_ROWS_NS : MODEL_MACHINE_ROWS_NS);
	if (!err)
		callstacks__prepare(m->cs, pids, user ? np : 0, kernel, MODEL_PREPARE_NS);
	free(pids);
	free(live);
	return err;
}

/* The init phase (docs/format.md §8, §10.5) on the housekeeping P, each event one
 * tick after the last so that nothing collides, ending two ticks before ts: lxtrace's goroutine
 * created first (strictly the earliest event), the P started, every live thread created, then
 * Gomaxprocs; at ts every CPU's P starts. */
/* A file whose syscalls run from entry to return says so once, where it begins. */
static int says_sysrets(struct model *m)
{
	uint64_t key = gt_tables__string(&m->tables, m->hk, LXTRACE_SYSCALLS_KEY);

	return key ? model_log(m, key, "entries and returns") : -errno;
}

int model__start(struct model *m, uint64_t ts)
{
	struct procscan_thread *live_threads = NULL;
	size_t n = 0;
	uint64_t stk, n_init;
	int err;

	if (m->err)
		return m->err;
	if (m->started || ts > INT64_MAX)
		return -EINVAL;
	err = kept_threads(m, &live_threads, &n);
	if (err)
		goto out;
	m->scan_ts = now_ns();
	n_init = 4;
	for (size_t i = 0; i < n; i++)
		n_init += live_threads[i].state == 'R' ? 1 : 3;
	m->now = ts > n_init + 2 ? ts - n_init - 2 : 1;

	err = model_special_stack(m, m->hk, IDENT_SPECIAL_LXTRACE, &stk);
	if (!err)
		err = m->out->lx_found(m, stk);
	m->lx_seq = 2;
	m->key_lost = gt_tables__string(&m->tables, m->hk, "lxtrace.lost");
	if (!err && !m->key_lost)
		err = -errno;
	for (size_t i = 0; i < n && !err; i++) {
		m->now++;
		err = init_thread(m, &live_threads[i]);
	}
	m->now++;
	if (!err)
		err = m->out->gomaxprocs(m);
	if (m->now < ts)
		m->now = ts;
	else
		m->now++;
	for (uint32_t p = 0; p < m->ncpus && !err; p++)
		err = m->out->proc(m, p, true);
	if (!err && m->rss)
		err = m->out->heap(m, m->hk, m->rss_total * m->page_size);
	if (!err && m->sysrets)
		err = says_sysrets(m);
	m->started = true;
	m->start_stack = NULL;
	u64map__free(m->start_warmed);
	m->start_warmed = NULL;
	model_remove_reaped(m);
out:
	free(live_threads);
	if (err)
		m->err = err;
	return err;
}

int model__lost(struct model *m, uint32_t cpu, uint64_t ts, uint64_t n)
{
	char msg[64];
	int err;

	if (m->err)
		return m->err;
	if (!m->started || m->finished)
		return -EINVAL;
	model_advance(m, ts);
	m->st.lost += n;
	m->lost_ts = m->now;
	snprintf(msg, sizeof(msg), "%llu records lost on CPU %u", (unsigned long long)n, cpu);
	/* A kept id is used again only while current in the writer (format/dedup.h). */
	if (!gt_tables__current(&m->tables, false, m->key_lost))
		m->key_lost = gt_tables__string(&m->tables, m->hk, "lxtrace.lost");
	err = m->key_lost ? model_log(m, m->key_lost, msg) : -errno;
	if (err)
		m->err = err;
	return err;
}

int model__finish(struct model *m, uint64_t ts)
{
	int err = 0;

	if (m->err)
		return m->err;
	if (!m->started)
		return -EINVAL;
	if (m->finished)
		return 0;
	model_advance(m, ts);
	/* The viewers draw a counter from one value to the next: its last value is written again
	 * at the end, or the heap graph would stop at the last change. */
	if (m->rss)
		err = m->out->heap(m, m->hk, m->rss_total * m->page_size);
	/* The 1.19 viewer crashes on a GoStart with no later stop (docs/format.md §10.5). */
	for (uint32_t p = 0; p < m->ncpus && !err; p++)
		if (m->cur[p])
			err = model_preempt(m, p);
	for (uint32_t p = 0; p < m->ncpus && !err; p++)
		err = model_hold(m, p, LX_OCC_IDLE);
	for (uint32_t p = 0; p <= m->ncpus && !err; p++)
		err = m->out->proc(m, p, false);
	m->finished = true;
	if (m->cs)
		callstacks__finish(m->cs);
	if (!err)
		err = m->out->flush(m);
	if (err)
		m->err = err;
	return err;
}

void model__stats(const struct model *m, struct model_stats *out)
{
	struct callstacks_stats cs = { 0 };

	*out = m->st;
	out->threads_held = threads__count(m->threads);
	out->idents_held = idents__count(m->idents);
	if (m->cs)
		callstacks__stats(m->cs, &cs);
	out->stack_lookups = cs.lookups;
	out->stacks_distinct = cs.distinct;
	out->stacks_shared = cs.shared;
	out->stacks_trimmed = cs.trimmed;
	out->images = cs.images;
	out->symbolize_ns = cs.symbolize_ns;
	out->binaries = cs.binaries;
	out->binaries_closed = cs.binaries_closed;
	out->binaries_over_budget = cs.binaries_over_budget;
	out->binaries_reread = cs.binaries_reread;
	out->prepared = cs.prepared;
	out->prepared_dwarf = cs.prepared_dwarf;
	out->prepared_kernel = cs.prepared_kernel;
	out->prepare_ns = cs.prepare_ns;
	out->late_walks = cs.late_walks;
	out->late_frames = cs.late_frames;
	out->late_held = cs.late_held;
	out->late_copy_short = cs.late_ends[LATE_WALK_COPY_SHORT];
	out->late_no_rows = cs.late_ends[LATE_WALK_NO_ROWS];
	out->jit_kept = cs.late_jit_kept;
	out->jit_unkept = cs.late_jit_unkept;
	out->jit_dropped = cs.late_jit_dropped;
	out->jit_named = cs.late_jit_named;
	out->jit_frames = cs.late_jit_frames;
	out->jit_ns = cs.late_jit_ns;
	out->jit_window = cs.late_jit_window;
	out->jit_err = cs.late_jit_err;
	out->copies_refused = cs.copies_refused;
	out->stacks_cut = cs.cut;
	out->stacks_shed = cs.shed;
	out->stacks_unwaited = cs.unwaited;
	out->py_stacks = cs.py_stacks;
	out->py_frames = cs.py_frames;
	out->py_unnamed = cs.py_unnamed;
	out->py_no_eval = cs.py_no_eval;
	out->py_deep = cs.py_deep;
}

void model__use_rows(struct model *m, struct cfi_loader *cfi)
{
	if (m->cs)
		callstacks__use_rows(m->cs, cfi);
}

void model__use_python(struct model *m, struct python *py)
{
	if (m->cs)
		callstacks__use_python(m->cs, py);
}

void model__stop_waiting(struct model *m)
{
	if (m->cs)
		callstacks__stop_waiting(m->cs);
}

void model__shed(struct model *m, bool waits, bool symbols)
{
	if (m->cs)
		callstacks__shed(m->cs, waits, symbols);
}

const struct foreign_log *model__refused(const struct model *m)
{
	return m->cs ? callstacks__refused(m->cs) : NULL;
}

const struct foreign_log *model__unread(const struct model *m)
{
	return m->cs ? callstacks__unread(m->cs) : NULL;
}

const struct gt_frame *model__late_named(void *m, const uint64_t *pcs, size_t n)
{
	const struct model *md = m;

	return md->cs ? callstacks__late_named(md->cs, pcs, n) : NULL;
}

size_t model__name_window(struct model *m)
{
	struct callstacks_stats cs;

	if (!m->cs)
		return 0;
	if (!m->finished)
		return callstacks__name_window(m->cs);
	/* After the end (a file written then) the end's names serve. */
	callstacks__stats(m->cs, &cs);
	return cs.late_jit_err == -ENOTSUP ? cs.late_jit_named : 0;
}

void model__window_done(struct model *m)
{
	if (m->cs && !m->finished)
		callstacks__window_done(m->cs);
}

void model__free(struct model *m)
{
	if (!m)
		return;
	free(m->cur);
	for (uint32_t p = 0; m->held && p < m->ncpus; p++)
		for (int k = 0; k < 2; k++)
			free(m->held[p].s[k]);
	free(m->held);
	free(m->py);
	free(m->reaped);
	free(m->exited);
	u64map__free(m->rss_pages);
	u64map__free(m->start_warmed);
	model_late_free(m);
	annotations__free(m->ann);
	callstacks__free(m->cs);
	idents__free(m->idents);
	threads__free(m->threads);
	free(m->proc_root);
	go123_tables__free(m->t2);
	free(m);
}
