/* test_format_reader.c - the decoder refuses malformed input with an offset, never crashes on
 * a truncated file, and derives goroutines and order like Go's parser. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "tests/unit/test_format_sim.h"

#define HDR "go 1.19 trace\0\0\0"
/* Batch P0 at tick 100 with Frequency 1e9 (0xee 0x6b 0x28 0x04 would be 1e9: use 1000). */
#define BATCH0 "\x41\x00\x64" "\x02\xe8\x07"
#define HEAP "\x61\x01\x05"	/* HeapAlloc dt 1, 5 bytes */

struct bad {
	const char *name;
	const char *bytes;
	size_t len;
	const char *want;	/* part of the message */
};

#define BAD(n, b, w) { n, b, sizeof(b) - 1, w }

static const struct bad bad_inputs[] = {
	BAD("empty", "", "bad header"),
	BAD("short header", "go 1.19", "bad header"),
	BAD("other version", "go 1.21 trace\0\0\0" BATCH0 HEAP, "bad header"),
	BAD("type 0", HDR BATCH0 "\x00\x01", "unknown event type 0"),
	BAD("type 50", HDR BATCH0 "\x32\x01", "unknown event type 50"),
	BAD("string id 0", HDR BATCH0 "\x25\x00\x01x" HEAP, "string id 0"),
	BAD("empty string", HDR BATCH0 "\x25\x01\x00" HEAP, "bad length"),
	BAD("string redefined", HDR BATCH0 "\x25\x01\x01x\x25\x01\x01y" HEAP, "redefined"),
	BAD("string truncated", HDR BATCH0 "\x25\x01\x05xy", "truncated"),
	BAD("wrong value count", HDR BATCH0 "\x0e\x01", "GoStart has 1 values, want 3"),
	BAD("long form wrong count", HDR BATCH0 "\xce\x02\x01\x02", "GoStart has 2 values"),
	BAD("long form split value", HDR BATCH0 "\xce\x02\x01\x82\x01", "malformed"),
	BAD("body too long", HDR BATCH0 "\xd5\x81\x10\x01", "exceeds 2048"),
	BAD("truncated event", HDR BATCH0 "\x8e\x01\x02", "truncated"),
	BAD("malformed varint", HDR BATCH0 "\x61\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "malformed"),
	BAD("event before batch", HDR HEAP BATCH0, "before the first Batch"),
	BAD("stack before batch", HDR "\xc3\x02\x01\x00" BATCH0 HEAP, "before the first Batch"),
	BAD("batch header k", HDR "\x81\x00\x64\x00" "\x02\xe8\x07" HEAP, "Batch header byte"),
	BAD("batch P too big", HDR "\x41\x80\x80\x80\x80\x10\x64" "\x02\xe8\x07" HEAP, "out of range"),
	BAD("no frequency", HDR "\x41\x00\x64" HEAP, "no Frequency"),
	BAD("zero frequency", HDR "\x41\x00\x64\x02\x00" HEAP, "bad Frequency"),
	BAD("no events", HDR BATCH0, "no events"),
	BAD("stack frames", HDR BATCH0 "\xc3\x03\x01\x01\x00" HEAP, "Stack has 3 values, want 6"),
	BAD("stack too deep", HDR BATCH0 "\xc3\x04\x01\xe9\x07\x00" HEAP, "1001 frames"),
	BAD("userlog message", HDR BATCH0 "\xf0\x04\x01\x01\x00\x00\x05" "ab", "truncated UserLog"),
	/* What breaks Go 1.23's tables and both parsers' merge. */
	BAD("string before batch", HDR "\x25\x01\x01x" BATCH0 HEAP, "String before the first Batch"),
	BAD("region name undefined", HDR BATCH0 "\xef\x05\x01\x00\x00\x05\x00",
	    "UserRegion names string 5, not defined before it"),
	BAD("frame string undefined", HDR BATCH0 "\xc3\x06\x01\x01\x10\x03\x00\x01" HEAP,
	    "Stack names string 3"),
	BAD("stack id past 32 bits", HDR BATCH0 "\xc3\x0a\x80\x80\x80\x80\x10\x01\x10\x00\x00\x01"
	    HEAP, "stack id 4294967296 past 32 bits"),
	BAD("stack never defined", HDR BATCH0 HEAP "\x5c\x01\x09", "stack 9 is named here and never"),
	BAD("P back in time", HDR BATCH0 HEAP "\x41\x00\x10" HEAP, "before its previous event at 101"),
	BAD("time past 2^63", HDR "\x41\x00\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01\x02\xe8\x07" HEAP,
	    "past 2^63"),
};

Test(format_reader, rejects_malformed_with_offset)
{
	for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		const struct bad *b = &bad_inputs[i];
		struct gt_trace *t = (struct gt_trace *)1;
		char err[256];
		int ret = gt_trace__parse((const uint8_t *)b->bytes, b->len, &t, err, sizeof(err));

		cr_expect_eq(ret, -EINVAL, "%s: accepted", b->name);
		cr_expect_null(t, "%s", b->name);
		cr_expect(!strncmp(err, "offset ", 7), "%s: '%s' names no offset", b->name, err);
		cr_expect(strstr(err, b->want), "%s: '%s', want '%s'", b->name, err, b->want);
		cr_expect_null(strchr(err, '\n'), "%s: not one line", b->name);
	}
}

Test(format_reader, minimal_trace)
{
	static const char good[] = HDR BATCH0 HEAP;
	struct gt_trace *t;
	char err[256];

	cr_assert_eq(gt_trace__parse((const uint8_t *)good, sizeof(good) - 1, &t, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(gt_trace__nevents(t), 1);
	cr_expect_eq(gt_trace__frequency(t), 1000);
	cr_expect_eq(gt_trace__events(t)[0].ts, 101);
	cr_expect_eq(gt_trace__events(t)[0].off, 22);
	gt_trace__free(t);
}

/* The G of each event is derived per P across that P's batches; output is in time order,
 * ties in file order; a sample carries its own time, P and G. */
Test(format_reader, goroutines_and_order)
{
	static const char trace[] = HDR BATCH0
		"\x8e\x01\x07\x01"	/* t101 GoStart g7 */
		"\x41\x01\x64"		/* batch P1 at 100 */
		"\x61\x01\x05"		/* t101 HeapAlloc on P1, g0 */
		"\xf1\x05\x00\x63\x03\x07\x00" /* CPUSample at 99 on P3, g7 */
		"\x41\x00\x66"		/* batch P0 again at 102 */
		"\x5c\x00\x00"		/* t102 GoSysCall by g7 (carried over) */
		"\x1e\x01"		/* t103 GoSysBlock */
		"\x61\x00\x01"		/* t103 HeapAlloc by nobody */
		"\xdd\x04\x00\x07\x02\x00"; /* t103 GoSysExit g7 */
	static const struct {
		uint64_t ts, g;
		int64_t p;
		uint8_t type;
	} want[] = {
		{ 99, 7, 3, GT_EV_CPU_SAMPLE }, { 101, 7, 0, GT_EV_GO_START },
		{ 101, 0, 1, GT_EV_HEAP_ALLOC }, { 102, 7, 0, GT_EV_GO_SYSCALL },
		{ 103, 7, 0, GT_EV_GO_SYSBLOCK }, { 103, 0, 0, GT_EV_HEAP_ALLOC },
		{ 103, 7, 0, GT_EV_GO_SYSEXIT },
	};
	const struct gt_event *ev;
	struct gt_trace *t;
	char err[256];

	cr_assert_eq(gt_trace__parse((const uint8_t *)trace, sizeof(trace) - 1, &t, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(gt_trace__nevents(t), sizeof(want) / sizeof(want[0]));
	ev = gt_trace__events(t);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cr_expect_eq(ev[i].type, want[i].type, "event %zu", i);
		cr_expect_eq(ev[i].ts, want[i].ts, "event %zu", i);
		cr_expect_eq(ev[i].g, want[i].g, "event %zu", i);
		cr_expect_eq(ev[i].p, want[i].p, "event %zu", i);
	}
	gt_trace__free(t);
}

/* Every truncation of a real trace errors cleanly or is a valid prefix; never a crash. */
Test(format_reader, truncation_at_every_byte)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 6, .steps = 300, .seed = 5, .batch_size = 256 };
	struct sim_result res;
	int fd = sim_memfd();
	size_t len, ok = 0;
	uint8_t *buf;

	cr_assert_eq(sim_write(fd, &o, &res), 0);
	buf = sim_slurp_fd(fd, &len);
	cr_assert(buf);
	for (size_t cut = 0; cut <= len; cut++) {
		struct gt_trace *t;
		char err[256];
		uint8_t *copy = malloc(cut ? cut : 1);	/* exact size, so ASan sees overreads */
		int ret;

		memcpy(copy, buf, cut);
		ret = gt_trace__parse(copy, cut, &t, err, sizeof(err));
		if (!ret) {
			ok++;
			cr_expect_gt(gt_trace__nevents(t), 0);
			gt_trace__free(t);
		} else {
			cr_expect_eq(ret, -EINVAL);
			cr_expect(!strncmp(err, "offset ", 7), "cut %zu: %s", cut, err);
		}
		free(copy);
	}
	cr_expect_gt(ok, 10);
	free(buf);
	close(fd);
}

Test(format_reader, load_missing_file)
{
	struct gt_trace *t;
	char err[256];

	cr_expect_eq(gt_trace__load("/nonexistent/x.trace", &t, err, sizeof(err)), -ENOENT);
	cr_expect_null(t);
	cr_expect(strlen(err) > 0);
}

/* The string and stack tables hold what the file defines, up to a budget: a file cannot make
 * the reader hold more, whatever it defines. */
Test(format_reader, dictionary_budget)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 40, .steps = 2000, .seed = 6 };
	struct sim_result res;
	struct gt_reader *r;
	struct gt_event e;
	int fd = sim_memfd(), ret;

	cr_assert_eq(sim_write(fd, &o, &res), 0);
	for (uint64_t budget = 1024; budget <= 4096; budget *= 2) {
		cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
		r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts),
							     .fd = fd, .dict_budget = budget });
		cr_assert(r);
		while ((ret = gt_reader__next(r, &e)) == 1)
			;
		cr_expect_eq(ret, -EINVAL, "budget %llu", (unsigned long long)budget);
		cr_expect(strstr(gt_reader__error(r), "exceed the reader's budget"), "%s",
			  gt_reader__error(r));
		cr_expect_leq(gt_dict__bytes(gt_reader__dict(r)), budget);
		gt_reader__free(r);
	}
	close(fd);
}
