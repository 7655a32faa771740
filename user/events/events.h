/* events.h - the one event stream of lxtrace's readers: a trace file of either format lxtrace
 * reads, checked as `lxtrace dump` checks it (one verdict: what dump refuses, report and pprof
 * refuse), told as format-neutral events with stable stack and string handles. report and
 * pprof read every file through it (user/report/walk.h), never a format's reader; so does the
 * flight recorder read its window of batches in memory (user/flight/flight.h), a third source.
 *
 * Its events are format/go119/reader.h's: a gt_event of the go1.19 kinds, whose stack is a
 * pointer into a dictionary that keeps every definition for the whole reading (a stack id
 * defined again is another pointer, the old one still valid), so a handle taken from one
 * event stays valid and means the same stack to the end; a definition that only names what an
 * earlier one of the same PCs left unnamed (JIT frames the recorder named at its stop) refines
 * it for every event, as Go's own parser, which reads the stacks to the end first, shows it.
 * Two adapters make them:
 *  - a go1.19 file: format/go119/reader.h streamed through format/go119/state.h's check; one Go's
 *    runtime wrote (format/go119/order.h says so) read whole, put in Go's order and checked;
 *  - a go1.23 file: events_go123.h, a generation at a time through format/go123/reader.h, its
 *    events told as the go1.19 kinds (times in ns), the stacks and strings in one dictionary;
 *  - the flight recorder's window: go1.19 batches in memory, continuing a state tracker's.
 * It sits below the flight recorder and the report (docs/layout.md): it knows the recorder's
 * conventions only from headers (user/stacks/idents.h, user/proc/syscalls.h). */
#ifndef LXTRACE_USER_EVENTS_EVENTS_H
#define LXTRACE_USER_EVENTS_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "format/go119/reader.h"

struct events;
struct gt_state;

/* Reads the header of the file open on fd (at its start) and makes the adapter of its format.
 * 0 with *out, or a negative errno with a one-line message in err. */
int events__open(int fd, struct events **out, char *err, size_t errlen);

/* Gives the next batch of a window: 1 with its bytes in *data and *len (valid until the next
 * call), 0 after the last. */
typedef int (*events_batch_fn)(void *ctx, const uint8_t **data, size_t *len);

/* The flight recorder's window: go1.19 batches in memory as lxtrace's writer wrote them, in
 * the order it pushed them, continuing where the state tracker before (format/go119/state.h) left
 * the trace: its strings and stacks, and the goroutine each P runs. Read as written, not
 * checked: the recorder's own output, which the cut it goes to checks as it writes it
 * (format/go119/cut.h). before must outlive the stream. 0 with *out, or a negative errno with a
 * one-line message in err. */
int events__open_window(const struct gt_state *before, events_batch_fn next, void *ctx,
			struct events **out, char *err, size_t errlen);

/* 1 with the next event (its strings and message valid until the next call, its stack to the
 * end), 0 at the end of a good file, or a negative errno with why in err. */
int events__next(struct events *s, struct gt_event *e, char *err, size_t errlen);

/* The dictionary the events' ids name (gt_dict__stack, gt_dict__string). */
const struct gt_dict *events__dict(const struct events *s);

/* Ticks per second, known once the first event is read (a file Go's runtime wrote has it at
 * its end); 0 for a Go-written go1.19 file read from a pipe, which cannot be put in order. */
uint64_t events__frequency(const struct events *s);

/* The time of the latest record read, in ticks, told as an event or not (a go1.23 file's
 * end is a record of lxtrace's goroutine, which no go1.19 event tells); 0 when only the events
 * say it. */
uint64_t events__last(const struct events *s);

/* Accepts NULL. */
void events__free(struct events *s);

#endif
