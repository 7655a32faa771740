/* test_report_safety.c - what `lxtrace report` and `pprof` make of files lxtrace never writes
 * but anyone may hand them: each event keeps the stack it was written under, and a file that
 * `dump` refuses they refuse too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/go119bytes.h"
#include "user/report/folded.h"
#include "user/report/pprof.h"
#include "user/report/profile.h"
#include "user/report/report.h"

TestSuite(report_safety, .timeout = 60);

static const struct walk_filter everything = { .to_ns = UINT64_MAX };

/* The folded profile of the file, or NULL with the refusal in err. */
static char *folded(const struct go119bytes *b, enum profile_kind kind, char *err, size_t errlen)
{
	struct profile *p;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int fd = go119b_memfd(b);

	cr_assert(fd >= 0);
	if (profile__read(fd, kind, &everything, 0, &p, err, errlen)) {
		close(fd);
		return NULL;
	}
	out = open_memstream(&text, &len);
	cr_assert(out);
	cr_assert_eq(folded__write(p, out), 0);
	fclose(out);
	profile__free(p);
	close(fd);
	return text;
}

static void sample(struct go119bytes *b, uint64_t ts, uint64_t stk)
{
	V1B(b, GT_EV_CPU_SAMPLE, 0, ts, 0, 0, stk);
}

/* Go lets a file define a stack id again (docs/format.md §4): a sample taken under the first
 * definition stays there, one under the third goes to the third, whatever the allocator
 * does with the second. */
Test(report_safety, a_stack_id_defined_again_keeps_each_sample_where_it_was_taken)
{
	struct go119bytes b;
	char err[256] = "", *text;

	go119b_init(&b);
	go119b_batch(&b, 0, 100);
	go119b_frequency(&b, 1000000000);
	go119b_string(&b, 1, "funcA");
	go119b_string(&b, 2, "funcB");
	go119b_string(&b, 3, "funcC");
	go119b_string(&b, 4, "f.go");
	go119b_stack1(&b, 1, 0x10, 1, 4, 1);
	sample(&b, 101, 1);
	go119b_stack1(&b, 1, 0x20, 2, 4, 2);
	go119b_stack1(&b, 1, 0x30, 3, 4, 3);
	sample(&b, 102, 1);
	V1B(&b, GT_EV_HEAP_ALLOC, 3, 5);
	text = folded(&b, PROFILE_CPU, err, sizeof(err));
	cr_assert(text, "%s", err);
	cr_expect_str_eq(text, "funcA 1\nfuncC 1\n");
	free(text);
}

/* The recorder names JIT frames at its stop and defines their stacks again (docs/symbolize.md,
 * "Maps written after the stacks"): a definition that only names what the one before left
 * "[unknown]" names the samples taken before it too, as Go's parsers show them; one that
 * changes a named frame does not reach back. */
Test(report_safety, a_stack_defined_again_naming_its_unknown_frames_names_the_samples_before)
{
	struct go119bytes b;
	char err[256] = "", *text;

	go119b_init(&b);
	go119b_batch(&b, 0, 100);
	go119b_frequency(&b, 1000000000);
	go119b_string(&b, 1, "[unknown] 0x10");
	go119b_string(&b, 2, "[unknown]");
	go119b_string(&b, 3, "funcC");
	go119b_string(&b, 4, "f.go");
	go119b_stack1(&b, 1, 0x10, 1, 2, 0);
	sample(&b, 101, 1);
	sample(&b, 102, 1);
	go119b_string(&b, 5, "long Hot.leaf(long)");
	go119b_string(&b, 6, "/tmp/perf-1.map");
	go119b_stack1(&b, 1, 0x4010, 5, 6, 0);
	sample(&b, 103, 1);
	go119b_stack1(&b, 1, 0x30, 3, 4, 3);
	sample(&b, 104, 1);
	V1B(&b, GT_EV_HEAP_ALLOC, 3, 5);
	text = folded(&b, PROFILE_CPU, err, sizeof(err));
	cr_assert(text, "%s", err);
	cr_expect_str_eq(text, "long Hot.leaf(long) 3\nfuncC 1\n");
	free(text);
}

/* A thread that left the CPU under stack 1 keeps that stack for its time off the CPU, though
 * stack 1 is defined again before it comes back. */
Test(report_safety, time_off_the_cpu_keeps_the_stack_the_thread_left_with)
{
	struct go119bytes b;
	char err[256] = "", *text;

	go119b_init(&b);
	go119b_batch(&b, 0, 100);
	go119b_frequency(&b, 1000000000);
	go119b_string(&b, 1, "funcA");
	go119b_string(&b, 2, "funcB");
	go119b_string(&b, 3, "f.go");
	go119b_stack1(&b, 1, 0x10, 1, 3, 1);
	V1B(&b, GT_EV_GOMAXPROCS, 1, 1, 0);
	V1B(&b, GT_EV_PROC_START, 1, 7);
	V1B(&b, GT_EV_GO_CREATE, 1, 5, 0, 0);
	V1B(&b, GT_EV_GO_START, 1, 5, 1);
	V1B(&b, GT_EV_GO_SLEEP, 1, 1);
	go119b_stack1(&b, 1, 0x20, 2, 3, 2);
	V1B(&b, GT_EV_GO_UNBLOCK, 10, 5, 2, 0);
	V1B(&b, GT_EV_GO_START, 1, 5, 3);
	text = folded(&b, PROFILE_OFFCPU, err, sizeof(err));
	cr_assert(text, "%s", err);
	cr_expect_str_eq(text, "funcA 11\n");
	free(text);
}

/* A go1.19 file up to a running goroutine 5 on P 0 (created at tick 102, started at 103). */
static void g5_running(struct go119bytes *b)
{
	go119b_init(b);
	go119b_batch(b, 0, 100);
	go119b_frequency(b, 1000000000);
	V1B(b, GT_EV_GOMAXPROCS, 1, 1, 0);
	V1B(b, GT_EV_PROC_START, 1, 7);
	V1B(b, GT_EV_GO_CREATE, 1, 5, 0, 0);
	V1B(b, GT_EV_GO_START, 1, 5, 1);
}

/* report and every profile refuse the file in dump's one line (format/go119/state.h), and print
 * nothing. */
static void refused_as_dump_refuses(const struct go119bytes *b, const char *want)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 10, .filter = everything };
	char err[256] = "", *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int fd = go119b_memfd(b);

	cr_assert(fd >= 0 && out);
	cr_expect_lt(report__file(fd, "bad.trace", &o, out, err, sizeof(err)), 0);
	fclose(out);
	cr_expect_eq(len, 0, "printed: %s", text);
	cr_expect(strstr(err, want) && strstr(err, "as Go's parsers refuse it") &&
		  !strchr(err, '\n'), "report: '%s', want '%s'", err, want);
	free(text);
	for (enum profile_kind k = PROFILE_CPU; k <= PROFILE_SYSCALL; k++) {
		struct profile *p;

		err[0] = '\0';
		cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
		cr_expect_lt(profile__read(fd, k, &everything, 0, &p, err, sizeof(err)), 0);
		cr_expect(strstr(err, want), "pprof: '%s', want '%s'", err, want);
	}
	close(fd);
}

Test(report_safety, a_start_of_a_goroutine_that_does_not_exist_is_refused)
{
	struct go119bytes b;

	g5_running(&b);
	V1B(&b, GT_EV_GO_BLOCK, 1, 0);
	V1B(&b, GT_EV_GO_START, 1, 9, 0);
	V1B(&b, GT_EV_HEAP_ALLOC, 1, 5);
	refused_as_dump_refuses(&b, "g 9 does not exist");
}

/* The unblock written before the block it ends: Go's parsers refuse it, and a report read
 * it as a wait of minus one tick, 18446744074 s once unsigned. */
Test(report_safety, two_events_swapped_are_refused)
{
	struct go119bytes b;

	g5_running(&b);
	V1B(&b, GT_EV_GO_UNBLOCK, 1, 5, 2, 0);
	V1B(&b, GT_EV_GO_BLOCK, 1, 0);
	V1B(&b, GT_EV_GO_START, 1, 5, 3);
	V1B(&b, GT_EV_HEAP_ALLOC, 1, 5);
	refused_as_dump_refuses(&b, "GoUnblock");
}

/* Both Go parsers turn a time into int64 ns through a float64, and past 2^63 ns take garbage
 * (Go 1.19 prints -9223372036854775808): refused in one line, not told as a trace of
 * 11,153,727,426 s. */
Test(report_safety, times_past_what_go_clocks_hold_are_refused)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 10, .filter = everything };
	/* Go 1.23's smallest file (tests/fuzz/go123-corpus/go123-min.trace), its first batch at tick
	 * 2^63 at 1e9 ticks a second. */
	static const char go123[] = "go 1.23 trace\0\0\0"
		"\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
		"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01" "\x04\x0d\x00\x00\x02"
		"\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01\x06\x08\x80\x94\xeb\xdc\x03";
	struct go119bytes b;
	char err[256] = "";
	FILE *out = fopen("/dev/null", "w");
	int fd;

	/* One tick a second, the second batch 2^40 s after the first. */
	go119b_init(&b);
	go119b_batch(&b, 0, 100);
	go119b_frequency(&b, 1);
	V1B(&b, GT_EV_HEAP_ALLOC, 1, 5);
	go119b_batch(&b, 1, 1ull << 40);
	V1B(&b, GT_EV_HEAP_ALLOC, 1, 6);
	fd = go119b_memfd(&b);
	cr_assert(fd >= 0 && out);
	cr_expect_lt(report__file(fd, "far.trace", &o, out, err, sizeof(err)), 0);
	cr_expect(strstr(err, "span more than 2^63 ns") && !strchr(err, '\n'), "%s", err);
	close(fd);

	fd = memfd_create("go123", MFD_CLOEXEC);
	cr_assert(fd >= 0 && write(fd, go123, sizeof(go123) - 1) == sizeof(go123) - 1);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	err[0] = '\0';
	cr_expect_lt(report__file(fd, "far2.trace", &o, out, err, sizeof(err)), 0);
	cr_expect(strstr(err, "past 2^63 ns") && !strchr(err, '\n'), "%s", err);
	close(fd);
	fclose(out);
}

/* A function named in bytes that are not UTF-8: pprof's string table holds it escaped as
 * lxtrace prints names, UTF-8 as protobuf's string fields must be, as the folded form does. */
Test(report_safety, pprof_names_are_utf8_whatever_the_trace_names)
{
	struct profile *p;
	struct go119bytes b;
	char err[256] = "", path[] = "/tmp/lxtrace-test-pprof-XXXXXX";
	uint8_t buf[65536];
	int fd, out = mkstemp(path), n;
	gzFile z;

	go119b_init(&b);
	go119b_batch(&b, 0, 100);
	go119b_frequency(&b, 1000000000);
	go119b_string(&b, 1, "bad\xff\xfe");
	go119b_string(&b, 2, "f.go");
	go119b_stack1(&b, 1, 0x10, 1, 2, 1);
	sample(&b, 101, 1);
	V1B(&b, GT_EV_HEAP_ALLOC, 3, 5);
	fd = go119b_memfd(&b);
	cr_assert(fd >= 0 && out >= 0);
	cr_assert_eq(profile__read(fd, PROFILE_CPU, &everything, 0, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pprof__write(p, out, err, sizeof(err)), 0, "%s", err);
	profile__free(p);
	close(fd);
	close(out);
	z = gzopen(path, "rb");
	cr_assert(z);
	n = gzread(z, buf, sizeof(buf));
	gzclose(z);
	unlink(path);
	cr_assert_gt(n, 0);
	cr_expect(memmem(buf, (size_t)n, "bad\\xff\\xfe", 11), "the name is not escaped");
	cr_expect_null(memmem(buf, (size_t)n, "bad\xff", 4), "bytes that are not UTF-8 written");
}
