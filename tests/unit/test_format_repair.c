/* test_format_repair.c - a generated trace cut after every batch, in the middle of a batch,
 * followed by garbage or holding a batch the parsers refuse, once repaired, passes both Go
 * parsers and both viewers; repairing again changes nothing; a whole trace is left as it is. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "format/go119/repair.h"
#include "tests/lib/goparse.h"
#include "tests/unit/test_format_sim.h"

static char path[64], other[64];

static void cleanup(void)
{
	if (path[0] && !getenv("LXTRACE_TEST_KEEP"))
		unlink(path);
	if (other[0])
		unlink(other);
	path[0] = other[0] = '\0';
}

TestSuite(format_repair, .fini = cleanup, .timeout = 600);

static uint8_t *sim_file(const struct sim_opts *o, size_t *len)
{
	struct sim_result res;
	int fd = sim_memfd();
	uint8_t *buf;

	cr_assert_eq(sim_write(fd, o, &res), 0);
	buf = sim_slurp_fd(fd, len);
	cr_assert(buf);
	close(fd);
	return buf;
}

/* Writes len bytes of buf (then extra, if any) to `path` and repairs it in place. */
static int repair_bytes(const uint8_t *buf, size_t len, const void *extra, size_t elen,
			struct gt_repair_report *rep, char *err, size_t errlen)
{
	int fd, ret;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/lxtrace-test-repair-%d.trace", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	if (elen)
		cr_assert_eq(write(fd, extra, elen), (ssize_t)elen);
	ret = gt_repair(fd, -1, rep, err, errlen);
	close(fd);
	return ret;
}

static off_t file_size(const char *p)
{
	struct stat st;

	cr_assert_eq(stat(p, &st), 0);
	return st.st_size;
}

static void expect_parsers(const char *what)
{
	char why[1200];

	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s: %s", what, why);
}

static void expect_viewers(const char *what)
{
	char why[1200];

	cr_assert(goparse_views_ok(path, why, sizeof(why)), "%s: %s", what, why);
}

/* A second repair finds nothing to do. */
static void expect_idempotent(void)
{
	struct gt_repair_report rep;
	off_t size = file_size(path);
	char err[512];
	int fd = open(path, O_RDWR);

	cr_assert_eq(gt_repair(fd, -1, &rep, err, sizeof(err)), 0, "%s", err);
	close(fd);
	cr_expect_eq(rep.appended, 0);
	cr_expect_eq(rep.kept, (uint64_t)size);
	cr_expect_eq(file_size(path), size);
}

/* Every prefix that ends on a batch boundary (what kill -9 leaves), with goroutines running,
 * GCs, sweeps, regions and tasks open at the cut. */
Test(format_repair, every_batch_prefix)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 8, .steps = 900, .seed = 21,
			      .batch_size = 180, .gc = true };
	size_t len, offs[4096], n, repaired = 0, running = 0, viewed = 0;
	uint8_t *buf = sim_file(&o, &len);

	n = sim_batch_offsets(buf, len, offs, 4096);
	cr_assert_gt(n, 40, "only %zu batches", n);
	for (size_t i = 1; i <= n; i++) {
		size_t cut = i < n ? offs[i] : len;
		struct gt_repair_report rep;
		char err[512], what[64];
		int ret = repair_bytes(buf, cut, NULL, 0, &rep, err, sizeof(err));

		snprintf(what, sizeof(what), "cut at %zu", cut);
		if (ret == -ENODATA) {	/* no event yet */
			cr_expect(strstr(err, "no events"), "%s: %s", what, err);
			continue;
		}
		cr_assert_eq(ret, 0, "%s: %s", what, err);
		cr_expect_eq(rep.kept, cut);
		cr_expect_str_empty(rep.why);
		cr_expect_eq(rep.appended > 0, i < n, "%s: appended %llu", what,
			     (unsigned long long)rep.appended);
		expect_parsers(what);
		repaired++;
		running += rep.goroutines > 0;
		/* The viewers on every prefix that had a goroutine running, or a phase, and on
		 * some others. */
		if (rep.goroutines || rep.phases || i % 16 == 0) {
			expect_viewers(what);
			viewed++;
		}
		expect_idempotent();
	}
	cr_log_info("%zu prefixes repaired, %zu with a goroutine running, %zu viewed", repaired,
		    running, viewed);
	cr_expect_gt(repaired, n - 5);
	cr_expect_gt(running, 5, "no prefix ended with a goroutine running");
	cr_expect_gt(viewed, 10);
	free(buf);
}

/* Power loss: the file ends inside a batch, or garbage (zeros) follows the last batch. */
Test(format_repair, torn_tail_is_dropped)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 10, .steps = 1500, .seed = 5, .batch_size = 400 };
	size_t len, offs[1024], n;
	uint8_t *buf = sim_file(&o, &len);
	static const uint8_t zeros[5000];
	struct gt_repair_report rep;
	char err[512];

	n = sim_batch_offsets(buf, len, offs, 1024);
	cr_assert_gt(n, 20);
	/* Cut inside the header of batch n/2: the batch before is whole. */
	cr_assert_eq(repair_bytes(buf, offs[n / 2] + 2, NULL, 0, &rep, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rep.kept, offs[n / 2]);
	cr_expect(strstr(rep.why, "offset "), "%s", rep.why);
	expect_parsers("cut inside a batch");
	expect_viewers("cut inside a batch");
	expect_idempotent();

	/* Zeros after batch n/2's first record: the batch is dropped. */
	cr_assert_eq(repair_bytes(buf, offs[n / 2] + 20, zeros, sizeof(zeros), &rep, err,
				  sizeof(err)), 0, "%s", err);
	cr_expect_eq(rep.kept, offs[n / 2]);
	cr_expect_eq(rep.size, offs[n / 2] + 20 + sizeof(zeros));
	expect_parsers("zeros inside a batch");
	expect_viewers("zeros inside a batch");

	/* A second header (a file written twice into one path) stops at the batch before it. */
	cr_assert_eq(repair_bytes(buf, offs[n - 3], buf, 64, &rep, err, sizeof(err)), 0, "%s", err);
	cr_expect_lt(rep.kept, offs[n - 3]);
	expect_parsers("a header after batches");
	free(buf);
}

/* A batch that decodes but holds what the parsers refuse (a start of a goroutine that does not
 * exist) is dropped with everything after it, as a torn one is: before, the file was written
 * with it, and both parsers refused the result. */
Test(format_repair, batch_the_parsers_refuse_is_dropped)
{
	static const uint8_t bad[] = { 0x41, 0x07, 0x01, 0x8e, 0x00, 0xbf, 0x84, 0x3d, 0x01 };
	struct sim_opts o = { .ncpu = 2, .nthreads = 6, .steps = 800, .seed = 4, .batch_size = 200 };
	size_t len, offs[1024], n;
	uint8_t *buf = sim_file(&o, &len), *mut;
	struct gt_repair_report rep;
	char err[512];

	n = sim_batch_offsets(buf, len, offs, 1024);
	cr_assert_gt(n, 10);
	mut = malloc(len + sizeof(bad));
	cr_assert(mut);
	memcpy(mut, buf, offs[n / 2]);
	memcpy(mut + offs[n / 2], bad, sizeof(bad));
	memcpy(mut + offs[n / 2] + sizeof(bad), buf + offs[n / 2], len - offs[n / 2]);
	cr_assert_eq(repair_bytes(mut, len + sizeof(bad), NULL, 0, &rep, err, sizeof(err)), 0, "%s",
		     err);
	cr_expect_eq(rep.kept, offs[n / 2]);
	cr_expect(strstr(rep.why, "g 999999 does not exist"), "%s", rep.why);
	cr_expect_gt(rep.appended, 0);
	expect_parsers("a refused batch");
	expect_idempotent();
	free(mut);
	free(buf);
}

Test(format_repair, whole_trace_is_left_as_it_is)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 6, .steps = 800, .seed = 2 };
	struct gt_repair_report rep;
	size_t len;
	uint8_t *buf = sim_file(&o, &len);
	char err[512];

	cr_assert_eq(repair_bytes(buf, len, NULL, 0, &rep, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rep.appended, 0);
	cr_expect_eq(rep.kept, len);
	cr_expect_eq(rep.goroutines + rep.procs + rep.phases, 0);
	cr_expect_eq(file_size(path), (off_t)len);
	free(buf);
}

/* With an output file, the input is not touched; the output holds the kept bytes, repaired. */
Test(format_repair, into_another_file)
{
	struct sim_opts o = { .ncpu = 2, .nthreads = 6, .steps = 800, .seed = 3, .batch_size = 200 };
	size_t len, offs[1024], n;
	uint8_t *buf = sim_file(&o, &len);
	struct gt_repair_report rep;
	char err[512];
	int in, out;

	n = sim_batch_offsets(buf, len, offs, 1024);
	snprintf(path, sizeof(path), "/tmp/lxtrace-test-repair-%d.trace", getpid());
	snprintf(other, sizeof(other), "/tmp/lxtrace-test-repair-in-%d.trace", getpid());
	in = open(other, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(write(in, buf, offs[n / 2] + 3), (ssize_t)(offs[n / 2] + 3));
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(gt_repair(in, out, &rep, err, sizeof(err)), 0, "%s", err);
	close(in);
	close(out);
	cr_expect_eq(file_size(other), (off_t)(offs[n / 2] + 3));
	cr_expect_eq(file_size(path), (off_t)(offs[n / 2] + rep.appended));
	expect_parsers("repaired into another file");
	free(buf);
}

Test(format_repair, nothing_to_repair)
{
	static const char header[] = "go 1.19 trace\0\0\0";
	struct gt_repair_report rep;
	char err[512];

	cr_expect_eq(repair_bytes((const uint8_t *)header, 16, NULL, 0, &rep, err, sizeof(err)),
		     -ENODATA);
	cr_expect(strstr(err, "nothing to repair"), "%s", err);
	cr_expect_eq(repair_bytes((const uint8_t *)"not a trace at all", 18, NULL, 0, &rep, err,
				  sizeof(err)), -ENODATA);
	cr_expect(strstr(err, "bad header"), "%s", err);
}
