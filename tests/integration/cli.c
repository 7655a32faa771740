/* cli.c - bad input gets a clear one-line error and a non-zero exit, never a crash. */
#include <fcntl.h>
#include <stdlib.h>

#include "tests/integration/itest.h"

TestSuite(cli, .timeout = 60);

struct outcome {
	int status;
	char *out, *err;
};

static struct outcome run_lxtrace(const char *const *args)
{
	const char *argv[16] = { record__build_path("lxtrace") };
	struct outcome o;
	size_t n = 1;

	while (args[n - 1] && n < 15) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	o.status = run_capture(argv, 30, &o.out, &o.err);
	cr_assert_geq(o.status, 0, "cannot run %s: %s", argv[0], strerror(-o.status));
	return o;
}

/* Non-zero exit by itself (not by a signal), and exactly one non-empty line on stderr. */
static void expect_one_line_failure(const char *what, struct outcome o)
{
	const char *nl = o.err ? strchr(o.err, '\n') : NULL;

	cr_assert(o.status != 0 && o.status < 128, "%s: exit status %d, expected a non-zero exit%s",
		  what, o.status, o.status >= 128 ? " (killed by a signal: a crash)" : "");
	cr_assert(o.err && o.err[0] && o.err[0] != '\n', "%s: nothing on stderr", what);
	cr_assert(nl && nl[1] == '\0', "%s: expected one line on stderr, got:\n%s", what, o.err);
	free(o.out);
	free(o.err);
}

Test(cli, unknown_command)
{
	itest_require_root();
	expect_one_line_failure("lxtrace frobnicate", run_lxtrace((const char *[]){ "frobnicate", NULL }));
}

Test(cli, dump_usage_errors)
{
	itest_require_root();
	expect_one_line_failure("lxtrace dump (no file)", run_lxtrace((const char *[]){ "dump", NULL }));
	expect_one_line_failure("lxtrace dump (two files)",
				run_lxtrace((const char *[]){ "dump", "/dev/null", "/dev/null", NULL }));
}

Test(cli, record_unknown_option)
{
	itest_require_root();
	expect_one_line_failure("lxtrace record --no-such-option",
				run_lxtrace((const char *[]){ "record", "--no-such-option", NULL }));
}

Test(cli, record_bad_option_value)
{
	itest_require_root();
	expect_one_line_failure("lxtrace record --syscalls=bogus",
				run_lxtrace((const char *[]){ "record", "--syscalls=bogus", NULL }));
	expect_one_line_failure("lxtrace record --stacks=bogus",
				run_lxtrace((const char *[]){ "record", "--stacks=bogus", NULL }));
	expect_one_line_failure("lxtrace record -F -1",
				run_lxtrace((const char *[]){ "record", "-F", "-1", NULL }));
	expect_one_line_failure("lxtrace record -F 99x",
				run_lxtrace((const char *[]){ "record", "-F", "99x", NULL }));
}

/* Root ignores permission bits, so unwritable means a path no one can create a file at. */
Test(cli, record_unwritable_output)
{
	static const char *const paths[] = { "/proc/nope/x", "/proc/version/x", "/proc/self" };

	itest_require_root();
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char what[128];

		snprintf(what, sizeof(what), "lxtrace record -o %s", paths[i]);
		expect_one_line_failure(what, run_lxtrace((const char *[]){ "record", "-o", paths[i], NULL }));
	}
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, buf, len), (ssize_t)len, "write %s", path);
	close(fd);
}

Test(cli, dump_garbage)
{
	static const char garbage[] = "this is not a Go execution trace, not even close\n";
	/* A valid header followed by an event type no parser knows. */
	static const char bad_event[] = GT_HEADER "\x41\x00\x01\x3f\x01";
	char path[64];
	int rc;

	itest_require_root();
	rc = record__tmpfile(path, sizeof(path), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));

	write_file(path, garbage, sizeof(garbage) - 1);
	expect_one_line_failure("lxtrace dump (text)", run_lxtrace((const char *[]){ "dump", path, NULL }));
	write_file(path, bad_event, sizeof(bad_event) - 1);
	expect_one_line_failure("lxtrace dump (bad event)", run_lxtrace((const char *[]){ "dump", path, NULL }));
	write_file(path, GT_HEADER, 7);
	expect_one_line_failure("lxtrace dump (cut header)", run_lxtrace((const char *[]){ "dump", path, NULL }));
	unlink(path);
	expect_one_line_failure("lxtrace dump (missing file)", run_lxtrace((const char *[]){ "dump", path, NULL }));
}
