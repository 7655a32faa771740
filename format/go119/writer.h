/* writer.h - streaming encoder of go1.19 execution traces.
 *
 * Events go into per-P batch buffers; a full buffer is written to the file as one batch.
 * Memory grows with the number of Ps and live goroutines, never with the number of events;
 * what the string and stack tables remember is bounded (format/dedup.h): a string or stack
 * unused for a whole generation of its table is forgotten, and defined again if it comes back.
 *
 * Crash-safety invariant: every prefix of the output that ends on a batch boundary is itself
 * a trace both Go parsers accept. The writer keeps it by
 *  - putting the Frequency record in the first batch written;
 *  - writing each string and stack into the batch of its first use, before that use;
 *  - ordering batch writes so that no written batch holds an event whose causes (a G's
 *    creation, block, unblock or start on another P; a string or stack defined in another
 *    P's buffer) are still unwritten: such a dependency makes the other P's buffer go out
 *    first, and a cycle of dependencies closes the current batch early.
 * The caller must present events in non-decreasing time across all Ps, each one valid for
 * the parsers' state machine (docs/format.md); the writer does not repair.
 *
 * Errors: functions returning int give 0 or a negative errno. After a write error (ENOSPC,
 * EFBIG, EIO) the writer is failed: every later call returns that error and nothing more is
 * written. A write that failed part-way is cut back out of the file (ftruncate), so the file
 * stays a valid prefix ending on a batch boundary. That takes a regular file: on a pipe or a
 * socket, or if ftruncate fails, the bytes that went out stay and are reported as torn.
 */
#ifndef LXTRACE_FORMAT_GO119_WRITER_H
#define LXTRACE_FORMAT_GO119_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/frame.h"
#include "format/outq.h"
#include "format/go119/wire.h"

struct gt_writer;

struct gt_writer_opts {
	size_t sz;		/* sizeof(struct gt_writer_opts), for growth */
	int fd;			/* output; the writer does not close it */
	uint32_t nprocs;	/* P ids are 0 .. nprocs-1 */
	uint64_t frequency;	/* ticks per second; > 0 (appending: 0, or the file has no batch) */
	size_t batch_size;	/* bytes per batch buffer; 0 = 64 KiB */
	/* Appending to a trace: fd already holds the header (and the Frequency, unless one is
	 * given), so only batches are written, and string and stack ids are handed out above
	 * the given bases (the largest ids the file defines). */
	bool append;
	uint64_t string_base, stack_base;
	/* Bytes of disk kept allocated past the end of a regular file, topped up before each
	 * write: when the disk fills, writing stops while this much still fits, for the events
	 * that close the trace (format/go119/close.h, gt_close__seal). 0: none. */
	size_t reserve;
	/* Bytes of one generation of the string table and of the stack table (each holds about
	 * twice that at most); 0: GT_WRITER_TABLE_BUDGET. */
	size_t table_budget;
	/* Batches go to sink instead (outq.h; fd is then unused and no header is written): each
	 * batch whole, as soon as it is complete, with its P and times. The flight recorder keeps
	 * them in memory (format/window.h). */
	gt_batch_sink sink;
	void *sink_ctx;
	/* With sink: called with each string (stack = false) and stack id a table forgets, after
	 * every batch that may use it went to sink; no batch after names it (given callers that
	 * keep ids ask gt_writer__live). May be NULL. */
	void (*forgot)(void *sink_ctx, bool stack, uint64_t id);
};

struct gt_writer_stats {
	uint64_t events;	/* timestamped events, CPU samples and user logs */
	uint64_t batches;
	uint64_t bytes;		/* written to fd, header included, in whole batches */
	uint64_t strings;	/* definitions written: a string or stack defined again */
	uint64_t stacks;	/* after it was forgotten counts again */
	uint64_t restacked;	/* stacks defined again with new frames (gt_writer__restack) */
	uint64_t strings_forgotten, stacks_forgotten;	/* dropped from the tables' memory */
	uint64_t table_bytes;	/* what the string and stack tables hold now */
	/* After a write error: bytes of the failed write that could not be taken back out of
	 * the file, which then ends mid-batch (cut it at `bytes` after the fd's first offset),
	 * and why (-ESPIPE: not a regular file; else ftruncate's error). Both 0 normally. */
	uint64_t torn;
	int torn_err;
};

/* Writes the file header. NULL with errno set on failure. */
struct gt_writer *gt_writer__new(const struct gt_writer_opts *opts);

/* Appends one event of type t (not Batch, Frequency, Stack, String, UserLog, CPUSample) on
 * P p at absolute tick ts. args holds exactly gt_nvalues(t) values: the arguments, then the
 * stack id for types with GT_STACK (0 = none). */
int gt_writer__event(struct gt_writer *w, uint32_t p, uint64_t ts, enum gt_type t,
		     const uint64_t *args, unsigned nargs);

/* UserLog on P p: task, key string id, stack id, then the message (may be empty). */
int gt_writer__user_log(struct gt_writer *w, uint32_t p, uint64_t ts, uint64_t task,
			uint64_t key_sid, uint64_t stk, const char *msg, size_t len);

/* CPUSample taken at ts on P p (or -1) while goroutine g (0 = none) ran. */
int gt_writer__cpu_sample(struct gt_writer *w, uint32_t p, uint64_t ts, int64_t sample_p,
			  uint64_t g, uint64_t stk);

/* Interns s (non-empty); a new string is written into P p's batch. Returns its id (> 0),
 * or 0 with errno set. The id is valid for events on any P. */
uint64_t gt_writer__string(struct gt_writer *w, uint32_t p, const char *s);

/* The id of a stack added with these PCs (leaf first) that the writer still remembers, or 0. */
uint64_t gt_writer__stack_find(struct gt_writer *w, const uint64_t *pcs, size_t n);

/* Adds a stack (leaf first; 1 <= n <= GT_MAX_STACK_FRAMES, trimmed by the caller to fit
 * GT_MAX_LONG_BODY) with its frames' strings, written into P p's batch, or returns the id of
 * the stack with the same PCs that the writer remembers. Returns the id (> 0), or 0 with
 * errno set (EOVERFLOW: no id left below 2^32, as Go 1.23 reads them). */
uint64_t gt_writer__stack(struct gt_writer *w, uint32_t p, const struct gt_frame *frames, size_t n);

/* Defines stack id, handed out before, again as frames (same rules as gt_writer__stack), in
 * every P's batch (P p's made if it has none) after the definition it replaces: both Go
 * parsers keep a stack id's last
 * definition for the whole file, so every event naming id shows these frames, while a prefix
 * of the file ending before it still shows the old ones. For names found only at the end (JIT
 * code named by a map written when its process exited). The frames need PCs of their own
 * where they differ from the old ones: Go 1.23 keeps the first frame it reads for a PC. The
 * table still finds id by its old PCs. -ENOTSUP with a sink (the flight recorder keeps one
 * definition per id), -EINVAL for an id never handed out, else 0 or a negative errno. */
int gt_writer__restack(struct gt_writer *w, uint32_t p, uint64_t id, const struct gt_frame *frames,
		       size_t n);

/* Whether the writer still remembers string or stack id, and whether in its current
 * generation (format/dedup.h). An id stays valid in the file, but a caller that keeps one
 * uses it again only while it is current, else it asks for the string or stack anew (which
 * keeps the id while the writer remembers it), or, when it cannot, while it is live: the
 * flight recorder forgets what the writer forgot. */
bool gt_writer__live(const struct gt_writer *w, bool stack, uint64_t id);
bool gt_writer__current(const struct gt_writer *w, bool stack, uint64_t id);

/* Writes every buffered batch, in dependency order. */
int gt_writer__flush(struct gt_writer *w);

/* What the file holds of P p at its end: only batches that reached the file count. */
struct gt_writer_pstate {
	bool started;		/* ProcStart without ProcStop */
	bool sweep;		/* GCSweepStart without GCSweepDone */
	uint64_t g;		/* the goroutine running on it, 0 for none */
};

/* What the file holds as a whole. */
struct gt_writer_fstate {
	uint64_t last_ts;	/* time of its last event; 0 when it holds no batch */
	uint64_t lost;		/* events the writer took that never reached it */
	bool gc;		/* a GCStart without its GCDone */
	bool stw;		/* a GCSTWStart without its GCSTWDone, begun on stw_p */
	uint32_t stw_p;
};

/* The state of every P (procs[0 .. nprocs-1], unless procs is NULL) and of the GC as the file
 * written so far leaves them: what must be closed after a write error. */
void gt_writer__file_state(const struct gt_writer *w, struct gt_writer_pstate *procs,
			   struct gt_writer_fstate *file);

/* The largest string and stack ids handed out: an appending writer's bases. */
void gt_writer__max_ids(const struct gt_writer *w, uint64_t *string_id, uint64_t *stack_id);

void gt_writer__stats(const struct gt_writer *w, struct gt_writer_stats *out);

/* Frees the writer without flushing. Accepts NULL. */
void gt_writer__free(struct gt_writer *w);

#endif
