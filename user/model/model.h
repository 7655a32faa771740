/* model.h - the shadow state of every CPU and thread. It turns the kernel's records, presented
 * in time order, into Go trace events that both Go parsers accept, repairing (and counting)
 * whatever the record stream makes inconsistent: lost records, unknown threads, wakeups of
 * running threads, exits of threads never seen.
 */
#ifndef LXTRACE_USER_MODEL_H
#define LXTRACE_USER_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lxtrace.h"
#include "bpf/python.h"
#include "format/go119/writer.h"
#include "user/proc/procscan.h"
#include "user/proc/syscalls.h"

struct model;
struct foreign_log;
struct cfi_loader;
struct python;
struct trigger;
struct trigger_fired;
struct go123_writer;

/* A goroutine id the model never gives (a thread's is its tid, never 0, with the tid's
 * generation above bit 32): for events written about the file by others, such as the note
 * that closes it on a full disk (format/go119/close.h). */
#define MODEL_SPARE_GOID (1ull << 32)
/* The goroutines that stand for what holds a CPU when no recorded thread does (docs/model.md,
 * "What holds a CPU"): on CPU c, one for untraced programs (self 0) and one for lxtrace's own
 * threads (self 1). Their ids are no thread's (a tid stays below 2^22, its generation above
 * bit 32) nor lxtrace's goroutine's, and the same in both formats. */
#define MODEL_STANDIN_GOID(c, self) (0xfffffffeull - 2 * (uint64_t)(c) - (self))
#define MODEL_STANDIN_MIN 0x80000000ull

/* Whether goid is a stand-in's, and then whether it stands for lxtrace's own threads. */
static inline bool model__standin(uint64_t goid)
{
	return goid >= MODEL_STANDIN_MIN && goid < 0xffffffffull;
}

static inline bool model__standin_self(uint64_t goid)
{
	return model__standin(goid) && (goid & 1);
}

/* How long model__prepare waits for unwind rows: a large library's on a busy machine; for
 * the stacks of the whole machine's threads, at most 1 s (those still without rows then end
 * at that binary, marked, as a late walk does). */
#define MODEL_ROWS_NS (5000 * 1000 * 1000ull)
#define MODEL_MACHINE_ROWS_NS (1000 * 1000 * 1000ull)
/* How long model__prepare may read ahead: a delay of the start a person does not mind. */
#define MODEL_PREPARE_NS 500000000ull

enum model_syscalls {
	MODEL_SYSCALLS_BLOCKING = 0,	/* only syscalls the thread blocked in (default) */
	MODEL_SYSCALLS_ALL,		/* every syscall entry too, from LX_REC_SYSCALL */
	MODEL_SYSCALLS_NONE,
};

struct model_opts {
	size_t sz;			/* sizeof(struct model_opts) */
	/* Where events go, one of the two: a go1.19 writer, or a go1.23 one (docs/format.md
	 * §18). Either's nprocs is ncpus + 1. */
	struct gt_writer *writer;
	struct go123_writer *writer2;
	uint32_t ncpus;			/* possible CPUs: P 0..ncpus-1; P ncpus is housekeeping */
	enum model_syscalls syscalls;
	/* With MODEL_SYSCALLS_ALL: the records carry each syscall's return too
	 * (LX_REC_SYSCALL_EXIT), so a syscall lasts from its entry to its return in the formats
	 * that can say so (go1.23). Without, an entry is a syscall of no length there. */
	bool sysrets;
	const char *proc_root;		/* "/proc" unless a test substitutes one */
	/* The threads alive at start that the init phase creates: all when NULL, else those it
	 * returns true for (a target's: records of the others never come). */
	bool (*keep)(void *ctx, const struct procscan_thread *t);
	void *keep_ctx;
	/* The heap counter shows the resident memory of the kept processes (LX_REC_RSS records),
	 * starting from what proc_root/PID/statm says at start. */
	bool rss;
	/* Each wakeup's enqueue follows it (LX_REC_ENQUEUE, sched_wakeup): a woken thread becomes
	 * runnable there, where the kernel's run delay starts, not at sched_waking. */
	bool enqueue;
	bool stacks;			/* records carry call stacks (samples, --stacks): symbolize
					 * them (user/stacks/callstacks.h) */
	uid_t trusted_uid;		/* the user who gets the trace (SUDO_UID), whose binaries
					 * are read as root's are; 0 or (uid_t)-1 for none */
	/* The flight recorder's triggers (user/flight/trigger.h; read, must outlive the model),
	 * checked at each thread's start against the times that start ends. A firing, and each
	 * LX_REC_TRIGGER record, is marked in the trace at that moment (UserLog key
	 * "lxtrace.trigger") and told to on_trigger (may be NULL) with what fired on which
	 * thread. */
	const struct trigger *triggers;
	size_t ntriggers;
	void (*on_trigger)(void *ctx, const struct trigger_fired *f);
	void *trigger_ctx;
	/* The tracer's helper process (its file worker), left out of the threads alive at start
	 * as the tracer is: the BPF side records neither. 0: none. */
	uint32_t helper_pid;
};

enum model_repair {
	MODEL_REPAIR_UNKNOWN_THREAD,	/* seen running or woken, never created */
	MODEL_REPAIR_MIGRATED,		/* started on one CPU while modelled running on another */
	MODEL_REPAIR_STALE_SWITCH,	/* switched out while not modelled running there */
	MODEL_REPAIR_EXIT_UNKNOWN,	/* exit of a thread not running per the model */
	MODEL_REPAIR_MISSED_WAKEUP,	/* running while modelled blocked: its wakeup was lost */
	MODEL_REPAIR_FOREIGN,		/* fork, exec or syscall of a thread not running there (a
					 * switch record was lost): the thread is moved there */
	MODEL_REPAIR_TIME_CLAMPED,	/* older than the last event written, or past 2^63: written
					 * at the last event's time */
	MODEL_REPAIR_BAD_RECORD,	/* unknown type, short, CPU or tid out of range: dropped */
	MODEL_REPAIR_TASK_REUSE,	/* a task begun again while live: a fresh trace task */
	MODEL_REPAIR_REGION_NESTING,	/* a region end that is not the innermost: inner regions
					 * ended first, or dropped when it matches none */
	MODEL_REPAIR_STACK_FORGOTTEN,	/* a waker's stack kept for a switch-out that the writer
					 * forgot meanwhile: the unblock has none */
	MODEL_REPAIR_NO_SYSRET,		/* a syscall entry whose return never came (lost) before
					 * the thread's next entry: the syscall ends there */
	MODEL_REPAIR_COUNT,
};

/* Records consumed, by kind as the summary names and orders them (model__kind_name). */
enum model_kind {
	MODEL_KIND_SWITCH,		/* "switches" */
	MODEL_KIND_WAKEUP,		/* "wakeups": of running threads and of new ones */
	MODEL_KIND_FORK,		/* "forks" */
	MODEL_KIND_EXEC,		/* "execs" */
	MODEL_KIND_EXIT,		/* "exits" */
	MODEL_KIND_SYSCALL,		/* "syscalls": entries, with --syscalls=all */
	MODEL_KIND_SYSRET,		/* "syscall returns": with --syscalls=all */
	MODEL_KIND_RSS,			/* "memory": resident memory changes of a target */
	MODEL_KIND_ANNOTATION,		/* "annotations": task, region and log records */
	MODEL_KIND_SAMPLE,		/* "samples" */
	MODEL_KIND_MMAP,		/* "mappings": of code, by traced processes */
	MODEL_KIND_TRIGGER,		/* "trigger requests": lxtrace_trigger() calls, SIGUSR1 */
	MODEL_KIND_RENAME,		/* "renames": threads that took a new name */
	MODEL_KIND_ENQUEUE,		/* "enqueues": woken threads put on a run queue */
	MODEL_KIND_OCCUPANT,		/* "CPU holders": a CPU went to lxtrace, to an untraced
					 * program or idle, with no switch record to say it */
	MODEL_KIND_PYSTACK,		/* "Python stacks": a Python thread's frames, for the
					 * record with a stack after them */
	MODEL_KIND_COUNT,
};

struct model_stats {
	uint64_t records;		/* kernel records consumed */
	uint64_t kinds[MODEL_KIND_COUNT];	/* of which well formed, by kind */
	uint64_t threads;		/* goroutines created, init phase included */
	uint64_t tids_reused;		/* of which under a tid an earlier thread had (pid wrap,
					 * or a thread whose end was missed: exit-unknown) */
	uint64_t threads_held, idents_held;	/* thread entries and identities kept now */
	uint64_t lost;			/* records the kernel could not deliver */
	uint64_t repairs[MODEL_REPAIR_COUNT];
	uint64_t ignored;		/* records about exiting threads or the idle task, enqueues
					 * of wakeups written or dropped already: expected */
	/* Time the CPUs were held by what the trace does not follow, shown by stand-ins:
	 * lxtrace's own threads and its helpers', and (with a target) untraced programs. */
	uint64_t held_self_ns, held_untraced_ns;
	uint64_t wakeups_moot;		/* of a thread not asleep: one that gave its sleep up before
					 * switching out, or was preempted on its way to it */
	/* With opts.enqueue: wakeups written at their enqueue, the time from sched_waking to it
	 * (in no wait for a CPU), its longest, and the wakeups whose enqueue did not come before
	 * the thread ran (its record lost): written at that run. */
	uint64_t enqueued, enqueue_delay_ns, enqueue_delay_max_ns, enqueue_unseen;
	/* Call stacks (all 0 without opts.stacks): stacks looked up, distinct ones symbolized,
	 * trimmed to fit, process images noted, time spent symbolizing. */
	uint64_t stack_lookups, stacks_distinct, stacks_trimmed, images, symbolize_ns;
	uint64_t stacks_shared;		/* callstacks_stats.shared */
	/* callstacks_stats */
	uint64_t binaries, binaries_closed, binaries_over_budget, binaries_reread;
	uint64_t prepared, prepared_dwarf, prepare_ns;	/* binaries read ahead before the start
							 * (with DWARF), and the time */
	/* User walks BPF stopped for lack of rows, finished from the copy of the stack their
	 * record carried (late_walk.h): how many, the frames they gained, the records held for
	 * rows, and those cut short all the same by the copy's end or by rows that did not come
	 * in time. */
	uint64_t late_walks, late_frames, late_held, late_copy_short, late_no_rows;
	/* Stacks written with JIT frames their process's perf map did not name yet, kept to be
	 * named at the end, not kept (memory), named then and their frames, the time that took,
	 * and why the last stack was not defined again (callstacks_stats). */
	uint64_t jit_kept, jit_unkept, jit_dropped, jit_named, jit_frames, jit_ns;
	uint64_t jit_window;	/* of the kept, named in a flight recorder's go1.23 files, summed */
	int jit_err;
	uint64_t copies_refused;	/* callstacks_stats.copies_refused */
	uint64_t stacks_cut;		/* callstacks_stats.cut */
	uint64_t stacks_shed;		/* callstacks_stats.shed: not symbolized (model__shed) */
	uint64_t stacks_unwaited;	/* callstacks_stats.unwaited: not waited for (the same) */
	/* Threads off the CPU at the start whose stack was read but not walked and named within
	 * the start's budget (model__prepare): their blocks name their syscall alone. */
	uint64_t start_stacks_late;
	/* Threads of a target first seen after the start, at their wakeup, shown blocked at the
	 * stack read while they slept (model__late_threads), not repaired. */
	uint64_t late_found;
	/* Python frames (callstacks_stats.py_*): stacks given them and the frames, stacks left
	 * native because a frame could not be named or no evaluation loop held them, stacks
	 * whose outermost Python frames were cut (deeper than the walk keeps). */
	uint64_t py_stacks, py_frames, py_unnamed, py_no_eval, py_deep;
	bool prepared_kernel;			/* kallsyms read ahead too */
};

/* NULL with errno set on failure. */
struct model *model__new(const struct model_opts *opts);

/* Before the programs attach: reads ahead what the first call stacks will need, so that the
 * recording does not pay for it (callstacks__prepare; at most MODEL_PREPARE_NS): kernel
 * symbols when kernel, the binaries of the processes alive now (those opts.keep keeps) when
 * user. First, in one wait of at most MODEL_ROWS_NS (MODEL_MACHINE_ROWS_NS without opts.keep),
 * the unwind rows: with rows (chosen
 * processes that already run: -p, --cgroup) those of the processes' binaries, and those the
 * stacks given by model__start_stacks need to be walked whole. 0 or -errno (proc_root
 * unreadable, out of memory). */
int model__prepare(struct model *m, bool kernel, bool user, bool rows);

/* The threads the init phase will write (those opts.keep keeps, not the recorder's), in *tids
 * (malloc'd) and *n: whose stacks the caller may read for model__start_stacks. */
int model__start_threads(struct model *m, uint32_t **tids, size_t *n);

/* Thread tid's call stack when the recording started and its size in bytes (a struct lx_stack
 * and its copy of the user stack, as records carry them), or NULL; *runnable when the thread
 * was waiting for a CPU then, not asleep; with py, its Python frames read with it (as an
 * LX_REC_PYSTACK record carries them), or NULL. */
typedef const struct lx_stack *(*model_start_stack_fn)(void *ctx, uint32_t tid, bool *runnable,
							size_t *size,
							const struct lx_pystack **py);

/* Before model__start: the init phase blocks each thread found asleep at the stack fn gives
 * (its syscall alone without one), and preempts there each found waiting for a CPU that fn
 * gives a stack (created runnable without one); fn's stacks are read until model__start returns
 * or the next call. */
void model__start_stacks(struct model *m, model_start_stack_fn fn, void *ctx);

/* During the recording, with targets and stacks: of the threads cand (ncand, those in the
 * target now: user/target/members.h), the ones opts.keep keeps, asleep, that the model has
 * never seen (a process moved into the target cgroup while it sleeps, a thread of a -p
 * process the start missed) and that were not offered before, in *tids (malloc'd) and *n,
 * whose stacks the caller reads (as for model__start_stacks) and gives to model__late_stacks;
 * their processes are noted (callstacks__note: their rows wanted, a Python one looked at and,
 * at the caller's python__refresh, its threads read for the walk). The BPF side sends nothing
 * of such a thread until it wakes. 0 or -errno. */
int model__late_threads(struct model *m, const uint32_t *cand, size_t ncand, uint32_t **tids,
			size_t *n);

/* The stacks of the threads model__late_threads gave, through fn, all read before ts, with
 * their Python frames (named now): each is kept until the thread wakes, whose first record, a
 * wakeup after ts, first writes it blocked at that stack, as the init phase writes a thread
 * found asleep. */
void model__late_stacks(struct model *m, model_start_stack_fn fn, void *ctx, uint64_t ts);

/* Writes the init phase at tick ts: every thread alive now (from proc_root), then Gomaxprocs,
 * then the CPUs started. Must precede every record. -EINVAL for a ts past 2^63. */
int model__start(struct model *m, uint64_t ts);

/* Sees a record as soon as it is read, before its turn (capture_opts.on_peek): notes the
 * mappings of a new process image while it still exists. */
void model__peek(struct model *m, const struct lx_rec *r, size_t size);

/* Consumes one record of `size` bytes; records come in non-decreasing ts. -EBUSY: the record
 * is not taken yet, its stack waits for unwind rows (callstacks__ready): deliver it again
 * later, with none after it before. */
int model__record(struct model *m, const struct lx_rec *r, size_t size);

/* The late walks of user stacks take their rows from cfi (NULL: none). */
void model__use_rows(struct model *m, struct cfi_loader *cfi);

/* Python frames are named by py (NULL: none; user/stacks/python.h). */
void model__use_python(struct model *m, struct python *py);

/* Stacks stop waiting for unwind rows (callstacks__stop_waiting): model__record no longer
 * returns -EBUSY. For the recording's end. */
void model__stop_waiting(struct model *m);

/* What the recorder sheds, being behind (user/capture/shed.h, callstacks__shed): waits, no
 * record waits for unwind rows; symbols, new stacks are not symbolized. */
void model__shed(struct model *m, bool waits, bool symbols);

/* Notes that `n` records of CPU cpu were lost before ts; written into the trace as a UserLog. */
int model__lost(struct model *m, uint32_t cpu, uint64_t ts, uint64_t n);

/* Ends the trace at ts: stops every running goroutine and every P, then flushes the writer. */
int model__finish(struct model *m, uint64_t ts);

void model__stats(const struct model *m, struct model_stats *out);

/* Files other users control that the model's symbolizing refused (lib/foreign_file.h), each
 * named once; NULL when records carry no stacks. Valid for the model's life. */
const struct foreign_log *model__refused(const struct model *m);

/* Binaries the model's symbolizing could not read in time, slow or stalled (lib/file_worker.h),
 * named once; empty before model__finish, NULL when records carry no stacks. Valid for the
 * model's life. */
const struct foreign_log *model__unread(const struct model *m);

/* After model__finish, for a file whose encoder could not define its stacks again (go1.23,
 * jit_err -ENOTSUP): the frames, named at the end, of the stack written with PCs pcs[0, n),
 * or NULL (callstacks__late_named). A go123_restack_fn for format/go123/restack.h. */
const struct gt_frame *model__late_named(void *m, const uint64_t *pcs, size_t n);

/* A flight recorder's go1.23 window is written: the kept stacks are named from their perf
 * maps as they stand now, for model__late_named until model__window_done
 * (callstacks__name_window); after model__finish, the end's names serve. The stacks named. */
size_t model__name_window(struct model *m);
void model__window_done(struct model *m);

const char *model__repair_name(enum model_repair r);
const char *model__kind_name(enum model_kind k);

/* Accepts NULL. */
void model__free(struct model *m);

#endif
