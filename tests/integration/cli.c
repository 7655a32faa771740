/* cli.c - bad input gets a clear one-line error and a non-zero exit, never a crash. */
#include <fcntl.h>
#include <stdlib.h>

#include "tests/integration/itest.h"
#include "tests/lib/tcgroup.h"

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

/* A value that is wrong says what is wrong with it, with the usage errors' status 2: a -p
 * that swallowed the next option is no pid (not "-p and a command exclude each other"), and a
 * range says whether its ends are allowed. */
Test(cli, record_usage_errors_say_what_is_wrong)
{
	static const struct {
		const char *args[6];
		const char *says;
	} cases[] = {
		{ { "record", "-p", "-d", "1", NULL }, "-p: '-d' is not a list of process ids" },
		{ { "record", "-p", "abc", NULL }, "-p: 'abc' is not a list of process ids" },
		{ { "record", "-p", "0", NULL }, "is not a list of process ids" },
		{ { "record", "-b", "0", NULL }, "above 0 and up to 4096" },
		{ { "record", "--flight-recorder=0", NULL }, "above 0 and up to 3600" },
		/* Before: a file named "-" in the working directory. */
		{ { "record", "-o", "-", "-d", "1", NULL }, "not to standard output" },
	};

	itest_require_root();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct outcome o = run_lxtrace(cases[i].args);
		char what[128] = "lxtrace";

		for (size_t k = 0; cases[i].args[k]; k++)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " %s", cases[i].args[k]);
		cr_expect_eq(o.status, 2, "%s: exit status %d, expected 2 (a usage error)", what,
			     o.status);
		cr_expect(o.err && strstr(o.err, cases[i].says), "%s: the error does not say '%s': %s",
			  what, cases[i].says, o.err ? o.err : "");
		expect_one_line_failure(what, o);
	}
}

Test(cli, version_says_which_build)
{
	struct outcome o = run_lxtrace((const char *[]){ "--version", NULL });

	cr_expect_eq(o.status, 0);
	cr_expect(o.out && !strncmp(o.out, "lxtrace ", 8) && strchr(o.out, '\n') &&
		  !strchr(o.out, '\n')[1], "lxtrace --version printed: %s", o.out ? o.out : "");
	free(o.out);
	free(o.err);
}

/* --check with a target loads the programs a recording with it would (target.bpf.h's branch of
 * each mode is another program to the verifier: 6.18's refused the --cgroup one while the
 * whole machine's loaded), says what they miss, and starts no command. */
Test(cli, check_loads_each_targets_programs_and_starts_no_command)
{
	char cgroup[256], pid[16], marker[] = "/tmp/lxtrace-check-XXXXXX";
	struct outcome o;
	int fd, err;

	itest_require_root();
	err = tcgroup_make(cgroup, sizeof(cgroup));
	cr_assert_eq(err, 0, "no cgroup for the test: %s", strerror(-err));
	fd = mkstemp(marker);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(marker);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	const char *const *const cases[] = {
		(const char *[]){ "record", "--check", NULL },
		(const char *[]){ "record", "--check", "--cgroup", cgroup, NULL },
		(const char *[]){ "record", "--check", "-p", pid, NULL },
		(const char *[]){ "record", "--check", "-F", "999", "--stacks=both", "--syscalls=all",
				  "--", "/usr/bin/touch", marker, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = run_lxtrace(cases[i]);
		cr_expect_eq(o.status, 0, "%s %s: status %d: %s", cases[i][1], cases[i][2] ? cases[i][2] : "",
			     o.status, o.err);
		cr_expect(o.out && strstr(o.out, "A recording with these options, here:"),
			  "no verdict: %s", o.out ? o.out : "");
		cr_expect(!strstr(o.out ? o.out : "", "refused") && !strstr(o.err ? o.err : "", "refused") &&
			  !strstr(o.err ? o.err : "", "failed to load"),
			  "%s %s: programs refused on this kernel:\n%s%s", cases[i][1],
			  cases[i][2] ? cases[i][2] : "", o.out, o.err);
		free(o.out);
		free(o.err);
	}
	cr_expect(access(marker, F_OK) != 0, "--check ran the command: %s exists", marker);
	unlink(marker);
	tcgroup_remove(cgroup);
}

/* The flight recorder's options: each mistake is one line naming it, before anything loads. */
Test(cli, record_flight_option_errors)
{
	static const struct {
		const char *args[8];
		const char *says;
	} cases[] = {
		{ { "record", "--trigger", "sched-latency>50ms", NULL }, "needs --flight-recorder" },
		{ { "record", "--max-files", "3", NULL }, "needs --flight-recorder" },
		{ { "record", "--flight-recorder", "--trigger", "latency>5ms", NULL }, "not sched-latency" },
		{ { "record", "--flight-recorder", "--trigger", "sched-latency>50", NULL }, "needs a unit" },
		{ { "record", "--flight-recorder", "--trigger", "syscall:nosuch>1s", NULL }, "nosuch" },
		{ { "record", "--flight-recorder", "--trigger", "offcpu>1s,user=x", NULL }, "not a filter" },
		{ { "record", "--flight-recorder=5", "--after", "5", NULL }, "--after" },
		{ { "record", "--flight-recorder=0", NULL }, "--flight-recorder" },
		{ { "record", "--flight-recorder", "--flight-size", "0.5", NULL }, "--flight-size" },
		{ { "record", "--flight-recorder", "--max-files", "0", NULL }, "--max-files" },
		{ { "record", "--flight-recorder", "-o", "/proc/nope/x", NULL }, "/proc/nope/" },
	};

	itest_require_root();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct outcome o = run_lxtrace(cases[i].args);
		char what[256] = "lxtrace";

		for (size_t k = 0; cases[i].args[k]; k++)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " %s", cases[i].args[k]);
		cr_expect(o.err && strstr(o.err, cases[i].says), "%s: the error does not say '%s': %s",
			  what, cases[i].says, o.err ? o.err : "");
		expect_one_line_failure(what, o);
	}
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

/* --ready-fd names a descriptor open for writing; a recording that does not start closes it
 * without its line. */
Test(cli, record_bad_ready_fd)
{
	const char *const lx = record__build_path("lxtrace");
	struct outcome o;

	itest_require_root();
	expect_one_line_failure("lxtrace record --ready-fd 999 (not open)",
				run_lxtrace((const char *[]){ "record", "--ready-fd", "999", NULL }));
	expect_one_line_failure("lxtrace record --ready-fd x",
				run_lxtrace((const char *[]){ "record", "--ready-fd", "x", NULL }));
	o.status = run_capture((const char *[]){ "/bin/sh", "-c", "exec \"$0\" record --ready-fd 3 "
						 "3</dev/null", lx, NULL }, 30, &o.out, &o.err);
	cr_expect(o.err && strstr(o.err, "not open for writing"), "a read-only fd: %s",
		  o.err ? o.err : "");
	expect_one_line_failure("lxtrace record --ready-fd 3 3</dev/null", o);
	/* The line goes to stdout, the error to /dev/null. */
	o.status = run_capture((const char *[]){ "/bin/sh", "-c", "exec \"$0\" record --ready-fd 3 "
						 "-o /proc/nope/x 3>&1 2>/dev/null", lx, NULL },
			       30, &o.out, &o.err);
	cr_expect(o.status != 0 && o.out && !o.out[0], "a recording that did not start: status %d, "
		  "on the ready fd: '%s'", o.status, o.out ? o.out : "");
	free(o.out);
	free(o.err);
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

Test(cli, report_and_pprof_usage_and_file_errors)
{
	static const char garbage[] = "this is not a Go execution trace, not even close\n";
	static const struct {
		const char *what, *args[8];
	} cases[] = {
		{ "report (no file)", { "report", NULL } },
		{ "report (two files)", { "report", "/dev/null", "/dev/null", NULL } },
		{ "report --top 0", { "report", "--top", "0", "F", NULL } },
		{ "report -p x", { "report", "-p", "x", "F", NULL } },
		{ "report --from after --to", { "report", "--from", "3", "--to", "2", "F", NULL } },
		{ "report --from 2x", { "report", "--from", "2x", "F", NULL } },
		{ "report --frobnicate", { "report", "--frobnicate", "F", NULL } },
		{ "report --top (no value)", { "report", "F", "--top", NULL } },
		{ "report (text file)", { "report", "F", NULL } },
		{ "report (missing file)", { "report", "/nonexistent/x.trace", NULL } },
		{ "pprof (no profile)", { "pprof", "F", "-o", "/tmp/x.pb.gz", NULL } },
		{ "pprof (two profiles)", { "pprof", "F", "--cpu", "--sched", "-o", "/tmp/x", NULL } },
		{ "pprof (no -o)", { "pprof", "F", "--cpu", NULL } },
		{ "pprof (text file)", { "pprof", "F", "--cpu", "--folded", NULL } },
	};
	char path[64];
	int rc;

	itest_require_root();
	rc = record__tmpfile(path, sizeof(path), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	write_file(path, garbage, sizeof(garbage) - 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[8];

		for (size_t k = 0; k < 8; k++)
			args[k] = cases[i].args[k] && !strcmp(cases[i].args[k], "F") ? path :
				  cases[i].args[k];
		expect_one_line_failure(cases[i].what, run_lxtrace(args));
	}
	unlink(path);
}
