/* core.h - the model's state and the state machine every record handler works through: the
 * events that move a thread between states and Ps, the repairs that bring the model to what a
 * record needs, and the time of the events (core.c). Private to user/model/: everyone else
 * uses model.h.
 *
 * Calls run one way: dispatch.c -> the handlers (handlers.h) -> these functions; model.c (the
 * model's life) calls them too. Nothing here calls a handler or the dispatcher.
 */
#ifndef LXTRACE_USER_MODEL_CORE_H
#define LXTRACE_USER_MODEL_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/lxtrace.h"
#include "bpf/python.h"
#include "format/tables.h"
#include "format/go119/writer.h"
#include "user/flight/trigger.h"
#include "user/model/model.h"
#include "user/model/out.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"
#include "user/stacks/idents.h"

/* lxtrace's own goroutine: no tid is this large (PID_MAX_LIMIT is 2^22), so it never collides
 * with a thread's goid (tid | generation << 32). */
#define LXTRACE_GOID 0xffffffffull

/* What holds a CPU when no recorded thread does (LX_REC_OCCUPANT, a switch's flags): the
 * stand-in goroutine running there for it, and the holder last named there. */
struct held {
	struct thread *s[2];	/* its stand-ins, not in the thread table: [0] untraced
				 * programs, [1] lxtrace's threads; NULL until first used */
	struct thread *run;	/* the one running there now, or NULL */
	uint64_t since;		/* when it started */
	uint32_t pid;		/* the holder last named there, of kind `kind` */
	char comm[LX_COMM_LEN];
	uint8_t kind;		/* enum lx_occupant_kind; LX_OCC_IDLE: none named yet */
};

struct u64map;
struct annotations;
struct callstacks;
struct go123_writer;
struct go123_tables;

struct model {
	const struct model_out *out;	/* the encoder behind the model's facts (out.h) */
	struct gt_writer *w;		/* Go 1.19 (model_out_go119), or NULL */
	struct go123_writer *w2;		/* go1.23 (model_out_go123), or NULL */
	struct go123_tables *t2;		/* with w2: stacks and strings by id */
	struct gt_tables tables;	/* where stacks and strings get their ids: w's, or t2 */
	uint32_t ncpus;
	uint32_t hk;			/* housekeeping P: ncpus */
	enum model_syscalls syscalls;
	bool sysrets;			/* model_opts.sysrets, with MODEL_SYSCALLS_ALL */
	bool enqueue;			/* model_opts.enqueue */
	char *proc_root;
	bool (*keep)(void *ctx, const struct procscan_thread *t);
	void *keep_ctx;
	model_start_stack_fn start_stack;	/* model__start_stacks */
	void *start_ctx;
	/* Threads whose stacks at the start were walked and named before the attach, within its
	 * budget (model__prepare); NULL: every one is used. */
	struct u64map *start_warmed;
	/* Threads of the target first seen asleep after the start (late.c), until their first
	 * record. */
	struct late_thread *late;
	size_t nlate, late_cap;
	uint32_t helper_pid;		/* opts.helper_pid */
	bool rss;
	struct u64map *rss_pages;	/* pid -> resident pages, of processes that have some */
	uint64_t rss_total;		/* their sum */
	uint64_t page_size;
	struct threads *threads;
	struct idents *idents;
	struct annotations *ann;
	struct callstacks *cs;		/* NULL unless records carry call stacks */
	const struct lx_stack *rs;	/* the call stack the current record carries, or NULL */
	const struct lx_pystack *rpy;	/* its Python frames (model_python_frames), or NULL */
	/* By CPU: the Python frames its last LX_REC_PYSTACK sent, for the next record of that
	 * thread and time; tid 0: none. */
	struct py_pending {
		uint64_t ts;
		uint32_t tid, pad;
		struct lx_pystack ps;	/* its frames right after it, as callstacks__get reads */
		struct lx_pyframe f[LX_PY_FRAMES_MAX];
	} *py;
	struct thread **cur;		/* per P: the G running there per the model, or NULL */
	struct held *held;		/* per P: its stand-ins (none on the housekeeping P) */
	struct thread **reaped;		/* reaped by the current record: removed after it */
	size_t nreaped, reaped_cap;
	struct exited *exited;		/* exited threads, oldest first from exited_head */
	size_t exited_head, nexited, exited_cap;
	uint64_t now;			/* time of every event written for the current record */
	uint64_t scan_ts;		/* CLOCK_MONOTONIC when the /proc scan ended */
	uint64_t lx_seq;		/* seq of lxtrace's goroutine, which sleeps between logs */
	bool lx_off;			/* go1.23: a thread took the housekeeping P from
					 * lxtrace's (model_out_go123) */
	uint64_t key_lost;		/* UserLog key string */
	uint64_t key_trigger;		/* the same, 0 until the first trigger fires */
	uint64_t key_sysret;		/* the same, 0 until the first return (Go 1.19) */
	const struct trigger *triggers;	/* opts.triggers */
	size_t ntriggers;
	uint64_t trigger_over[TRIGGER_KINDS];	/* each kind's lowest threshold; UINT64_MAX: none */
	uint64_t lost_ts;		/* latest loss report's time: times across it are unsure */
	void (*on_trigger)(void *ctx, const struct trigger_fired *f);
	void *trigger_ctx;
	int err;			/* sticky: the first error; nothing is written after it */
	bool started, finished;
	struct model_stats st;
};

/* Functions returning int return 0 or -errno. */

/* Counts a repair of kind r. */
void model_repair(struct model *m, enum model_repair r);

/* Sets the time of the events about to be written to ts; never backwards (an older ts is
 * counted as MODEL_REPAIR_TIME_CLAMPED). */
void model_advance(struct model *m, uint64_t ts);

/* ---- writing events ---- */

/* The stack of t in syscall nr (-1: none) for an event on P p: the call stack the current
 * record took of t when it has one, else its identity's (with the syscall's frame). */
/* The Python frames of r, whose stack is rs: those the last LX_REC_PYSTACK of its CPU sent
 * for its thread and time, or NULL. */
const struct lx_pystack *model_python_frames(struct model *m, const struct lx_rec *r,
					     const struct lx_stack *rs);

int model_thread_stack(struct model *m, uint32_t p, struct thread *t, int nr, uint64_t *stk);

/* The one-frame stack k (idents.h) for an event on P p. */
int model_special_stack(struct model *m, uint32_t p, enum ident_special k, uint64_t *stk);

/* The stack of a wakeup on P p: "[irq]" under the interrupt's kernel frames when the current
 * record says an interrupt raised it (LX_USTACK_IRQ), or when no thread runs on p; else the
 * running thread's. */
int model_waker_stack(struct model *m, uint32_t p, struct thread *cur, uint64_t *stk);

/* t gets a fresh goid and is runnable, as a GoCreate makes it; nothing is written. */
void model_born(struct model *m, struct thread *t);

/* GoCreate of t (a fresh goid) on P p by whatever runs there, the creator's stack
 * creator_stk; t becomes runnable. The caller counts a new thread (an exec's new image is a new
 * goroutine of the same thread). */
int model_go_create(struct model *m, uint32_t p, struct thread *t, uint64_t creator_stk);

/* Runnable t starts on idle P p. */
int model_go_start(struct model *m, uint32_t p, struct thread *t);

/* The G running on p leaves it with event type ev (stack stk when ev has one; in syscall nr,
 * -1 for none, MODEL_NR_UNSEEN) into state. */
int model_go_stop(struct model *m, uint32_t p, enum gt_type ev, uint64_t stk, int nr,
		  enum thread_state state);

/* The G running on p blocks inside a syscall at stk (begun: its entry is its latest event). */
int model_sys_block(struct model *m, uint32_t p, uint64_t stk, bool begun);

/* old, running on c, execs: its goroutine ends and t's new one (t: old, or the tid old goes on
 * under), created at stk, runs on c in its place. */
int model_go_exec(struct model *m, uint32_t c, struct thread *old, struct thread *t, uint64_t stk);

/* The G running on p is preempted, with its stack. */
int model_preempt(struct model *m, uint32_t p);

/* The G running on p left it unseen: the kernel reported no switch-out of it (lost, or never
 * sent: docs/model.md, "Switches the kernel does not report"). Most such threads went to
 * sleep, so it is stopped as blocked, by the repair frame, and a wakeup readies it as usual;
 * one that runs again unwoken was preempted after all, and is readied then (missed-wakeup).
 * Taken for preempted, a thread asleep for a second would show a second of waiting for a
 * CPU that the kernel's run delay does not have. */
int model_stop_unseen(struct model *m, uint32_t p);

/* Blocked t becomes runnable, woken from P p (attributed to whatever runs there) with the
 * waker's stack: GoSysExit for a thread blocked in a syscall, GoUnblock otherwise. */
int model_go_ready(struct model *m, uint32_t p, struct thread *t, uint64_t stk);

/* Keeps the wakeup of t made on P p now with the waker's stack stk (t->wake_stk), unwritten:
 * for its switch-out when t still runs, for its enqueue (model_ready_kept) when t is blocked
 * and the records carry enqueues. */
void model_keep_wake(struct model *m, struct thread *t, uint32_t p, uint64_t stk);

/* Blocked t, whose wakeup was kept (model_keep_wake), becomes runnable now: on the waker's P
 * while that runs what it ran at the wakeup, else on the housekeeping P (no G runs there
 * between records), with the waker's stack either way. */
int model_ready_kept(struct model *m, struct thread *t);

/* Makes t the G running on P c, with the fewest events: preempts it where the model has it
 * running, readies it if the model has it blocked, stops whatever else runs on c (left
 * unseen: model_stop_unseen). The caller
 * counts the stale switch, if any; the other repairs are counted here. */
int model_run_here(struct model *m, uint32_t c, struct thread *t);

/* Whether t can be started on idle c as its expected first run there: runnable on a CPU the
 * model does not know, or in a state the /proc scan read after the current record. */
bool model_placeable(const struct model *m, uint32_t c, const struct thread *t);

/* Makes t the G running on c, for a record the kernel writes only while t runs there (fork,
 * exec, syscall entry, annotation): started there if that is its first run; otherwise a switch
 * record was lost, and t is moved there (counted as a foreign record). A wakeup kept for t's
 * next switch-out is dropped (counted moot): it was of a sleep t gave up. */
int model_make_current(struct model *m, uint32_t c, struct thread *t);

/* A thread the model cannot find running ends: the housekeeping P runs it for no time and
 * ends it there, after preempting it where the model has it running (counted: exit-unknown,
 * docs/model.md); only a running G can end (docs/format.md §6.3). */
int model_end_elsewhere(struct model *m, struct thread *t);

/* ---- what holds a CPU when no recorded thread does: stand-ins (docs/model.md) ---- */

/* CPU c is held from now on by kind (enum lx_occupant_kind): the stand-in of that kind runs
 * there, named after the holder last named there (none for LX_OCC_IDLE). A stand-in already
 * running there of another kind stops first; so does one when a thread starts there
 * (model_go_start). Nothing starts while a recorded thread runs there. */
int model_hold(struct model *m, uint32_t c, uint8_t kind);

/* The holder of CPU c of kind (not LX_OCC_IDLE) is a thread of process pid named comm; the
 * stand-in of that kind running there takes the name. */
int model_hold_name(struct model *m, uint32_t c, uint8_t kind, uint32_t pid, const char *comm);

/* A trigger fired now: msg marks it on the thread running on P p (NULL: on lxtrace's own
 * goroutine, model_log), then on_trigger hears of it as f, given its time here. */
int model_fire(struct model *m, uint32_t p, struct thread *t, const char *msg, size_t len,
	       struct trigger_fired *f);

/* Running t on P p returned from its syscall: the log that says so where the format has no
 * event for it (key LXTRACE_SYSRET_KEY, empty, at the syscall's stack). */
int model_sysret_log(struct model *m, uint32_t p, struct thread *t);

/* lxtrace's goroutine wakes on the housekeeping P, logs msg under key and sleeps again:
 * UserLog needs a running G with a stack (docs/format.md §10.3). */
int model_log(struct model *m, uint64_t key, const char *msg);

/* ---- the heap counter: with opts.rss, the sum of the resident memory of the traced
 * processes, each process's latest LX_REC_RSS value ---- */

/* Process pid now has `pages` resident (0: none): the sum moves by the difference. */
int model_set_rss(struct model *m, uint32_t pid, uint64_t pages);

/* ---- threads ---- */

/* Gives t a fresh generation (when its goid was used) and the identity of the process
 * pid/comm of program prog (idents__get); the caller writes its GoCreate. */
int model_rebirth(struct model *m, struct thread *t, uint32_t pid, const char *comm,
		  const char *prog);

/* Names t by the identity of process pid/comm of program prog (idents__get), which t holds
 * from now on, letting go of the one it had. 0 or -errno. */
int model_name(struct model *m, struct thread *t, uint32_t pid, const char *comm,
	       const char *prog);

/* t is reaped (THREAD_REAPED): its entry leaves the table after the current record. */
void model_reap(struct model *m, struct thread *t);

/* What t's process kept for its stacks goes, if t's exit ended that process (exit_image). */
void model_forget_exit_image(struct model *m, struct thread *t);

/* t has exited (THREAD_EXITED): its entry leaves the table at its final switch-out, or
 * EXITED_KEEP_NS after the exit when that never comes (a target mode: the process left the
 * targets at its exit). */
void model_exited(struct model *m, struct thread *t);

/* Longer than any record about an exited thread can follow its exit (its final switch-out
 * follows within microseconds, and records come in time order). */
#define EXITED_KEEP_NS 1000000000ull

struct exited {
	struct thread *t;
	uint64_t ts;
	uint32_t tid, gen;
};

/* Removes the entries of the threads reaped by the record just handled (still reaped), and
 * the identities no thread names any more. */
void model_remove_reaped(struct model *m);

/* The table entry of tid, added when absent; NULL with *err = -ENOMEM. */
struct thread *model_entry(struct model *m, uint32_t tid, int *err);

/* Whether pt is a thread the init phase leaves out: exited, the recorder's own or its
 * helper's (whose records the BPF side leaves out too). */
bool model_left_out(const struct model *m, const struct procscan_thread *pt);

/* Thread t, just born with new_stk, found asleep as pt says: created, run and blocked on the
 * housekeeping P at the stack m->rs (its syscall alone when NULL), which is then cleared. */
int model_found_asleep(struct model *m, struct thread *t, uint64_t new_stk,
		       const struct procscan_thread *pt);

/* The stack read for tid's wakeup while it slept (model__late_stacks) and *pid, or NULL. */
const struct lx_stack *model_late_stack(const struct model *m, uint32_t tid, uint32_t *pid);

/* Thread tid, unknown to the model, woken at ts: created, then blocked on the housekeeping P
 * at the stack read while it slept (model__late_stacks) when that read came before ts; NULL
 * (*err 0) when there is none. */
struct thread *model_late_found(struct model *m, uint32_t tid, uint64_t ts, int *err);

/* model__free's: the stacks kept for wakeups. */
void model_late_free(struct model *m);

/* The live thread a record is about, created when unknown; NULL (and *err 0) when the record
 * is to be ignored: the idle task, or a thread between its exit and its last switch. */
struct thread *model_live(struct model *m, uint32_t tid, int *err);

#endif
