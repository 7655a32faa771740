/* merge.h - the reorder engine: records read from one ring per CPU, each ring nearly in time
 * order, are staged per CPU and handed on in global time order by a k-way merge, up to a
 * watermark before which no CPU can still send anything older.
 *
 * It knows rings only as streams of bytes per CPU: capture.c reads the rings and feeds them
 * here, the tests feed synthetic streams. Lifecycle: merge__new -> (merge__add,
 * merge__add_lost ... merge__deliver(merge__watermark(now))) ... -> merge__deliver(UINT64_MAX)
 * -> merge__free.
 */
#ifndef LXTRACE_USER_CAPTURE_MERGE_H
#define LXTRACE_USER_CAPTURE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"

/* How long a CPU may stay quiet (send nothing) and still send a record older than the others'
 * newest: the ordering window. */
#define MERGE_WINDOW_NS (10 * 1000 * 1000ULL)

/* Called for each record, in non-decreasing ts except the few counted as out of order. A
 * negative return stops the delivery and is returned by it (the record it was given is
 * consumed; the rest stays staged for the next merge__deliver), but -EBUSY: the record is not
 * taken, and stays the first of the next delivery (held: its consumer waits for something). */
typedef int (*merge_record_fn)(void *ctx, const struct lx_rec *r, size_t size);
/* n records of CPU cpu were lost before ts (the ring was full); ordered among the records. */
typedef int (*merge_lost_fn)(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n);

struct merge_opts {
	size_t sz;			/* sizeof(struct merge_opts) */
	uint32_t ncpus;
	/* How far behind a CPU's staged records may fall in time: how much older the oldest may
	 * be than a new record; 0: no bound. A sample past half of it, and any record past all of
	 * it, is dropped as those stage_bytes has no room for (stats.dropped), so that a consumer
	 * that cannot keep up falls behind by a bounded time, losing samples first, while one
	 * slow for a moment (the first stacks of every process) catches up. */
	uint64_t max_behind_ns;
	merge_record_fn on_record;
	merge_lost_fn on_lost;
	void *ctx;
	/* What one CPU's queue may hold while the consumer is behind (records waiting for it, or
	 * held by it): at most this many bytes of slots and as many again of records copied whole.
	 * A record past it is dropped and reported lost, in one report per run of them. 0: no
	 * bound. Its reader stops at half of either (merge__full), leaving the rest in the ring:
	 * the other half is room for what comes besides the ring (loss reports, records injected,
	 * a chunk of syscall entries unpacked), so that nothing read is dropped for the bound. */
	size_t stage_bytes;
	/* How much newer than a CPU's oldest staged record its newest may be before its reader
	 * stops (merge__full), however few bytes that is: what the consumer may need staged is
	 * what arrives while it holds a record (-EBUSY) or is slow for a moment, and no more. 0:
	 * no such bound. */
	uint64_t read_ahead_ns;
};

struct merge_stats {
	uint64_t records;		/* delivered */
	uint64_t lost;			/* records reported lost */
	uint64_t malformed;		/* of them, records dropped as malformed */
	uint64_t dropped;		/* of them, records dropped with their CPU's queue full or behind */
	uint64_t out_of_order;		/* delivered older than an earlier record */
	uint64_t staged;		/* read and not delivered yet */
	uint64_t dropped_samples;	/* of them, CPU samples (opts.max_behind_ns) */
	uint64_t abandoned;		/* of the lost, records given up on (merge__abandon) */
	uint64_t staged_bytes;		/* what the staged records take: slots and copies */
	uint64_t peak_bytes;		/* the most one CPU's queue took, seen by merge__full */
};

struct merge;

/* NULL with errno set. */
struct merge *merge__new(const struct merge_opts *opts);

/* Stages one record read from CPU cpu's ring; a chunk of syscall entries (LX_REC_SYSCALLS) is
 * unpacked into one LX_REC_SYSCALL or LX_REC_SYSCALL_EXIT record each. A record too short or
 * a malformed chunk is dropped and reported as one record lost (stats.malformed counts them);
 * so is a record the CPU's queue has no room for (opts.stage_bytes; stats.dropped). 0 or
 * -ENOMEM. */
int merge__add(struct merge *mg, uint32_t cpu, const void *data, size_t size);

/* Whether CPU cpu's queue holds half of its bound (opts.stage_bytes) or opts.read_ahead_ns
 * of records: its reader leaves what its ring holds there, where the ring bounds it and counts
 * what it has no room for, until the consumer has taken some. The watermark stays at the
 * CPU's newest meanwhile (merge__unread), so the order holds. Never with neither bound. */
bool merge__full(struct merge *mg, uint32_t cpu);

/* Stages a report that n records of CPU cpu were lost before ts. 0 or -ENOMEM. */
int merge__add_lost(struct merge *mg, uint32_t cpu, uint64_t ts, uint64_t n);

/* Whether CPU cpu's ring still holds records after this round's read (its read was cut
 * short): the watermark then stays at the CPU's newest, however long ago, until it is read
 * whole; a quiet CPU is one whose ring was read to its end. */
void merge__unread(struct merge *mg, uint32_t cpu, bool unread);

/* The time up to which delivery is safe, for records read up to now (CLOCK_MONOTONIC): the
 * oldest over the CPUs of the newest ts read from each, or now - MERGE_WINDOW_NS for a CPU
 * quiet that long (a quiet CPU's newest ts says nothing about what it may still send). */
uint64_t merge__watermark(const struct merge *mg, uint64_t now);

/* Delivers, oldest first across CPUs, every staged record no later than upto. Returns 0 or the
 * first negative return of a callback (the record it was given is consumed). */
int merge__deliver(struct merge *mg, uint64_t upto);

/* Gives up on what is still staged, for a consumer out of time (a stop bounded in time): each
 * CPU's records no later than upto become one loss report of them, stamped upto, with the loss
 * reports staged among them (stats.abandoned counts the records). Triggers are kept, in their
 * place: a flight recorder's file is what a machine in trouble asks for. Returns how many
 * records later than upto were dropped besides (not lost: after the end). 0 or -ENOMEM in
 * *err. */
uint64_t merge__abandon(struct merge *mg, uint64_t upto, int *err);

void merge__stats(const struct merge *mg, struct merge_stats *out);

/* Frees what is still staged, undelivered. Accepts NULL. */
void merge__free(struct merge *mg);

#endif
