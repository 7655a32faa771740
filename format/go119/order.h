/* order.h - a go1.19 trace Go's runtime wrote, in the order Go 1.19's parser puts its events.
 *
 * lxtrace writes its batches so that file order is an order both parsers accept, and its tools
 * read its files as a stream. Go's runtime flushes each P's buffer when it fills: batches of
 * different Ps interleave, events named by a sequence number (GoStart, GoUnblock) may come in
 * the file before the event they follow, and the ...Local events (GoStartLocal,
 * GoUnblockLocal, GoSysExitLocal) have no sequence number at all: they follow the goroutine's
 * latest event. Go's parser reads the whole file, then merges the Ps' events: at each step
 * the earliest of the Ps' next events whose goroutine is in the state (and at the sequence
 * number) the event starts from. This does the same on a trace loaded whole. */
#ifndef LXTRACE_FORMAT_GO119_ORDER_H
#define LXTRACE_FORMAT_GO119_ORDER_H

#include <stdbool.h>
#include <stddef.h>

#include "format/go119/reader.h"

/* Whether the go1.19 trace open on fd (at its first batch, header read) was written by
 * another program than lxtrace: its Frequency does not open its first batch, as lxtrace's
 * does. fd is put back where it was; false when it cannot be (a pipe). */
bool gt_order__needed(int fd);

/* The n events of a trace loaded whole (gt_trace__events: sorted by time, each P's in its own
 * order) in Go 1.19's order, into *out (malloc'd; n events; their stacks and messages the
 * trace's): a ...Local event becomes its plain kind with the sequence number it took
 * (GoStart, GoUnblock, GoSysExit), and a GoSysExit takes its real time. 0, or -EINVAL when
 * no order is consistent (as Go 1.19 refuses it: err says so), -ENOMEM. */
int gt_order__events(const struct gt_event *ev, size_t n, struct gt_event **out, char *err,
		     size_t errlen);

#endif
