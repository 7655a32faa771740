/* model_impl.h - what the model's own files (user/model*.c) share: the model's state and the
 * helpers that write events and bring the model to what a record needs. Nothing outside
 * user/model*.c includes it; everyone else uses user/model.h.
 */
#ifndef LXTRACE_USER_MODEL_IMPL_H
#define LXTRACE_USER_MODEL_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/lxtrace.h"
#include "format/writer.h"
#include "user/model/model.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"

struct u64map;
struct idents;
struct annotations;
struct callstacks;

struct model {
	struct gt_writer *w;
	uint32_t ncpus;
	uint32_t hk;			/* housekeeping P: ncpus */
	enum model_syscalls syscalls;
	char *proc_root;
	bool (*keep)(void *ctx, const struct procscan_thread *t);
	void *keep_ctx;
	bool rss;
	struct u64map *rss_pages;	/* pid -> resident pages, for the processes that have some */
	uint64_t rss_total;		/* their sum */
	uint64_t page_size;
	struct threads *threads;
	struct idents *idents;
	struct annotations *ann;
	struct callstacks *cs;		/* NULL unless records carry call stacks */
	const struct lx_stack *rs;	/* the call stack the current record carries, or NULL */
	struct thread **cur;		/* per P: the G running there per the model, or NULL */
	uint64_t now;			/* time of every event written for the current record */
	uint64_t scan_ts;		/* CLOCK_MONOTONIC when the /proc scan ended */
	uint64_t lx_seq;		/* seq of lxtrace's goroutine, which sleeps between logs */
	uint64_t key_lost, key_exec;	/* UserLog key strings */
	int err;			/* sticky: the first error, after which nothing is written */
	bool started, finished;
	struct model_stats st;
};
/* Counts a repair of kind r. */
void model_repair(struct model *m, enum model_repair r);

/* Writes event t with up to three arguments on P p at m->now. */
int model_emit(struct model *m, uint32_t p, enum gt_type t, uint64_t a0, uint64_t a1, uint64_t a2);

/* The stack of t in syscall nr (-1: none) for an event on P p: the call stack the current
 * record took of t when it has one, else its identity's. */
int model_thread_stack(struct model *m, uint32_t p, struct thread *t, int nr, uint64_t *stk);

/* Makes t the G running on c, for a record the kernel writes only while t runs there: a lost
 * switch record is repaired (counted as a foreign record). */
int model_make_current(struct model *m, uint32_t c, struct thread *t);

/* The live thread a record is about, created when unknown; NULL (and *err 0) when the record
 * is to be ignored. */
struct thread *model_live(struct model *m, uint32_t tid, int *err);

/* The records of model_user.c and model_sample_rss.c; each returns 0 or -errno. */
int model_on_user(struct model *m, const struct lx_user *u);
int model_on_sample(struct model *m, const struct lx_sample *s);
int model_on_rss(struct model *m, const struct lx_rss *r);

/* Process pid now has `pages` resident (0: none); 0 or -ENOMEM. */
int model_set_rss(struct model *m, uint32_t pid, uint64_t pages);
/* Resident pages of process pid from proc_root, 0 when unreadable. */
uint64_t model_statm_rss(const struct model *m, uint32_t pid);

#endif
