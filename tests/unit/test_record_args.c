/* test_record_args.c - `lxtrace record`'s option table: every option --help lists parses, the
 * short and long forms agree, values are checked, and what is not in the table is refused. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "user/cli/record_args.h"

/* Parses argv (NULL-terminated, "record" first) into *a; returns record_args__parse's value. */
static int parse(struct record_args *a, const char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return record_args__parse(argc, (char **)argv, a);
}

Test(record_args, long_and_short_forms)
{
	const char *l[] = { "record", "--output", "x.trace", "--duration", "2.5", "--buffer-size", "0.5",
			    "--syscalls", "all", "--usdt", "/bin/a", "--freq", "499", "--sample-idle",
			    "--stacks", "both", "--verbose", "--cgroup", "/sys/fs/cgroup", NULL };
	const char *s[] = { "record", "-o", "x.trace", "-d", "2.5", "-b", "0.5", "-s", "all", "-u", "/bin/a",
			    "-F", "499", "--sample-idle", "--stacks=both", "-v", "-g", "/sys/fs/cgroup", NULL };
	struct record_args a, b;

	cr_assert_eq(parse(&a, l), 0);
	cr_assert_eq(parse(&b, s), 0);
	for (struct record_args *x = &a; x; x = x == &a ? &b : NULL) {
		cr_expect_str_eq(x->output, "x.trace");
		cr_expect_eq(x->duration, 2.5);
		cr_expect_eq(x->buffer_mib, 0.5);
		cr_expect_eq(x->syscalls, MODEL_SYSCALLS_ALL);
		cr_expect_eq(x->n_usdt, 1);
		cr_expect_eq(x->sample_hz, 499);
		cr_expect(x->sample_idle);
		cr_expect_eq(x->stacks, STACKS_BOTH);
		cr_expect(x->verbose);
		cr_expect_str_eq(x->cgroup, "/sys/fs/cgroup");
	}
	record_args__free(&a);
	record_args__free(&b);
}

/* Durations read as cut and triggers read them (lib/duration.h). Before: -d 800ms refused. */
Test(record_args, durations_take_units)
{
	const char *d[] = { "record", "-d", "800ms", "--flight-recorder=2500ms", "--after", "250ms",
			    "--min-gap", "0", NULL };
	const char *bad[] = { "record", "-d", "0ms", NULL };
	struct record_args a;

	cr_assert_eq(parse(&a, d), 0);
	cr_expect_eq(a.duration, 0.8);
	cr_expect_eq(a.flight, 2.5);
	cr_expect_eq(a.after, 0.25);
	cr_expect_eq(a.min_gap, 0);
	record_args__free(&a);
	cr_expect_eq(parse(&a, bad), 2, "a duration of 0 ms");
	record_args__free(&a);
}

Test(record_args, defaults_and_targets)
{
	const char *d[] = { "record", NULL };
	const char *p[] = { "record", "-p", "1,2", "--pid", "3", NULL };
	const char *c[] = { "record", "--as-root", "--", "sleep", "1", NULL };
	const char *f[] = { "record", "--format=go1.23", NULL };
	const char *ff[] = { "record", "--format=go1.23", "--flight-recorder", NULL };
	const char *f19[] = { "record", "--format", "go1.19", NULL };
	struct record_args a;

	cr_assert_eq(parse(&a, d), 0);
	cr_expect_str_eq(a.output, "trace.out");
	cr_expect_eq(a.buffer_mib, 4);
	cr_expect_eq(a.sample_hz, 99);
	cr_expect_eq(a.stacks, STACKS_USER);
	cr_expect_eq(a.syscalls, MODEL_SYSCALLS_BLOCKING);
	cr_expect_eq(a.format, FORMAT_GO119);
	record_args__free(&a);
	cr_assert_eq(parse(&a, f), 0);
	cr_expect_eq(a.format, FORMAT_GO123);
	record_args__free(&a);
	cr_assert_eq(parse(&a, ff), 0, "the flight recorder writes go1.23 files too");
	cr_expect_eq(a.format, FORMAT_GO123);
	cr_expect_gt(a.flight, 0);
	record_args__free(&a);
	cr_assert_eq(parse(&a, f19), 0);
	cr_expect_eq(a.format, FORMAT_GO119);
	record_args__free(&a);
	cr_assert_eq(parse(&a, p), 0);
	cr_expect_eq(a.npid_lists, 2);
	record_args__free(&a);
	cr_assert_eq(parse(&a, c), 0);
	cr_expect(a.as_root);
	cr_expect_str_eq(a.command[0], "sleep");
	record_args__free(&a);
}

Test(record_args, refused, .init = cr_redirect_stderr)
{
	const char *bad[][4] = {
		{ "record", "-I", NULL },		/* long-only options have no short form */
		{ "record", "--stacks", NULL },		/* missing value */
		{ "record", "--stacks=some", NULL },
		{ "record", "-F", "-1", NULL },
		{ "record", "--no-such", NULL },
		{ "record", "--as-root", NULL },	/* without a command */
		{ "record", "--format=go1.22", NULL },
	};
	struct record_args a;

	const char *both[] = { "record", "-p", "1", "--cgroup", "/sys/fs/cgroup", NULL };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(parse(&a, bad[i]), 2, "%s %s", bad[i][1], bad[i][2] ? bad[i][2] : "");
		record_args__free(&a);
	}
	cr_expect_eq(parse(&a, both), 2, "two kinds of target");
	record_args__free(&a);
}

/* --ready-fd: a descriptor open for writing, or a usage error; none by default. */
Test(record_args, ready_fd_is_an_open_writable_descriptor, .init = cr_redirect_stderr)
{
	const char *d[] = { "record", NULL };
	const char *argv[] = { "record", "--ready-fd", NULL, NULL };
	char num[2][16];
	struct record_args a;
	int p[2];

	cr_assert_eq(parse(&a, d), 0);
	cr_expect_eq(a.ready_fd, -1);
	record_args__free(&a);
	cr_assert_eq(pipe(p), 0);
	for (int i = 0; i < 2; i++)
		snprintf(num[i], sizeof(num[i]), "%d", p[i]);
	argv[2] = num[1];
	cr_expect_eq(parse(&a, argv), 0, "the write end of a pipe");
	cr_expect_eq(a.ready_fd, p[1]);
	record_args__free(&a);
	argv[2] = num[0];
	cr_expect_eq(parse(&a, argv), 2, "the read end of a pipe");
	record_args__free(&a);
	close(p[0]);
	close(p[1]);
	cr_expect_eq(parse(&a, argv), 2, "a closed descriptor");
	record_args__free(&a);
	argv[2] = "-1";
	cr_expect_eq(parse(&a, argv), 2, "a negative number");
	record_args__free(&a);
}

Test(record_args, help_lists_every_option, .init = cr_redirect_stdout)
{
	static const char *const names[] = { "--pid", "--cgroup", "-- COMMAND", "--as-root",
		"--output", "--format", "--duration", "--buffer-size", "--syscalls", "--usdt", "--freq",
		"--sample-idle", "--stacks", "--ready-fd", "--verbose", "--help" };
	const char *h[] = { "record", "--help", NULL };
	struct record_args a;
	char out[8192];
	size_t n;

	cr_assert_eq(parse(&a, h), 1);
	record_args__free(&a);
	fflush(stdout);
	n = fread(out, 1, sizeof(out) - 1, cr_get_redirected_stdout());
	out[n] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect(strstr(out, names[i]), "--help lacks %s", names[i]);
}
