/* fuzz_report.c - libFuzzer target: `lxtrace report` and `lxtrace pprof` (user/report/), on a
 * go1.19 or a go1.23 file alike (told by the header), must survive any input without a
 * crash, a leak, a loop or an out-of-bounds access, and explain every refusal in one line.
 * The report and each profile read the file in the same walk, so they give one verdict, and it
 * is `lxtrace dump`'s: they take what dump takes and refuse what it refuses (but for memory);
 * every profile they take is written whole, in pprof's format and folded. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/go119/state.h"
#include "format/go123/reader.h"
#include "user/report/folded.h"
#include "user/report/pprof.h"
#include "user/report/profile.h"
#include "user/report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(int ret, const char *err)
{
	if (ret && (!err[0] || strchr(err, '\n')))
		abort();
}

/* The profile of kind, written both ways; its verdict (0 or a negative errno). */
static int profile(int fd, enum profile_kind kind, unsigned flags, int out, FILE *sink)
{
	const struct walk_filter all = { .to_ns = UINT64_MAX };
	struct profile *p;
	char err[256] = "";
	int ret;

	if (lseek(fd, 0, SEEK_SET) || ftruncate(out, 0) || lseek(out, 0, SEEK_SET))
		abort();
	ret = profile__read(fd, kind, &all, flags, &p, err, sizeof(err));
	one_line(ret, err);
	if (ret)
		return ret;
	if (pprof__write(p, out, err, sizeof(err)) || folded__write(p, sink))
		abort();
	profile__free(p);
	return 0;
}

/* Whether `lxtrace dump` takes the file: its reader of the format, and for Go 1.19 the state
 * tracker (cmd_dump.c). */
static bool dump_takes(int fd, const uint8_t *data, size_t size)
{
	char err[256];
	int ret;

	if (lseek(fd, 0, SEEK_SET))
		abort();
	if (go123_reader__is_header(data, size)) {
		struct go123_reader *r = go123_reader__new(&(struct go123_reader_opts){
			.sz = sizeof(struct go123_reader_opts), .fd = fd });
		struct go123_event e;

		if (!r)
			abort();
		while ((ret = go123_reader__next(r, &e)) == 1)
			;
		go123_reader__free(r);
	} else {
		struct gt_reader *r = gt_reader__new(&(struct gt_reader_opts){
			.sz = sizeof(struct gt_reader_opts), .fd = fd });
		struct gt_state *s = gt_state__new();
		struct gt_event e;

		if (!r || !s)
			abort();
		while ((ret = gt_state__next(s, r, &e, err, sizeof(err))) == 1)
			;
		gt_state__free(s);
		gt_reader__free(r);
	}
	return ret == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, out = -1;
	static FILE *sink;
	/* Histograms too, and a window and a filter that keep part of the file, as JSON. */
	struct report_opts all = { .sections = REPORT_ALL, .hist = true, .top = 5,
				   .filter = { .to_ns = UINT64_MAX } };
	struct report_opts some = { .sections = REPORT_ALL, .top = 3, .json = true,
				    .filter = { .comm = "pingpong", .from_ns = 1000,
						.to_ns = 50000000 } };
	char err[256] = "";
	int ret;

	/* The input and pprof's output in memory, the text to nowhere, for every run. */
	if (!sink && (fd = memfd_create("in", MFD_CLOEXEC)) >= 0 &&
	    (out = memfd_create("out", MFD_CLOEXEC)) >= 0)
		sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size || lseek(fd, 0, SEEK_SET))
		abort();
	ret = report__file(fd, "fuzz", &all, sink, err, sizeof(err));
	one_line(ret, err);
	if (ret != -ENOMEM && !ret != dump_takes(fd, data, size))
		abort();
	if (lseek(fd, 0, SEEK_SET))
		abort();
	if (report__file(fd, "fuzz", &some, sink, err, sizeof(err)) != ret)
		abort();
	/* Every other kind with its processes merged. */
	for (enum profile_kind k = PROFILE_CPU; k <= PROFILE_SYSCALL; k++)
		if (profile(fd, k, k & 1 ? PROFILE_MERGE_PIDS : 0, out, sink) != ret)
			abort();
	return 0;
}
