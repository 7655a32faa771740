/* record_flight.h - `lxtrace record --flight-recorder`: the recording's part that keeps the last
 * seconds in memory (user/flight/flight.h) and writes a numbered file of them for each trigger
 * (--trigger, SIGUSR1, a traced program's lxtrace_trigger()); cmd_record.c calls it from its
 * phases. */
#ifndef LXTRACE_USER_CLI_RECORD_FLIGHT_H
#define LXTRACE_USER_CLI_RECORD_FLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "format/go119/writer.h"
#include "format/go123/writer.h"
#include "user/capture/capture.h"
#include "user/cli/record_args.h"
#include "user/model/model.h"

struct record_flight;

struct output_file;

/* Opens a file for writing the way the recording's output is opened (output_file.h); NULL
 * when it cannot, said on stderr. */
typedef struct output_file *(*record_open_fn)(const char *path);

/* For a recording with args->flight set: NULL (said on stderr) on failure. open makes each
 * file. */
struct record_flight *record_flight__new(const struct record_args *args, uint32_t nprocs,
					 record_open_fn open);

/* The writer's batches go to the flight recorder; the model watches its triggers. */
void record_flight__writer_opts(struct record_flight *rf, struct gt_writer_opts *wo);
/* The same for --format=go1.23: its generations, each ended at the latest every tenth of the
 * window (at least 50 ms, at most 1 s) and within an eighth of its memory. */
void record_flight__writer2_opts(struct record_flight *rf, struct go123_writer_opts *wo);
void record_flight__model_opts(struct record_flight *rf, struct model_opts *mo);

/* The recording started at tick start: each file's line says where in it the file lies. A
 * go1.23 file is copied with the JIT frames model names from the perf maps as they stand when
 * it is written (model__name_window). */
void record_flight__started(struct record_flight *rf, uint64_t start, struct model *model);

/* Catches SIGUSR1, a person's or a script's trigger. */
void record_flight__catch_signals(void);

/* Each SIGUSR1 caught since the last call becomes a trigger now; also called as the recording
 * stops, so that a signal just before the stop is not lost. 0, or a negative errno. */
int record_flight__take_signals(struct capture *cap);

/* Once per poll round at now: record_flight__take_signals; the writer's open batches
 * (or generation) go to the window now and then, so they can be evicted in time; a file whose
 * --after has passed is written. The writer is w, or w2 for go1.23. Returns 1 once every file
 * --max-files allows is written (the recording stops), else 0, or a negative errno. */
int record_flight__poll(struct record_flight *rf, struct capture *cap, struct gt_writer *w,
			struct go123_writer *w2, uint64_t now);

/* After the trace's end (model__finish): a file still waiting for its --after is written with
 * what there is. 0 or a negative errno. */
int record_flight__finish(struct record_flight *rf);

void record_flight__summary(const struct record_flight *rf);

/* Accepts NULL. */
void record_flight__free(struct record_flight *rf);

#endif
