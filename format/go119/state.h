/* state.h - the trace state tracker: fed a trace's events, it knows at any point what the
 * parsers would know there: each goroutine's state (running on which P, runnable, waiting and
 * why, blocked in a syscall), each P's, the open user tasks and regions, and the GC phases.
 *
 * Its users: `lxtrace repair` closes what a cut file leaves open (format/go119/close.h); `lxtrace
 * cut` writes the state at a window's start as an init phase; the flight recorder keeps the
 * state at the start of its in-memory window by feeding it the batches that leave the window.
 *
 * Order: events must come in the order of each goroutine's and each P's own transitions. The
 * file order of a trace lxtrace wrote is such an order (its writer puts a batch after the
 * batches holding the causes of its events, format/go119/writer.h), and so is time order. A
 * transition the state does not allow (a start of a goroutine that is not runnable, ...) is
 * applied anyway, the way the event says, and reported: gt_state__event returns -EPROTO and
 * the first such problem is kept, with its offset, for a one-line message. So is a transition
 * the parsers' merge would place elsewhere than its order says: one earlier in time than the
 * previous transition of its goroutine, of the GC or of its task (they merge the Ps by time,
 * docs/format.md §7), and the events lxtrace cannot place at all (the Local forms, which
 * carry no sequence number) or that Go 1.23 refuses (FutileWakeup).
 *
 * Memory follows what is open (live goroutines, started Ps, open tasks and regions), never
 * the number of events. docs/format.md §14.
 */
#ifndef LXTRACE_FORMAT_GO119_STATE_H
#define LXTRACE_FORMAT_GO119_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/reader.h"

enum gt_gstate {
	GT_GS_RUNNABLE = 1,	/* created, preempted, yielded, unblocked, back from a syscall */
	GT_GS_RUNNING,		/* on P `p` */
	GT_GS_WAITING,		/* blocked (`why`: GoBlock*, GoSleep, GoWaiting) */
	GT_GS_SYSCALL,		/* blocked in a syscall (`why`: GoSysBlock or GoInSyscall) */
};

struct gt_region {
	uint64_t task, name, stk;	/* the UserRegion start's task, name string and stack */
};

struct gt_gstat {
	uint64_t id;
	uint8_t state;		/* enum gt_gstate */
	uint8_t why;		/* the type of the event that gave it its state */
	bool syscall;		/* RUNNING: its latest event is a GoSysCall (which may block) */
	bool mark_assist;	/* in a GC mark assist */
	int64_t p;		/* RUNNING: its P */
	uint64_t seq;		/* what its next start, unblock or syscall exit carries */
	uint64_t name_stk;	/* its GoCreate's new-goroutine stack (its name), 0 if unknown */
	uint64_t stk;		/* stack of the event that gave it its state (RUNNING: of its
				 * GoSysCall when `syscall`); 0 when none */
	uint64_t label;		/* RUNNING after GoStartLabel: the label string */
	uint64_t since;		/* time of that event */
	uint64_t created;	/* time of its GoCreate */
	size_t nregions;
	const struct gt_region *regions;	/* open regions, outermost first */
};

struct gt_pstat {
	int64_t id;
	bool started;
	bool sweep;		/* between GCSweepStart and GCSweepDone */
	uint64_t thread;	/* its last ProcStart's thread */
	uint64_t g;		/* the goroutine running on it, 0 for none */
	uint64_t since;		/* time of its last ProcStart or ProcStop */
};

struct gt_task {
	uint64_t id, parent, name, stk;	/* as UserTaskCreate gave them */
	uint64_t g;			/* the goroutine that created it */
	uint64_t since;
	int64_t p;			/* where */
};

struct gt_gcstat {
	bool gc;		/* between GCStart and GCDone */
	bool stw;		/* between GCSTWStart and GCSTWDone */
	uint64_t gc_seq;	/* the sequence number the next GCStart carries */
	uint64_t gc_stk;	/* the open GC's stack */
	uint64_t stw_kind;
	int64_t stw_p;		/* the P that stopped the world */
	bool has_heap_alloc, has_heap_goal;
	uint64_t heap_alloc, heap_goal;	/* latest values */
	bool init_done;		/* a Gomaxprocs was seen (the end of Go 1.23's init phase) */
	uint64_t init_ts;	/* the time of the first one */
	uint64_t gomaxprocs;
};

struct gt_state_stats {
	uint64_t events;	/* applied */
	uint64_t first_ts, last_ts;	/* over every event, samples included; 0 when none */
	uint64_t max_goid;	/* the largest goroutine id seen: larger ones are free */
	int64_t max_p;		/* the largest P id seen, -1 when none */
	uint64_t problems;	/* events the state did not allow */
};

struct gt_state;

/* NULL with errno set. */
struct gt_state *gt_state__new(void);

/* Applies one event (as the reader decodes it: e->g is the goroutine it concerns). 0; -EPROTO
 * when the state did not allow it (applied all the same; gt_state__problem says what);
 * -ENOMEM. */
int gt_state__event(struct gt_state *s, const struct gt_event *e);

/* Applies every event r reads to the end of its input, but those at `before` or later. The
 * reader's verdict: 0 when its input ended well, else its error (gt_reader__error), or
 * -ENOMEM. Problems of the state are counted, not returned (gt_state__stats). */
int gt_state__replay(struct gt_state *s, struct gt_reader *r, uint64_t before);

/* The next event of r that s allows, applied: 1, 0 at the end of a good file, or a negative
 * errno on a bad file or event, with one line in err saying why (the reader's message, or the
 * problem as Go's parsers would refuse it: -EPROTO). What `lxtrace dump` prints and `lxtrace
 * report` and `pprof` read, so they refuse the same files. */
int gt_state__next(struct gt_state *s, struct gt_reader *r, struct gt_event *e, char *err,
		   size_t errlen);

/* Applies the n events ev (a trace put in Go 1.19's order, format/go119/order.h): 0, or a
 * negative errno with one line in err (the first problem as Go's parsers would refuse it:
 * -EPROTO). The same verdict as gt_state__next's, for a trace read whole: `lxtrace dump`,
 * `report` and `pprof` refuse the same files in either way. */
int gt_state__check(const struct gt_event *ev, size_t n, char *err, size_t errlen);

/* Decodes and applies whole batches kept in memory (as the writer writes them: a Batch
 * header, its records, strings and stacks), one call per batch or more. The state keeps the
 * dictionary they define (gt_state__dict). 0; -EINVAL on a malformed batch and -EPROTO on a
 * problem (gt_state__problem says which); -ENOMEM. */
int gt_state__feed(struct gt_state *s, const void *bytes, size_t len);
/* The strings and stacks gt_state__feed has seen; NULL before the first feed. */
const struct gt_dict *gt_state__dict(const struct gt_state *s);

/* Drops from gt_state__feed's dictionary the definitions of these string and stack ids,
 * which the trace's writer forgot and names in no batch after those fed so far
 * (format/go119/writer.h, `forgot`). Ids the state still refers to (a goroutine's, task's or
 * region's stack or name, a label, a string that a stack left names) stay until a later call
 * finds them unused. 0 or -ENOMEM. */
int gt_state__forget(struct gt_state *s, const uint64_t *strings, size_t nstrings,
		     const uint64_t *stacks, size_t nstacks);

/* "offset N: ..." for the first problem (or malformed batch), "" when none. */
const char *gt_state__problem(const struct gt_state *s);

/* The live goroutines, in no particular order; valid until the next event. */
size_t gt_state__ngoroutines(const struct gt_state *s);
const struct gt_gstat *gt_state__goroutines(const struct gt_state *s);
/* NULL when g is not live. */
const struct gt_gstat *gt_state__goroutine(const struct gt_state *s, uint64_t g);

/* Every P seen, in the order first seen; valid until the next event. */
size_t gt_state__nprocs(const struct gt_state *s);
const struct gt_pstat *gt_state__procs(const struct gt_state *s);
/* NULL when P p was never seen. */
const struct gt_pstat *gt_state__proc(const struct gt_state *s, int64_t p);

/* The open tasks, in no particular order; valid until the next event. */
size_t gt_state__ntasks(const struct gt_state *s);
const struct gt_task *gt_state__tasks(const struct gt_state *s);

const struct gt_gcstat *gt_state__gc(const struct gt_state *s);
void gt_state__stats(const struct gt_state *s, struct gt_state_stats *out);

/* A copy of s that goes its own way (fed the events of a window that are still before its
 * start, while s goes on with the stream). The copy does not share gt_state__feed's
 * dictionary: look ids up in the original's. NULL with errno set. */
struct gt_state *gt_state__clone(const struct gt_state *s);

/* Accepts NULL. */
void gt_state__free(struct gt_state *s);

#endif
