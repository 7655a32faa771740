/* flight.h - the flight recorder: the trace's batches go into a window of its last seconds in
 * memory instead of a file, and when a trigger's file is due the window is written as a trace
 * of its own, numbered from the output path (trace.out -> trace-001.out, trace-002.out ...).
 *
 * The way of a batch: the writer hands it over complete (gt_writer_opts.sink = flight__sink);
 * it waits in the window (format/window.h) until the budget or the time limit evicts it; then a
 * state tracker reads it (format/go119/state.h), so the state of every goroutine and P at the
 * window's start is always known. A file is that state as an init phase, then the window's
 * events, then what is still open closed (format/go119/cut.h). The trigger's mark (a UserLog the
 * model wrote at the moment it fired) is one of the window's events.
 *
 * A go1.23 trace (opts.generations) needs no state tracker: the writer hands over whole
 * generations (go123_writer_opts.sink = flight__generation), each restating every thread's and
 * P's status, so the window is whole generations and a file is the header and them, as bytes.
 * The caller ends the current generation (go123_writer__flush) before a file, which so holds
 * everything written until then.
 *
 * A file is written by a child process forked for it: it sees the window and the state as they
 * were at the fork (their pages are private, copied on write) and takes its time, while the
 * recording goes on reading the rings. Which triggers get a file and when: plan.h. All calls
 * come from the recording's one thread.
 */
#ifndef LXTRACE_USER_FLIGHT_H
#define LXTRACE_USER_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/outq.h"
#include "format/go123/writer.h"
#include "format/window.h"
#include "user/flight/plan.h"
#include "user/flight/tally.h"
#include "user/flight/trigger.h"

struct flight;

struct flight_opts {
	size_t sz;		/* sizeof(struct flight_opts) */
	uint64_t span;		/* ticks of the trace kept (--flight-recorder) */
	size_t bytes;		/* memory for them, a multiple of the page size (--flight-size) */
	uint64_t after;		/* ticks recorded past a trigger before its file (--after) */
	uint64_t gap;		/* ticks after a trigger that got a file when others get none */
	unsigned max_files;	/* 0: no limit */
	uint32_t nprocs;	/* the writer's */
	uint64_t frequency;	/* the writer's */
	bool generations;	/* the window holds go1.23 generations, not go1.19 batches */
};

struct flight_stats {
	struct flight_plan_stats plan;
	struct gt_window_stats window;
	uint64_t peak_resident;		/* the window's peak memory (flight__note_memory) */
	uint64_t evicted_events;	/* events the tracker read (evicted generations held) */
	uint64_t dict_bytes;		/* the strings and stacks it keeps */
	uint64_t last_file_bytes;
	uint64_t last_write_ns, max_write_ns;	/* from the fork to the file complete */
	uint64_t last_from, last_to;	/* the last file's span, in ticks: [from, to) */
	struct trigger_fired last_trigger;	/* the one the last file was written for */
};

/* NULL with errno set (EINVAL for a budget that is not a multiple of the page size). */
struct flight *flight__new(const struct flight_opts *opts);

/* The writer's sink (outq.h): ctx is the flight. */
int flight__sink(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr, size_t hlen,
		 const uint8_t *body, size_t blen);

/* The go1.23 writer's sink (go123_writer_opts.sink): ctx is the flight. A generation larger
 * than the whole window is dropped as it comes, counted (stats.window.oversize). */
int flight__generation(void *ctx, const struct go123_generation *g);

/* The writer forgot string or stack id (gt_writer_opts.forgot): the state tracker forgets
 * its definition once every batch pushed so far has left the window, so what it keeps follows
 * what the writer remembers, not the length of the recording. ctx is the flight. */
void flight__forgot(void *ctx, bool stack, uint64_t id);

/* A trigger fired (model_opts.on_trigger): ctx is the flight. */
void flight__trigger(void *ctx, const struct trigger_fired *fired);

/* Whether a file is due at now (ticks): its trigger's --after has passed. */
bool flight__due(const struct flight *f, uint64_t now);

/* The due file could not be opened under any name tried: the plan gives it up (counted). */
void flight__abandon(struct flight *f);

/* Starts writing the window to fd as a trace of its own (the due file), in a child process;
 * the caller has flushed the writer, so the window holds every event written so far. Whatever
 * comes of it, the trigger has had its file. One file at a time: not while flight__writing.
 * 0 or a negative errno (fork failed). */
int flight__write_start(struct flight *f, int fd);

/* Whether a file is being written. */
bool flight__writing(const struct flight *f);

/* Whether the file being written is done (waiting for it with `wait`): 1 when it is, with its
 * result in *result (0 or a negative errno, then a one-line reason in err); 0 while it is
 * still being written. The caller then closes the fd it gave. */
int flight__reap(struct flight *f, bool wait, int *result, char *err, size_t errlen);

/* Measures the window's memory now (mincore), for the peak the stats report. */
void flight__note_memory(struct flight *f);

/* Every file there may be (max_files) is written. */
bool flight__done(const struct flight *f);

void flight__stats(const struct flight *f, struct flight_stats *out);

/* The triggers within --min-gap of one that got a file, grouped. */
const struct tally *flight__too_soon(const struct flight *f);

/* Accepts NULL. */
void flight__free(struct flight *f);

/* File n (1, 2, ...) of the output path base: "-NNN" before the extension of the file name
 * ("trace.out" -> "trace-001.out"), or at its end when it has none. Returns the length as
 * snprintf does. */
int flight__file_name(const char *base, unsigned n, char *buf, size_t len);

#endif
