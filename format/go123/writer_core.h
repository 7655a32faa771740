/* writer_core.h - the go1.23 encoder's state and what its files share, one concept a file, as
 * Go's own tracer keeps its buffers, strings and stacks apart (runtime/tracebuf.go,
 * tracestring.go, tracestack.go). Private to them: everyone else uses writer.h.
 *  - writer.c: the calls, each a transition of the scheduler state (threads as Ms and
 *    goroutines, CPUs as Ps, sequence numbers) checked, then written; the writer's life;
 *  - writer_gen.c: a generation's end and the next one's start (statuses restated);
 *  - writer_tables.c: a generation's string and stack ids, defined where first used;
 *  - writer_batch.c: bytes into an M's or a table's batch, a batch into the output, and the
 *    writer's failure (the file cut back to the last generation boundary);
 *  - writer_time.c: the file's times (the epoch, times Go's float64 tells apart, no ties).
 * Calls run down this list, never up.
 */
#ifndef LXTRACE_FORMAT_GO123_WRITER_CORE_H
#define LXTRACE_FORMAT_GO123_WRITER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/outq.h"
#include "format/tracemap.h"
#include "format/go123/writer.h"
#include "format/varint.h"

/* Room for one event: its type and up to five varints. */
#define EV_ROOM (1 + 6 * GT_MAX_VARINT_LEN)

/* Bytes waiting to become one batch. */
struct buf {
	uint8_t *data;
	size_t len, cap;
	uint64_t base;		/* time of its first event */
	uint64_t last;		/* time of its last event */
};

struct thr {
	uint64_t tid;		/* its M's id */
	uint64_t g;		/* its goroutine's: the tid until an exec gives it another */
	uint8_t st;		/* enum go123_gstatus */
	int32_t p;		/* the CPU its M holds, or -1 */
	uint64_t seq;		/* its goroutine's sequence number in this generation */
	struct buf m;		/* its M's batch */
};

struct proc {
	uint8_t st;		/* enum go123_pstatus */
	uint64_t holder;	/* tid of the M holding it (RUNNING, SYSCALL) */
	uint64_t seq;
	uint64_t status_gen;	/* generation whose ProcStatus it has */
};

struct go123_writer {
	int fd;
	struct gt_outq *out;	/* whole batches to fd, small ones gathered first; or to whole */
	go123_generation_sink sink;
	void *sink_ctx;
	struct buf whole;	/* with a sink: the generation's batches written so far */
	off_t base;		/* fd's offset at the start; -1: not seekable */
	uint64_t gen_mark;	/* bytes of out written when the current generation began */
	uint32_t nprocs;
	uint64_t freq, gen_ticks;
	size_t batch_size, gen_bytes;
	int err;
	uint64_t gen, gen_start, last_ts;
	uint64_t ev_ts;		/* time of the last event written: each one is later */
	uint64_t epoch;		/* 0, or one tick before the first time given: the file's tick 1 */
	bool open;		/* the generation has begun (statuses written) */
	size_t held;		/* bytes the generation holds in memory */
	uint64_t gen_events;	/* of the current generation */
	uint64_t gen_batches;
	struct thr *thr;
	size_t nthr, cap_thr;
	struct u64map *by_tid;	/* tid -> index in thr + 1 */
	struct u64map *goids;	/* the goroutine ids in use */
	struct proc *procs;
	struct buf nom;		/* statuses bound to no M */
	struct buf strings, stacks, samples;
	struct gt_tracemap *sids, *stkids;
	uint64_t *pcs;		/* scratch: a stack's key */
	struct go123_writer_stats st;
};

/* writer_time.c */

/* The first time given (ts) chooses the file's epoch. */
void go123_writer_epoch(struct go123_writer *w, uint64_t ts);
/* The file's time of ts. */
uint64_t go123_writer_ticks(const struct go123_writer *w, uint64_t ts);
/* The time an event asked at ts is written at: after the last one's, told apart from it. */
uint64_t go123_writer_event_time(struct go123_writer *w, uint64_t ts);

/* writer_batch.c */

/* Fails the writer with err and cuts the file back to the generation's start; returns err. */
int go123_writer_fail(struct go123_writer *w, int err);
/* Room for need more bytes in b: 0 or -ENOMEM (the writer not failed). */
int go123_writer_grow(struct buf *b, size_t need);
/* Writes b as one batch of M m (GO123_NO_THREAD for tables) and empties it. */
int go123_writer_put_batch(struct go123_writer *w, uint64_t m, struct buf *b);
/* Appends entry (len bytes) to a table batch whose first byte is kind. */
int go123_writer_table_add(struct go123_writer *w, struct buf *b, uint8_t kind,
			   const uint8_t *entry, size_t len);
/* Appends a timed event to batch b of M m: type t, then args. */
int go123_writer_ev(struct go123_writer *w, uint64_t m, struct buf *b, uint64_t ts, uint8_t t,
		  const uint64_t *args, unsigned nargs);
/* The output's sink when the writer has one (outq.h): the generation's batches gathered. */
int go123_writer_gather(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr, size_t hlen,
		      const uint8_t *body, size_t blen);

#define EV(w, t, ts, type, ...)                                                        \
	go123_writer_ev((w), (t)->tid, &(t)->m, (ts), (type), (const uint64_t[]){ __VA_ARGS__ }, \
		      sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))
#define EV0(w, t, ts, type) go123_writer_ev((w), (t)->tid, &(t)->m, (ts), (type), NULL, 0)
#define NOM(w, ts, type, ...)                                                          \
	go123_writer_ev((w), GO123_NO_THREAD, &(w)->nom, (ts), (type),                       \
		      (const uint64_t[]){ __VA_ARGS__ },                                 \
		      sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))

/* writer_tables.c: the generation's id of a string (0 for none or empty) or a stack (0 for
 * none), defined in its table when new. */
int go123_writer_string_id(struct go123_writer *w, const char *s, size_t len, uint64_t *id);
int go123_writer_cstring_id(struct go123_writer *w, const char *s, uint64_t *id);
int go123_writer_stack_id(struct go123_writer *w, const struct go123_stack *stk, uint64_t *id);

/* writer_gen.c */

/* Every call starts here: the writer has not failed, time goes on, and the generation is
 * open (a new one when the current one is full). */
int go123_writer_enter(struct go123_writer *w, uint64_t ts);
/* P p is idle and free: states its status first in this generation (-EBUSY when held). */
int go123_writer_idle_proc(struct go123_writer *w, uint64_t ts, uint32_t p);

#endif
