/* reader_core.h - the go1.23 decoder's state and what its files share, one concept a file.
 * Private to them: everyone else uses reader.h.
 *  - reader.c: a generation's events handed out, and the reader's life;
 *  - reader_gen.c: a generation read whole, its batches filed, its events checked, then its
 *    scheduler state (state.h);
 *  - reader_tables.c: a generation's string, stack and CPU-sample tables and its Frequency,
 *    read and looked up;
 *  - reader_time.c: ticks to nanoseconds, as Go 1.23 counts them, and the times it can hold;
 *  - reader_input.c: the file's bytes as batch headers and bodies, the budget they are held
 *    under, and the reader's sticky error.
 * Calls run down this list, never up.
 */
#ifndef LXTRACE_FORMAT_GO123_READER_CORE_H
#define LXTRACE_FORMAT_GO123_READER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/go123/reader.h"
#include "format/go123/state.h"

#define IN_SIZE (64u << 10)
/* What an index entry costs beside its bytes, counted against the budget. */
#define ENTRY_COST 64

struct batch {
	uint64_t body;		/* file offset of its first event */
	uint64_t m, base;
	size_t data;		/* offset of its bytes in the generation's buffer */
	size_t len;
};

struct str {
	size_t data;
	size_t len;
};

struct frame {
	uint64_t func, file, line;
};

struct sample {
	uint64_t off;
	uint64_t args[5];	/* time, M, P, G, stack */
};

/* A batch's header as read. */
struct hdr {
	uint64_t off, gen, m, base, len;
	uint64_t body;		/* offset of its first byte after the header */
	bool exp;		/* an experimental batch: kept by Go for its experiments only */
};

struct go123_reader {
	int fd;
	uint64_t limit;
	size_t budget;
	uint8_t *in;		/* the input's next bytes: [in_pos, in_len) */
	size_t in_pos, in_len;
	uint64_t pos;		/* offset of in[in_pos] */
	bool eof;
	int err;
	char msg[256];
	bool started;		/* the header has been read */
	bool done;		/* the last generation has been handed out */

	/* The generation being read. */
	uint64_t gen, freq, gen_start, gen_end, ngens;
	uint64_t gen_events, lo, hi;	/* its events and samples, their first and last ticks */
	uint64_t gen_timed;	/* its events without the samples */
	size_t used;		/* of the budget */
	uint8_t *g;		/* the bytes of its batches */
	size_t glen, gcap;
	struct batch *b;	/* its event batches, in file order */
	size_t nb, capb;
	struct u64map *strs;	/* string id -> index in str + 1 */
	struct str *str;
	size_t nstr, capstr;
	struct u64map *stks;	/* stack id -> offset of its frame count in g */
	struct u64map *pcs;	/* PC -> index in fr + 1: the first frame read for it */
	struct frame *fr;
	size_t nfr, capfr;
	struct sample *smp;
	size_t nsmp, capsmp;
	uint64_t nbatches;	/* of every kind */
	struct go123_state_batch *sb;	/* its event batches for the state tracker */
	size_t capsb;
	struct go123_state *state;	/* the scheduler's, since the first generation */

	/* The next generation's first batch, read while reading this one; or the error reading
	 * it, which Go reports after this generation's events. */
	bool have_spill;
	struct hdr spill;
	uint8_t *spbuf;
	int spill_err;
	char spill_msg[256];

	/* Where the events are handed out. */
	bool open;
	size_t bi, boff, si;
	uint64_t last;
};

/* A cursor over a table batch's bytes. */
struct cur {
	const uint8_t *p, *end;
	uint64_t off;		/* file offset of p */
};

/* reader_input.c */

/* Sets the reader's error: err, and a message naming the offset; returns err. */
int go123_reader_fail(struct go123_reader *r, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Copies up to n bytes to dst (NULL: skips them); the count, short at the end, or an error. */
ssize_t go123_reader_take(struct go123_reader *r, uint8_t *dst, size_t n);
/* The header of the next batch: 1, 0 at the input's end, or an error with its message. */
int go123_reader_take_header(struct go123_reader *r, struct hdr *h);
/* The body of batch h into dst (h->len bytes). */
int go123_reader_take_body(struct go123_reader *r, const struct hdr *h, uint8_t *dst);
/* Counts cost against the budget. */
int go123_reader_spend(struct go123_reader *r, size_t cost, uint64_t off);

/* reader_tables.c */

/* Files the entries of a table batch (its first byte, the kind, before c). */
int go123_reader_add_strings(struct go123_reader *r, struct cur *c);
int go123_reader_add_stacks(struct go123_reader *r, struct cur *c);
int go123_reader_add_samples(struct go123_reader *r, struct cur *c);
int go123_reader_add_frequency(struct go123_reader *r, const struct hdr *h, struct cur *c);
/* String id is in the generation's table (0 always is). */
bool go123_reader_has_string(const struct go123_reader *r, uint64_t id);

/* reader_time.c */

/* The generation's latest time is one Go holds as int64 ns: 0, or an error. */
int go123_reader_check_time(struct go123_reader *r);

/* reader_gen.c */

/* Decodes the event at boff of batch b: its length, or 0 when it is malformed (message set);
 * *dt its time delta. */
size_t go123_reader_decode(struct go123_reader *r, const struct batch *b, size_t boff,
			 struct go123_event *e, uint64_t *dt);
/* Reads the next generation whole, as Go's readGeneration does: 1, 0 at the end, or an
 * error. */
int go123_reader_read_generation(struct go123_reader *r);

#endif
