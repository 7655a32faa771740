/* v2story.h - a Go 1.22+ trace written through the encoder (format/v2/writer.h) for the tests of
 * its reader, repair and cut: two CPUs; A and B run, C waits in pipe_read since before the
 * start, D is runnable; each round A makes a syscall and blocks on a futex, D runs and wakes
 * it, B is sampled and annotates (a task, a region, a log, the counter). */
#ifndef LXTRACE_TESTS_V2STORY_H
#define LXTRACE_TESTS_V2STORY_H

#include "format/v2/writer.h"

enum { V2STORY_A = 100, V2STORY_B = 101, V2STORY_C = 102, V2STORY_D = 103 };

/* Writes the story of rounds rounds (1400 ticks each at 1 GHz) to path in generations of
 * gen_ticks; *st gets the writer's stats. 0, or a negative errno (the failed call named in
 * why). */
int v2story__write(const char *path, unsigned rounds, uint64_t gen_ticks,
		   struct gt2_writer_stats *st, char *why, size_t whylen);

#endif
