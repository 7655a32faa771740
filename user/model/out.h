/* out.h - the model's output: one call per fact of the model, behind which either encoder
 * writes it (docs/format.md §18.8). model_out_go119 writes go1.19 events on Ps as the model
 * always has (format/go119/writer.h); model_out_go123 writes the go1.23 format, CPUs as Ps and each
 * thread a goroutine and an M (format/go123/writer.h). Private to user/model/.
 *
 * The core (core.c) changes the model's state and then calls one of these, at m->now; the
 * calls change nothing of the model but what only their format has (m->now in the 1.19 init
 * phase, which gives each of its events a tick of its own). Stacks and strings are ids of
 * m->tables (format/tables.h), which the go1.19 side writes into the P's batch and the go1.23 side
 * looks up by content. Threads are the model's (threads.h): the go1.19 side writes their goid
 * and seq, the go1.23 side names them by tid.
 */
#ifndef LXTRACE_USER_MODEL_OUT_H
#define LXTRACE_USER_MODEL_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/wire.h"

struct model;
struct thread;

struct model_out {
	/* The init phase: lxtrace's own goroutine, asleep on the housekeeping P at stk; a thread
	 * alive at the start, created at new_stk and runnable (wait GT_EV_NONE), or blocked by
	 * event wait in syscall nr (-1: none); Go 1.19's Gomaxprocs; P p started or stopped
	 * (nothing in go1.23, where a P is taken by the thread that runs on it). */
	int (*lx_found)(struct model *m, uint64_t stk);
	int (*found)(struct model *m, struct thread *t, uint64_t new_stk, enum gt_type wait,
		     int nr);
	int (*gomaxprocs)(struct model *m);
	int (*proc)(struct model *m, uint32_t p, bool start);
	/* t is created runnable by what runs on P p (the creator's stack creator_stk). */
	int (*create)(struct model *m, uint32_t p, struct thread *t, uint64_t new_stk,
		      uint64_t creator_stk);
	/* Runnable t runs on P p (t->seq: its GoStart's seq). */
	int (*run)(struct model *m, uint32_t p, struct thread *t);
	/* Running t left P p by ev: GoPreempt, GoSched, GoEnd, or a block (GoBlock, GoBlockSync,
	 * GoBlockSelect, GoSleep) at stk in syscall nr (-1: none, MODEL_NR_UNSEEN: a switch-out
	 * the kernel did not report). */
	int (*stop)(struct model *m, uint32_t p, struct thread *t, enum gt_type ev, uint64_t stk,
		    int nr);
	/* Running t left P p blocked inside a syscall at stk, whose entry was its latest event
	 * when begun. */
	int (*sysblock)(struct model *m, uint32_t p, struct thread *t, uint64_t stk, bool begun);
	/* Blocked t (t->state: waiting, or in a syscall) is woken from P p at stk. */
	int (*ready)(struct model *m, uint32_t p, struct thread *t, uint64_t stk);
	/* old, running on c, became a new image: t (old itself, or the tid it goes on under) is
	 * its new goroutine, created at new_stk by old at stk, and runs on c. */
	int (*exec)(struct model *m, uint32_t c, struct thread *old, struct thread *t,
		    uint64_t new_stk, uint64_t stk);
	/* Running t entered a syscall at stk (--syscalls=all), and (m->sysrets) returned from
	 * it: on P p, or (a return never seen, MODEL_REPAIR_NO_SYSRET) at its next entry. */
	int (*syscall)(struct model *m, uint32_t p, struct thread *t, uint64_t stk);
	int (*sysret)(struct model *m, uint32_t p, struct thread *t);
	/* User annotations of t on P p: ev is UserTaskCreate (a0 task, a1 parent, a2 name),
	 * UserTaskEnd (a0 task) or UserRegion (a0 task, a1 0: begin, 1: end, a2 name). */
	int (*user)(struct model *m, uint32_t p, struct thread *t, enum gt_type ev, uint64_t a0,
		    uint64_t a1, uint64_t a2, uint64_t stk);
	/* A log of t on P p, or (lx_log) of lxtrace's goroutine, woken for it. */
	int (*log)(struct model *m, uint32_t p, struct thread *t, uint64_t task, uint64_t key,
		   uint64_t stk, const char *msg, size_t len);
	int (*lx_log)(struct model *m, uint64_t key, const char *msg);
	/* A CPU sample on P p of t (NULL: none known) at stk. */
	int (*sample)(struct model *m, uint32_t p, struct thread *t, uint64_t stk);
	/* The heap counter, set on P p. */
	int (*heap)(struct model *m, uint32_t p, uint64_t bytes);
	/* Everything written to the file. */
	int (*flush)(struct model *m);
};

/* A block the kernel did not report (model_stop_unseen). */
#define MODEL_NR_UNSEEN (-2)

extern const struct model_out model_out_go119, model_out_go123;

#endif
