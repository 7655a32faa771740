/* writer.h - streaming encoder of go1.23 execution traces ("go 1.23 trace"), driven by what
 * happens to Linux threads on CPUs: each thread is an M and a goroutine, both of its tid
 * until an exec gives it a goroutine of another id, and each CPU is a P (docs/format.md §18).
 *
 * The file is a series of generations. A generation holds each M's batches, its own string
 * and stack tables, its CPU samples and its Frequency; it ends when it has lasted gen_ticks or
 * holds gen_bytes of tables and unwritten batches, and the next one opens with the status of
 * every thread and of every P a thread holds. Memory is gen_bytes of what is not written yet,
 * plus the buffer of each thread that filled a batch in the current generation (freed at its
 * end), whatever the trace's length.
 *
 * Crash-safety invariant: every prefix of the output that ends on a generation boundary is a
 * trace Go 1.23's parser accepts. A write error cuts the file back to the last boundary
 * (regular files; ftruncate: else stats.torn) and fails the writer: every later call returns
 * the error. stats.bytes and stats.batches count what the file keeps. A failed allocation
 * after a call has begun to write fails the writer the same way (-ENOMEM): the events of one
 * fact go out whole or not at all.
 *
 * The calls say what a thread did at time ts (ticks, > 0, non-decreasing across calls); an
 * event at the time of the one before is written a tick after it (§18.4). Each
 * checks the transition against the encoder's state of the thread and its CPU and returns
 * -EINVAL (-EBUSY for a CPU held by another thread) without writing anything when it is not
 * one the parser accepts: the encoder never repairs, the caller (the model) does. Strings
 * and stacks are given by content and interned per generation; a string longer than
 * GO123_MAX_STRING or a stack deeper than GO123_MAX_FRAMES is cut and counted (stats.cut).
 */
#ifndef LXTRACE_FORMAT_GO123_WRITER_H
#define LXTRACE_FORMAT_GO123_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go123/wire.h"
#include "format/frame.h"

struct go123_writer;

/* A whole generation as the writer ends it: its batches as bytes (to follow GO123_HEADER in a
 * file, after any other whole generations), the times of its first and last call, its events. */
struct go123_generation {
	uint64_t gen;
	uint64_t first_ts, last_ts;
	uint64_t events;
	const uint8_t *data;
	size_t len;
};

/* Takes one generation; its bytes are the writer's again when it returns. 0 or a negative
 * errno, which fails the writer like a write error. */
typedef int (*go123_generation_sink)(void *ctx, const struct go123_generation *g);

struct go123_writer_opts {
	size_t sz;		/* sizeof(struct go123_writer_opts), for growth */
	int fd;			/* output; the writer does not close it */
	/* Generations go to sink instead (fd is then unused and no header is written): each is
	 * held in memory until it ends, and counts toward gen_bytes. */
	go123_generation_sink sink;
	void *sink_ctx;
	uint32_t nprocs;	/* CPUs (P ids) are 0 .. nprocs-1 */
	uint64_t frequency;	/* ticks per second; > 0 */
	size_t batch_size;	/* an M's batch's bytes; 0 or above GO123_MAX_BATCH: the most */
	uint64_t gen_ticks;	/* a generation's longest duration; 0: one second */
	size_t gen_bytes;	/* a generation's bytes in memory; 0: GO123_WRITER_GEN_BYTES */
};

#define GO123_WRITER_GEN_BYTES (16u << 20)

/* A call stack, leaf first; frames' strings are copied. NULL or n = 0: none. */
struct go123_stack {
	const struct gt_frame *frames;
	size_t n;
};

/* How a running thread leaves its CPU. */
enum go123_leave {
	GO123_PREEMPTED,		/* still runnable: GoStop */
	GO123_BLOCKED,		/* waits for a wakeup: GoBlock with a reason */
};

struct go123_writer_stats {
	uint64_t events;	/* timed events, CPU samples included */
	uint64_t batches;
	uint64_t bytes;		/* in the file, header included, in whole generations (with a
				 * sink: the generations it took) */
	uint64_t generations;	/* complete in the file */
	uint64_t strings, stacks;	/* table entries written, over all generations */
	uint64_t cut;		/* strings and stacks cut to the parser's limits */
	uint64_t lost;		/* events of the generation a write error cut away */
	/* After a write error on a file that cannot be cut back (a pipe; ftruncate failed):
	 * the bytes past the last generation boundary, where the file should end. 0 normally,
	 * and always with a sink. */
	uint64_t torn;
};

/* Writes the header. NULL with errno set on failure (EINVAL for bad options). */
struct go123_writer *go123_writer__new(const struct go123_writer_opts *opts);

/* A thread that exists when it is first seen, in status st: RUNNING or SYSCALL on cpu (SYSCALL
 * may have cpu -1: blocked in the kernel, off any CPU), RUNNABLE or WAITING (cpu -1; stk: where
 * it waits, shown from the first generation on). In the first generation this is a GoStatus;
 * later, the thread is born in a syscall on its own M and brought to st (WAITING takes an idle
 * CPU for an instant, to block there with reason: -EBUSY when none is idle). */
int go123_writer__thread_found(struct go123_writer *w, uint64_t ts, uint64_t tid,
			     enum go123_gstatus st, int32_t cpu, const char *reason,
			     const struct go123_stack *stk);

/* Thread tid is created, runnable, by parent (GoCreate on the parent's M with the parent's
 * stack stk, when the parent runs on a CPU; else as thread_found RUNNABLE), starting at start:
 * Go 1.23 names a goroutine by the root frame of its first stack, this one. */
int go123_writer__thread_new(struct go123_writer *w, uint64_t ts, uint64_t parent, uint64_t tid,
			   const struct go123_stack *stk, const struct go123_stack *start);

/* Thread tid, running (or in a syscall), exits; its M's batch is written. */
int go123_writer__thread_exit(struct go123_writer *w, uint64_t ts, uint64_t tid);

/* Thread tid, running (or in a syscall, execve) on a CPU, becomes a new program: its goroutine
 * ends and goroutine goid (one no thread has: outside the tids, which are the others' ids)
 * begins on the same M, created at stk, starting at start (thread_new). */
int go123_writer__exec(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t goid,
		     const struct go123_stack *stk, const struct go123_stack *start);

/* Thread tid gets CPU cpu: runnable, or in a syscall (then it stays in the syscall until
 * syscall_end). A CPU another thread left inside a syscall is stolen from it (ProcSteal). */
int go123_writer__run(struct go123_writer *w, uint64_t ts, uint32_t cpu, uint64_t tid);

/* Thread tid leaves its CPU: preempted (reason NULL: "preempted") or blocked (reason, e.g.
 * "futex"), at stk. A thread in a syscall keeps it and leaves the CPU to be stolen: how and
 * reason are then not written (the syscall's stack says where it waits). */
int go123_writer__leave(struct go123_writer *w, uint64_t ts, uint64_t tid, enum go123_leave how,
		      const char *reason, const struct go123_stack *stk);

/* Thread waker (0: none known, e.g. an interrupt) wakes thread tid at stk. A thread that is
 * not waiting (running, runnable, or in a syscall) needs no wakeup: nothing is written. */
int go123_writer__wake(struct go123_writer *w, uint64_t ts, uint64_t waker, uint64_t tid,
		     const struct go123_stack *stk);

/* Thread tid, running on a CPU, enters a syscall at stk / returns from it (on a CPU). */
int go123_writer__syscall_begin(struct go123_writer *w, uint64_t ts, uint64_t tid,
			      const struct go123_stack *stk);
int go123_writer__syscall_end(struct go123_writer *w, uint64_t ts, uint64_t tid);

/* A CPU sample of thread tid (0: none) on cpu. Any time order; kept in the generation of the
 * call. */
int go123_writer__cpu_sample(struct go123_writer *w, uint64_t ts, uint64_t tid, uint32_t cpu,
			   const struct go123_stack *stk);

/* User annotations of thread tid, which must hold a CPU. Regions nest per thread. */
int go123_writer__task_begin(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t task,
			   uint64_t parent, const char *name, const struct go123_stack *stk);
int go123_writer__task_end(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t task,
			 const struct go123_stack *stk);
int go123_writer__region(struct go123_writer *w, uint64_t ts, uint64_t tid, bool begin,
		       uint64_t task, const char *name, const struct go123_stack *stk);
int go123_writer__log(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t task,
		    const char *key, const char *value, size_t value_len,
		    const struct go123_stack *stk);

/* A counter (the heap of Go's viewer: lxtrace's RSS) set by thread tid, holding a CPU. */
int go123_writer__heap(struct go123_writer *w, uint64_t ts, uint64_t tid, uint64_t bytes);

/* Ends the current generation: everything taken so far is in the file (or went to the sink),
 * which ends on a generation boundary. The next call opens a new generation. The first flush
 * writes one even when nothing happened: a file of the header alone does not parse. */
int go123_writer__flush(struct go123_writer *w);

/* The generation being filled (1, 2, ...). */
uint64_t go123_writer__generation(const struct go123_writer *w);

void go123_writer__stats(const struct go123_writer *w, struct go123_writer_stats *out);

/* Frees the writer without flushing. Accepts NULL. */
void go123_writer__free(struct go123_writer *w);

#endif
