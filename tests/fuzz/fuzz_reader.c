/* fuzz_reader.c - libFuzzer target: the streaming reader (the path `lxtrace dump`, repair and
 * cut take, reading a file through its window) and the whole-trace loader built on it must
 * survive any input without a crash, a leak or an out-of-bounds access, explain every refusal,
 * and agree with each other; the state tracker, repair and cut must survive whatever the
 * reader lets through, and a file repair writes is one the reader and the tracker take
 * without a problem (what `lxtrace dump` checks: what Go's parsers refuse). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/go119/cut.h"
#include "format/go119/reader.h"
#include "format/go119/repair.h"
#include "format/go119/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches what an event points at. */
static void touch(const struct gt_event *e, size_t size)
{
	if (e->stack)
		for (size_t j = 0; j < e->stack->n; j++)
			if (strlen(e->stack->frames[j].func) > size)
				abort();
	if (e->msg_len && e->msg[e->msg_len - 1] == 0x7f && e->msg_len > size)
		abort();
}

static int memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	return fd;
}

/* Streams the input from a file descriptor through the state tracker; returns the events
 * read, or -1 when refused. */
static long stream(int fd, size_t size)
{
	struct gt_state *s = gt_state__new();
	struct gt_reader *r;
	struct gt_event e;
	long n = 0;
	int ret;

	r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts), .fd = fd });
	if (!r || !s || lseek(fd, 0, SEEK_SET))
		abort();
	while ((ret = gt_reader__next(r, &e)) == 1) {
		touch(&e, size);
		if (gt_state__event(s, &e) == -ENOMEM)
			abort();
		n++;
	}
	if (ret && (!gt_reader__error(r)[0] || strchr(gt_reader__error(r), '\n')))
		abort();
	gt_reader__free(r);
	gt_state__free(s);
	return ret ? -1 : n;
}

/* The reader and the tracker take the whole of fd, or abort. */
static void expect_whole(int fd)
{
	struct gt_state *s = gt_state__new();
	struct gt_state_stats st;
	struct gt_reader *r;

	r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts), .fd = fd });
	if (!r || !s || lseek(fd, 0, SEEK_SET) || gt_state__replay(s, r, UINT64_MAX))
		abort();
	gt_state__stats(s, &st);
	if (st.problems)
		abort();
	gt_reader__free(r);
	gt_state__free(s);
}

/* Repair into another file, and a cut of the middle third: an error or a file, never a
 * crash. */
static void repair_and_cut(int fd, int out)
{
	struct gt_repair_report rep;
	char err[512];

	if (ftruncate(out, 0) || lseek(out, 0, SEEK_SET))
		abort();
	if (gt_repair(fd, out, &rep, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else {
		expect_whole(out);
	}
	if (ftruncate(out, 0) || lseek(out, 0, SEEK_SET))
		abort();
	if (gt_cut__file(fd, out, 1000, 2000, NULL, NULL, err, sizeof(err)) && !err[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, out = -1;
	struct gt_trace *t = NULL;
	char err[256];
	long streamed;

	if (fd < 0) {
		fd = memfd("fuzz-in");
		out = memfd("fuzz-out");
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	streamed = stream(fd, size);
	repair_and_cut(fd, out);

	if (gt_trace__parse(data, size, &t, err, sizeof(err))) {
		if (!err[0] || t || streamed >= 0)
			abort();
		return 0;
	}
	if (streamed != (long)gt_trace__nevents(t))
		abort();
	/* Touch everything the decoder resolved. */
	for (size_t i = 0; i < gt_trace__nevents(t); i++)
		touch(&gt_trace__events(t)[i], size);
	gt_trace__free(t);
	return 0;
}
