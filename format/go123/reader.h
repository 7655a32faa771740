/* reader.h - streaming decoder of go1.23 execution traces ("go 1.23 trace"), a generation at
 * a time (docs/format.md §18.9).
 *
 * Go 1.23's reader takes a generation whole before it looks at an event: its tables may follow
 * its events (lxtrace writes them last). So does this one: it reads a generation's batches
 * (until a batch of the next generation, or the end), checks them all - the batches, the
 * string and stack tables, the Frequency, every event's type, arguments and table ids, the
 * frame strings - and only then hands out its events, in file order (batch by batch), then its
 * CPU samples. A generation Go 1.23 refuses at this level is refused before any of its events
 * is handed out, with a one-line reason naming a byte offset; the generations before it were
 * whole traces.
 *
 * Then the scheduler state of §18.3, as Go's ordering checks it (format/go123/state.h): the
 * statuses, transitions and sequence numbers of goroutines, Ps and Ms across the generation's
 * Ms; it carries over from one generation to the next.
 *
 * Memory: one generation, its bytes and their index, at most gen_budget (a longer generation
 * is refused), plus the first batch of the next one (64 KiB), and the scheduler state (at
 * most GO123_STATE_BUDGET). Nothing else grows with the file.
 * The input is distrusted: every length is checked against what remains and the budget.
 */
#ifndef LXTRACE_FORMAT_GO123_READER_H
#define LXTRACE_FORMAT_GO123_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go123/spec.h"
#include "format/go123/wire.h"

/* A timed event, or a CPU sample (type GO123_EV_CPU_SAMPLE: args time, m, p, g, stack). */
struct go123_event {
	uint64_t gen;
	uint64_t ts;		/* ticks, absolute */
	uint64_t off;		/* byte offset of its type byte in the file */
	uint64_t m;		/* its batch's M (GO123_NO_THREAD: none); a sample's M */
	uint8_t type;		/* enum go123_type */
	uint8_t nargs;
	uint64_t args[5];
};

/* A stack frame; the strings point into the generation and live as long as it. */
struct go123_frame {
	uint64_t pc, line;
	const char *func, *file;
	size_t func_len, file_len;
};

struct go123_reader;

struct go123_reader_opts {
	size_t sz;		/* sizeof(struct go123_reader_opts) */
	int fd;			/* read from here, from its current offset (not closed) */
	uint64_t limit;		/* the input ends at this offset of the file; 0: no limit */
	size_t gen_budget;	/* a generation's bytes in memory; 0: GO123_READER_BUDGET */
	bool header_read;	/* the caller has read and checked the header: the input starts
				 * at offset 16, or at start */
	uint64_t start;		/* with header_read: the offset the fd is at, a batch's (0: 16);
				 * the generations from there are a trace of their own */
};

#define GO123_READER_BUDGET (256u << 20)

/* NULL with errno set on failure. */
struct go123_reader *go123_reader__new(const struct go123_reader_opts *opts);

/* The next event into *e. 1 with an event; 0 at the end of a whole trace; a negative errno
 * (-EINVAL for a file Go 1.23 refuses, -EFBIG over the budget, a read error, -ENOMEM) with
 * the message in go123_reader__error. Errors stick. */
int go123_reader__next(struct go123_reader *r, struct go123_event *e);

/* Reads and checks the next generation whole, skipping the events left of the current one:
 * 1 when there is one, 0 at the end, or an error as go123_reader__next. */
int go123_reader__next_generation(struct go123_reader *r);

/* The current generation: its number, the offsets of its first batch and of its end (the next
 * one's first batch, or the end of the input). */
uint64_t go123_reader__generation(const struct go123_reader *r);
uint64_t go123_reader__gen_start(const struct go123_reader *r);
uint64_t go123_reader__gen_end(const struct go123_reader *r);
/* The current generation's events and samples, and the times of its earliest and latest (ns:
 * its ticks at its Frequency, as Go 1.23 counts them). */
uint64_t go123_reader__gen_events(const struct go123_reader *r);
/* The current generation as Go 1.23's -d=2 splits it: its batches of every kind (experimental
 * ones too) and its timed events (not the samples). */
void go123_reader__gen_split(const struct go123_reader *r, uint64_t *batches, uint64_t *events);
void go123_reader__gen_span(const struct go123_reader *r, int64_t *first_ns, int64_t *last_ns);
/* ns of ts ticks at the current generation's Frequency. */
int64_t go123_reader__ns(const struct go123_reader *r, uint64_t ts);
/* Generations read whole so far. */
uint64_t go123_reader__generations(const struct go123_reader *r);

/* String id of the current generation (len set); "" for 0, NULL when not defined. */
const char *go123_reader__string(const struct go123_reader *r, uint64_t id, size_t *len);

/* Frames of stack id of the current generation into out (room for GO123_MAX_FRAMES), leaf
 * first: their number, 0 for id 0, -1 when not defined. */
int go123_reader__stack(const struct go123_reader *r, uint64_t id, struct go123_frame *out);

/* One line naming the offset and the cause of the error; "" when none. */
const char *go123_reader__error(const struct go123_reader *r);

/* Accepts NULL. Does not close the fd. */
void go123_reader__free(struct go123_reader *r);

/* True when the 16 bytes at p are a header this reader takes ("go 1.22 trace", "go 1.23
 * trace"). */
bool go123_reader__is_header(const uint8_t *p, size_t len);

#endif
