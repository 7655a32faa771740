/* stream.h - a record stream on disk: the records and loss reports capture delivered to the
 * model, in delivery order, with what a replay needs to start and end the model the same way.
 * tests/streams/capture.c writes one from a real recording; the golden tests
 * (tests/unit/test_golden.c) replay it through the model and the merge engine.
 *
 * File (host byte order; lxtrace builds for x86_64): "LXSTRM01", u32 ncpus, u32 0, u64 start
 * (model__start's time), u64 end (model__finish's time), then entries, each 8-byte aligned:
 *   u32 size, u32 cpu; then size bytes of record, zero-padded to 8 (size > 0),
 *                      or u64 ts, u64 n: n records of CPU cpu lost before ts (size 0).
 */
#ifndef LXTRACE_TESTS_STREAM_H
#define LXTRACE_TESTS_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"

struct stream_entry {
	const struct lx_rec *rec;	/* NULL: a loss report */
	size_t size;
	uint32_t cpu;			/* a loss report's */
	uint64_t ts, lost;		/* a loss report's */
};

struct stream {
	uint32_t ncpus;
	uint64_t start, end;
	struct stream_entry *v;		/* records are malloc'd, owned by the stream */
	size_t n, cap;
};

/* Appends a copy of record r, or a loss report. 0 or -ENOMEM. */
int stream__add_record(struct stream *s, const struct lx_rec *r, size_t size);
int stream__add_lost(struct stream *s, uint32_t cpu, uint64_t ts, uint64_t n);

/* Writes s to path. 0 or -errno. */
int stream__save(const struct stream *s, const char *path);

/* Reads path into *s (zeroed first). 0, -errno, or -EPROTO for a file that is not a stream. */
int stream__load(struct stream *s, const char *path);

/* Frees the entries; s can be filled again. */
void stream__free(struct stream *s);

#endif
