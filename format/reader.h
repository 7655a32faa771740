/* reader.h - decoder of Go 1.19 execution traces, for lxtrace dump and the tests.
 *
 * The input is distrusted: every length and count is bounds-checked against the bytes that
 * remain, allocation is bounded by the input's size, and a malformed file yields a one-line
 * error naming the byte offset. Strings and stacks are resolved; each event's goroutine is
 * derived the way Go's parser does (the G running on the event's P, or the G the event names).
 */
#ifndef LXTRACE_FORMAT_READER_H
#define LXTRACE_FORMAT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct gt_rframe {
	uint64_t pc;
	const char *func;	/* "" when undefined */
	const char *file;
	uint64_t line;
};

struct gt_stack {
	uint64_t id;
	size_t n;
	const struct gt_rframe *frames;	/* leaf first */
};

struct gt_event {
	uint64_t ts;		/* absolute ticks; a CPUSample's own real timestamp */
	uint64_t off;		/* byte offset of the event in the file */
	int64_t p;		/* P of the batch; a CPUSample's P argument */
	uint64_t g;		/* G running on p, or the G the event is about (GoSysExit, GoWaiting, ...) */
	uint8_t type;		/* enum gt_type */
	uint8_t nargs;		/* values after the diff: arguments, then the stack id */
	uint64_t args[GT_MAX_ARGS];
	const struct gt_stack *stack;	/* trailing stack, NULL when none or undefined */
	const char *msg;	/* UserLog message (not NUL-terminated), else NULL */
	size_t msg_len;
};

struct gt_trace;

/* Decodes a whole trace held in memory. Events come out sorted by time (ties in file order),
 * like `go tool trace -d`. On failure returns a negative errno and, when err is not NULL,
 * writes a one-line message such as "offset 1234: string id 7 redefined". */
int gt_trace__parse(const uint8_t *buf, size_t len, struct gt_trace **out, char *err, size_t errlen);

/* Reads and decodes a file. */
int gt_trace__load(const char *path, struct gt_trace **out, char *err, size_t errlen);

size_t gt_trace__nevents(const struct gt_trace *t);
const struct gt_event *gt_trace__events(const struct gt_trace *t);
uint64_t gt_trace__frequency(const struct gt_trace *t);
/* NULL when the id is not defined. */
const char *gt_trace__string(const struct gt_trace *t, uint64_t id);
const struct gt_stack *gt_trace__stack(const struct gt_trace *t, uint64_t id);

/* Accepts NULL. */
void gt_trace__free(struct gt_trace *t);

#endif
