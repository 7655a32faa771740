/* go123story.h - a go1.23 trace written through the encoder (format/go123/writer.h) for the tests of
 * its reader, repair and cut: two CPUs; A and B run, C waits in pipe_read since before the
 * start, D is runnable; each round A makes a syscall and blocks on a futex, D runs and wakes
 * it, B is sampled and annotates (a task, a region, a log, the counter). */
#ifndef LXTRACE_TESTS_GO123STORY_H
#define LXTRACE_TESTS_GO123STORY_H

#include "format/go123/writer.h"

enum { GO123STORY_A = 100, GO123STORY_B = 101, GO123STORY_C = 102, GO123STORY_D = 103 };

/* Writes the story of rounds rounds (1400 ticks each at 1 GHz) to path in generations of
 * gen_ticks; *st gets the writer's stats. 0, or a negative errno (the failed call named in
 * why). */
int go123story__write(const char *path, unsigned rounds, uint64_t gen_ticks,
		   struct go123_writer_stats *st, char *why, size_t whylen);

#endif
