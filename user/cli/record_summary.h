/* record_summary.h - the summary `lxtrace record` prints on stderr once the trace is finished
 * (docs/record.md, "The summary"). */
#ifndef LXTRACE_USER_CLI_RECORD_SUMMARY_H
#define LXTRACE_USER_CLI_RECORD_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "format/go123/restack.h"
#include "format/go123/writer.h"
#include "format/go119/writer.h"
#include "lib/disk_cache.h"
#include "user/capture/capture.h"
#include "user/capture/shed.h"
#include "user/model/model.h"
#include "user/stacks/cfi_loader.h"
#include "user/stacks/python.h"

struct record_summary {
	size_t sz;
	const char *path;		/* the trace; NULL for a flight recorder, whose files are
					 * named in its own lines */
	double secs;			/* the trace's length */
	const struct model *model;
	const struct gt_writer *writer;	/* the one of the two that wrote the trace */
	const struct go123_writer *writer2;
	const struct capture *cap;
	struct cfi_loader *cfi;		/* NULL without user stacks */
	struct disk_cache *row_cache;	/* the cfi loader's; NULL: none */
	const struct python *py;	/* NULL: no Python frames walked */
	unsigned uses;			/* what it used of the kernel (enum feature_use) */
	bool verbose;			/* -v: the internals too */
	/* A go1.23 file copied to hold the JIT frames named at the end; NULL: none tried. */
	const struct go123_restack_stats *restacked;
	const struct shed *shed;	/* when the recorder shed work, being behind */
	uint64_t end;			/* CLOCK_MONOTONIC ns: the recording's end */
};

/* What a person reads after a recording: what was recorded, what was lost, what this kernel
 * made it do without, files that were not read, and how to open the file; with verbose the
 * internals after. */
void record_summary__print(const struct record_summary *s);

#endif
