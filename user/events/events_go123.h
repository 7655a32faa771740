/* events_go123.h - a go1.23 file ("go 1.23 trace") told as the go1.19 events the walk reads
 * (walk.h), so that the report's sections never know the format (docs/report.md, "Go 1.23
 * files").
 *
 * It reads the file a generation at a time through format/go123/reader.h, puts the generation's
 * events and samples in time order (Go 1.23 orders by time too; lxtrace's encoder gives every
 * event a time of its own), follows each M's P and goroutine, and hands out go1.19 events:
 * GoStart on the M's P, GoBlock* by the block's reason (the syscall's name, by its class),
 * GoPreempt, GoSched ("yield"), GoEnd, GoUnblock, GoCreate, UserLog, CPUSample with its thread,
 * GoSysCall for a syscall entry, GoSysCall with GoSysBlock for one that lasted (its real
 * length, from its start to its return), and a Gomaxprocs where the recorder's first look at
 * the threads ends. Times are ns (Frequency 1e9). Stacks and strings are kept by content in
 * one dictionary for the whole file, as 1.19's reader keeps them: memory is the generation
 * (the reader's, and 112 bytes per event of it) and the distinct stacks. */
#ifndef LXTRACE_USER_EVENTS_EVENTS_GO123_H
#define LXTRACE_USER_EVENTS_EVENTS_GO123_H

#include "format/go119/dict.h"
#include "format/go119/reader.h"

struct events_go123;

/* Reads from fd, whose 16-byte header the caller has read and checked. NULL with errno. */
struct events_go123 *events_go123__new(int fd);

/* The next event (its stack, strings and message live until the next call): 1, 0 at the
 * end, or a negative errno with the message in events_go123__error. */
int events_go123__next(struct events_go123 *s, struct gt_event *e);

const struct gt_dict *events_go123__dict(const struct events_go123 *s);
/* The time of the latest record read, told as an event or not (the recording's end is one
 * of lxtrace's goroutine, which no go1.19 event tells). */
uint64_t events_go123__last_ns(const struct events_go123 *s);
const char *events_go123__error(const struct events_go123 *s);

/* Accepts NULL. */
void events_go123__free(struct events_go123 *s);

#endif
