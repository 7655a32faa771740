/* reader.h - decoder of go1.19 execution traces: a streaming reader for lxtrace's tools, and
 * a whole-trace loader (built on it) for the tests.
 *
 * The input is distrusted: every length and count is bounds-checked against the bytes that
 * remain, and a malformed file yields a one-line error naming the byte offset of its first
 * bad record. Strings and stacks are resolved through the dictionary of what the file has
 * defined so far (format/go119/dict.h); each event's goroutine is derived the way Go's parser does
 * (the G running on the event's P, or the G the event names).
 *
 * Memory of the streaming reader: a read window of about 2 MiB (the largest record the format
 * allows, a 1 MB string or UserLog message, fits in it whole) plus the dictionary, which holds
 * only what the file defines and stops at its byte budget. Nothing grows with the events.
 */
#ifndef LXTRACE_FORMAT_GO119_READER_H
#define LXTRACE_FORMAT_GO119_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/dict.h"
#include "format/go119/wire.h"

struct gt_event {
	uint64_t ts;		/* absolute ticks; a CPUSample's own real timestamp */
	uint64_t off;		/* byte offset of the event in the file */
	int64_t p;		/* P of the batch; a CPUSample's P argument */
	uint64_t g;		/* G running on p, or the G it is about (GoSysExit, GoWaiting) */
	uint8_t type;		/* enum gt_type */
	uint8_t nargs;		/* values after the diff: arguments, then the stack id */
	uint64_t args[GT_MAX_ARGS];
	const struct gt_stack *stack;	/* trailing stack, NULL when none or undefined */
	const char *msg;	/* UserLog message (not NUL-terminated), else NULL */
	size_t msg_len;
};

/* ---- streaming ---------------------------------------------------------------------------- */

struct gt_reader;

struct gt_reader_opts {
	size_t sz;		/* sizeof(struct gt_reader_opts) */
	int fd;			/* read from this descriptor (not closed); -1: gt_reader__feed */
	bool headerless;	/* the input starts at a batch (batches kept in memory) */
	uint64_t offset;	/* the offset in the file of the input's first byte: 16 when the
				 * caller has read the header (headerless), to name offsets right */
	uint64_t limit;		/* stop after this many bytes, as if the input ended; 0: none */
	uint64_t dict_budget;	/* bytes the dictionary may hold; 0: GT_DICT_DEFAULT_BUDGET */
	const struct gt_dict *parent;	/* definitions made before this input (may be NULL) */
	/* Fill this dictionary (which outlives the reader) instead of one of the reader's own;
	 * dict_budget and parent are then the dictionary's business. */
	struct gt_dict *dict;
};

/* NULL with errno set on failure. */
struct gt_reader *gt_reader__new(const struct gt_reader_opts *opts);

/* For a reader without fd: the next bytes of the input, whole records only (a batch as the
 * writer produced it). buf must stay valid until gt_reader__next returns 0 again. */
void gt_reader__feed(struct gt_reader *r, const void *buf, size_t len);

/* Decodes the next event into *e, in file order. Returns 1 with an event; 0 at the end of the
 * input (of a file: after checking it is a whole trace; of fed bytes: when they are used up);
 * a negative errno on a malformed input (-EINVAL), a read error or memory exhaustion, with the
 * message in gt_reader__error. Errors stick. e->msg stays valid until the next call, e->stack
 * as long as the reader (the definition the event was written under, format/go119/dict.h). */
int gt_reader__next(struct gt_reader *r, struct gt_event *e);

/* The end-of-trace checks a file gets at its end (a Frequency, at least one event), for a fed
 * reader whose input is complete. 0 or -EINVAL with the message in gt_reader__error. */
int gt_reader__end(struct gt_reader *r);

/* For batches that continue a stream read elsewhere (a window of batches kept in memory):
 * goroutine g runs on P p when p's next batch begins, as the batches before left it (the
 * state tracker's gt_pstat.g). Returns 0 or -ENOMEM. */
int gt_reader__set_running(struct gt_reader *r, int64_t p, uint64_t g);

/* One line naming the offset and the cause of the last error; "" when none. */
const char *gt_reader__error(const struct gt_reader *r);
/* Offset of the Batch header of the batch the last event belongs to. */
uint64_t gt_reader__batch_offset(const struct gt_reader *r);
/* Offset of the record decoded last, or of the one that failed. */
uint64_t gt_reader__record_offset(const struct gt_reader *r);
/* 0 until the Frequency record has been read. */
uint64_t gt_reader__frequency(const struct gt_reader *r);
const struct gt_dict *gt_reader__dict(const struct gt_reader *r);

/* Accepts NULL. Does not close the fd given in the options. */
void gt_reader__free(struct gt_reader *r);

/* ---- whole traces, for tests and Go's own files ---------------------------------------------- */

struct gt_trace;

/* Decodes a whole trace held in memory. Events come out sorted by time (ties in file order),
 * like `go tool trace -d`, with every stack resolved against the whole file's definitions.
 * On failure returns a negative errno and, when err is not NULL, writes a one-line message
 * such as "offset 1234: string id 7 redefined". Memory grows with the events. */
int gt_trace__parse(const uint8_t *buf, size_t len, struct gt_trace **out, char *err,
		    size_t errlen);

/* Reads and decodes a file. */
int gt_trace__load(const char *path, struct gt_trace **out, char *err, size_t errlen);

/* The same from fd, at the file's start (the header); for the tools, a trace Go's runtime
 * wrote, which must be read whole before its order is known (format/go119/order.h). */
int gt_trace__read(int fd, struct gt_trace **out, char *err, size_t errlen);

size_t gt_trace__nevents(const struct gt_trace *t);
const struct gt_event *gt_trace__events(const struct gt_trace *t);
uint64_t gt_trace__frequency(const struct gt_trace *t);
/* NULL when the id is not defined. */
const char *gt_trace__string(const struct gt_trace *t, uint64_t id);
const struct gt_stack *gt_trace__stack(const struct gt_trace *t, uint64_t id);
const struct gt_dict *gt_trace__dict(const struct gt_trace *t);

/* Accepts NULL. */
void gt_trace__free(struct gt_trace *t);

#endif
