/* test_format_goparse.c - traces generated through gt_writer, and every batch-boundary prefix
 * of them, must pass both real Go parsers and Go 1.23's viewer; 1.19 must print exactly the
 * events written. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go119/dump.h"
#include "format/go119/reader.h"
#include "tests/lib/goparse.h"
#include "tests/unit/test_format_sim.h"

#define MAX_CUTS 150
#define MAX_TMP 32

/* Every file a test creates, removed by the teardown even when an assertion ends the test
 * early; LXTRACE_TEST_KEEP=1 keeps them (and the decoded dumps of failing traces). */
static char *tmp_files[MAX_TMP];
static size_t ntmp;

static char *tmp_path(const char *tag)
{
	char *path = NULL;

	cr_assert_lt(ntmp, MAX_TMP - 1);
	cr_assert(asprintf(&path, "/tmp/lxtrace-test-%s-%d.trace", tag, getpid()) > 0);
	cr_assert(asprintf(&tmp_files[ntmp++], "%s.txt", path) > 0);
	tmp_files[ntmp++] = path;
	return path;
}

static void remove_tmp_files(void)
{
	bool keep = getenv("LXTRACE_TEST_KEEP");

	for (size_t i = 0; i < ntmp; i++) {
		if (keep && !access(tmp_files[i], F_OK))
			fprintf(stderr, "kept %s\n", tmp_files[i]);
		else
			unlink(tmp_files[i]);
		free(tmp_files[i]);
	}
	ntmp = 0;
}

TestSuite(format_goparse, .fini = remove_tmp_files);

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	cr_assert(fd >= 0);
	cr_assert(!fstat(fd, &st));
	buf = malloc((size_t)st.st_size + 1);
	cr_assert(read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_sim(const char *path, const struct sim_opts *o, struct sim_result *res)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int err;

	cr_assert(fd >= 0);
	err = sim_write(fd, o, res);
	close(fd);
	cr_assert_eq(err, 0, "sim_write: %s", strerror(-err));
}

/* Writes the decoded text of a failing trace next to it, for the post-mortem; returns its name. */
static const char *dump_path(const char *path)
{
	static char out[4200];
	struct gt_trace *t;
	char err[256];
	FILE *f;

	snprintf(out, sizeof(out), "%s.txt", path);
	f = fopen(out, "w");
	if (!f)
		return "(none)";
	if (gt_trace__load(path, &t, err, sizeof(err))) {
		fprintf(f, "%s\n", err);
	} else {
		gt_dump__trace(f, t);
		gt_trace__free(t);
	}
	fclose(f);
	return out;
}

/* Both parsers accept path; with want, 1.19 printed exactly want's counts. */
static void check_parsers(const char *path, const struct sim_result *want)
{
	struct goparse_result r;

	cr_assert_eq(goparse_119(path, &r), 0);
	cr_assert(r.ok, "go 1.19 rejects %s: %s (decoded: %s)", path, r.error, dump_path(path));
	if (want) {
		for (unsigned t = 0; t < GT_EV_COUNT; t++)
			cr_expect_eq(r.counts[t], want->counts[t], "%s: 1.19 printed %zu, wrote %zu",
				     gt_specs[t].name, r.counts[t], want->counts[t]);
		cr_expect_eq(r.events, want->events);
	}
	cr_assert_eq(goparse_123(path, &r), 0);
	cr_assert(r.ok, "go 1.23 rejects %s: %s (decoded: %s)", path, r.error, dump_path(path));
	cr_assert_eq(goparse_123_views(path, &r), 0);
	cr_assert(r.ok, "go 1.23's viewer fails on %s: %s (decoded: %s)", path, r.error,
		  dump_path(path));
}

static void check_sim(const char *tag, const struct sim_opts *o)
{
	char *path = tmp_path(tag);
	struct sim_result res;

	write_sim(path, o, &res);
	check_parsers(path, &res);
}

Test(format_goparse, scheduler_mix)
{
	struct sim_opts o = { .ncpu = 4, .nthreads = 30, .steps = 20000, .seed = 1 };

	check_sim("mix", &o);
}

Test(format_goparse, gc_events_small_batches)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 12, .steps = 5000, .seed = 7,
			      .batch_size = 512, .gc = true };

	check_sim("gc", &o);
}

Test(format_goparse, many_procs_tiny_batches)
{
	struct sim_opts o = { .ncpu = 16, .nthreads = 60, .steps = 8000, .seed = 3,
			      .batch_size = 128 };

	check_sim("many", &o);
}

/* Both parsers accept the file path, and prefixes of it cut on at most max_cuts batch
 * boundaries spread over it (the first ones included). */
static void check_prefixes(const char *path, size_t max_cuts)
{
	char *cut = tmp_path("cut");
	size_t len, offs[4096], n, step, checked = 0;
	uint8_t *buf;

	buf = slurp(path, &len);
	n = sim_batch_offsets(buf, len, offs, 4096);
	cr_assert_gt(n, 50, "only %zu batches", n);
	step = n / max_cuts ? n / max_cuts : 1;
	for (size_t i = 1; i < n; i += (i < 4 ? 1 : step)) {
		struct gt_trace *t;
		char err[256];
		int fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		cr_assert(fd >= 0);
		cr_assert_eq(write(fd, buf, offs[i]), (ssize_t)offs[i]);
		close(fd);
		/* A prefix holding no event yet cannot be a trace for anyone. */
		if (gt_trace__load(cut, &t, err, sizeof(err))) {
			cr_assert(strstr(err, "no events"), "cut at %zu: %s", offs[i], err);
			continue;
		}
		gt_trace__free(t);
		check_parsers(cut, NULL);
		checked++;
	}
	cr_assert_gt(checked, n > max_cuts ? max_cuts / 2 : n / 2);
	free(buf);
}

/* A crash can cut the file after any batch: each such prefix must be a valid trace. */
Test(format_goparse, every_batch_prefix, .timeout = 600)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 10, .steps = 1500, .seed = 11,
			      .batch_size = 200 };
	char *path = tmp_path("full");
	struct sim_result res;

	write_sim(path, &o, &res);
	check_prefixes(path, MAX_CUTS);
}

/* A writer whose tables forget (thousands of distinct stacks and names over a budget of a few
 * KiB) defines strings and stacks again under new ids: the file and its prefixes stay valid,
 * every event is there. */
Test(format_goparse, forgetful_tables, .timeout = 300)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 20, .steps = 20000, .seed = 5,
			      .batch_size = 4096, .stacks = 2000, .table_budget = 16384 };
	char *path = tmp_path("forget");
	struct sim_result res;

	write_sim(path, &o, &res);
	cr_assert_gt(res.ws.stacks_forgotten, 1000);
	cr_assert_gt(res.ws.strings_forgotten, 1000);
	cr_assert_leq(res.ws.table_bytes, 4 * o.table_budget);
	check_parsers(path, &res);
	check_prefixes(path, 20);
}

/* Go 1.23's viewer crashed ("startRunningTime != 0") on generated traces of a few hundred
 * steps that both parsers took: only long runs reach the sequences it cannot take. */
Test(format_goparse, long_runs_pass_the_123_viewer, .timeout = 300)
{
	for (unsigned seed = 1; seed <= 4; seed++) {
		struct sim_opts o = { .ncpu = 2 + seed % 3, .nthreads = 10 + 5 * seed, .steps = 2000,
				      .seed = seed, .gc = seed % 2 };
		char tag[16];

		snprintf(tag, sizeof(tag), "long%u", seed);
		check_sim(tag, &o);
	}
}
