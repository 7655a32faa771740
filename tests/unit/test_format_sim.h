/* test_format_sim.h - a random but valid scheduler simulation written through gt_writer, for
 * tests that feed the result to the real Go parsers. */
#ifndef LXTRACE_TESTS_FORMAT_SIM_H
#define LXTRACE_TESTS_FORMAT_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/outq.h"
#include "format/go119/wire.h"
#include "format/go119/writer.h"

struct sim_opts {
	unsigned ncpu;		/* real Ps; P ncpu is the housekeeping P of the init phase */
	unsigned nthreads;	/* goroutines alive at start */
	unsigned steps;		/* actions after the init phase */
	unsigned seed;
	size_t batch_size;
	bool gc;		/* also GC, STW, sweep and mark-assist events */
	/* After a write error: close the file the writer leaves (gt_close__seal, with a note),
	 * having called before_seal (e.g. to lift a file-size limit) when set. */
	bool seal;
	void (*before_seal)(void);
	/* Distinct stacks drawn from, each with function names of its own (0: 24 stacks sharing
	 * ten names), and the writer's table budget (0: its default): many distinct stacks over
	 * a small budget make the writer forget and define again. */
	unsigned stacks;
	size_t table_budget;
	/* Batches go to sink instead of fd (gt_writer_opts.sink: the flight recorder's window). */
	gt_batch_sink sink;
	void *sink_ctx;
	void (*forgot)(void *sink_ctx, bool stack, uint64_t id);	/* gt_writer_opts.forgot */
};

struct sim_result {
	size_t counts[GT_EV_COUNT];	/* events written, by type */
	size_t events;
	int seal_err;			/* gt_close__seal's result, with opts.seal */
	uint64_t lost;			/* events the writer took that never reached the file */
	struct gt_writer_stats ws;	/* the writer's, at its end */
};

/* Writes a whole trace to fd. Returns 0 or a negative errno from the writer. */
int sim_write(int fd, const struct sim_opts *o, struct sim_result *out);

/* Offsets of every batch header in the file buf[0..len), into offs (at most max). */
size_t sim_batch_offsets(const uint8_t *buf, size_t len, size_t *offs, size_t max);

/* An anonymous in-memory file to write a trace into, and its whole content (malloc'd). */
int sim_memfd(void);
uint8_t *sim_slurp_fd(int fd, size_t *len);

#endif
