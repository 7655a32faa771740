/* test_sym_perfmap.c - perf maps as JIT runtimes write them (appended, overlapping, half-written
 * last lines) and as a hostile user leaves them (links, FIFOs, /dev/zero, a sparse file, a
 * map that shrinks, more lines than the budget): names found, refusals named once, no stall. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "user/stacks/sym_perfmap.h"

#define PID 4242
#define UID 61234

static char dir[64], map[128];
static struct sym_perfmap_env env;
static struct sym_perfmap *m;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-perfmap-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(map, sizeof(map), "%s/perf-%d.map", dir, PID);
	env = (struct sym_perfmap_env){
		.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC),
		.dir = dir,
		.budget = SYM_PERFMAP_BUDGET,
		.refused = foreign_log__new(4),
	};
	cr_assert_geq(env.dirfd, 0);
	cr_assert_not_null(env.refused);
	m = sym_perfmap__new(&env, PID, UID);
	cr_assert_not_null(m);
}

static void teardown(void)
{
	char cmd[128];

	sym_perfmap__free(m);
	foreign_log__free(env.refused);
	close(env.dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "test_sym_perfmap: cannot remove %s\n", dir);
}

TestSuite(sym_perfmap, .init = setup, .fini = teardown, .timeout = 30);

static void write_map(const char *mode, const char *text)
{
	FILE *f = fopen(map, mode);

	cr_assert_not_null(f, "%s: %s", map, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static const char *find(uint64_t addr)
{
	const char *name = sym_perfmap__find(m, addr);

	return name ? name : "(none)";
}

/* The summary's lines about the refused maps. */
static char *refusals(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	foreign_log__print(env.refused, f, "refused:");
	fclose(f);
	return text;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

Test(sym_perfmap, names_appended_overlapping_and_half_written_lines)
{
	cr_expect_str_eq(find(0x1000), "(none)", "no file yet is no error");
	write_map("w", "1000 100 first\nbad line\n1080 10 later wins\n-1 10 signed\n2000 0 empty\n");
	cr_expect_str_eq(find(0x1010), "first");
	cr_expect_str_eq(find(0x1085), "later wins");
	cr_expect_str_eq(find(0x2000), "(none)");
	/* The runtime appends; its last line is not finished yet. */
	write_map("a", "3000 20 appended\n4000 10 half");
	cr_expect_str_eq(find(0x3010), "appended");
	cr_expect_str_eq(find(0x4000), "(none)");
	write_map("a", " written\n");
	cr_expect_str_eq(find(0x4004), "half written");
	cr_expect_str_eq(sym_perfmap__path(m), map);
	cr_expect_eq(foreign_log__count(env.refused), 0);
}

/* Every form perf's reader (tools/perf/util/symbol.c, dso__load_perf_map: strtoull in base 16,
 * then one separator of any kind) takes: the JVM's "jcmd PID Compiler.perfmap" and
 * -XX:+DumpPerfMapAtExit write 0x and leading zeros. */
Test(sym_perfmap, names_every_form_perf_reads)
{
	write_map("w", "0x00007f9268ec71a0 0x0000000000000200 void java.lang.System.arraycopy"
		       "(java.lang.Object, int, java.lang.Object, int, int)\n"
		       "0X7F0000 0X10 upper case prefix\n"
		       "7f1000\t10\ttabs\n"
		       "  7f2000   \t10 blanks before each number\n"
		       "+7f3000 +10 plus signs\n"
		       "7f4000,10,other separators\n"
		       "00000000000000000000007f5000 0010 zeros past sixteen digits\n"
		       "7f6000 10  a name's own blanks \n"
		       "7f7000 10 x\n");
	cr_expect_str_eq(find(0x7f9268ec72a0), "void java.lang.System.arraycopy(java.lang.Object, "
		"int, java.lang.Object, int, int)");
	cr_expect_str_eq(find(0x7f000f), "upper case prefix");
	cr_expect_str_eq(find(0x7f1001), "tabs");
	cr_expect_str_eq(find(0x7f2002), "blanks before each number");
	cr_expect_str_eq(find(0x7f3003), "plus signs");
	cr_expect_str_eq(find(0x7f4004), "other separators");
	cr_expect_str_eq(find(0x7f5005), "zeros past sixteen digits");
	cr_expect_str_eq(find(0x7f6006), " a name's own blanks ");
	cr_expect_str_eq(find(0x7f7007), "x");
	cr_expect_str_eq(find(0x7f9268ec73a0), "(none)", "the size bounds the entry");
}

/* What perf's reader would take but names no code, and what is no number at all. */
Test(sym_perfmap, refuses_lines_that_name_no_code)
{
	write_map("w", "-7f0000 10 negated\n"
		       "7f1000 -10 negated size\n"
		       "10000000000000007f2000 10 past 64 bits\n"
		       "zz 10 no digits\n"
		       "7f3000 0x100000000 past 4 GiB\n"
		       "7f4000 10\n"
		       "7f5000\n"
		       "7f6000 10 kept\n");
	cr_expect_str_eq(find(0x7f0000), "(none)");
	cr_expect_str_eq(find(0x7f1000), "(none)");
	cr_expect_str_eq(find(0x7f2000), "(none)");
	cr_expect_str_eq(find(0x5), "(none)");
	cr_expect_str_eq(find(0x7f3000), "(none)");
	cr_expect_str_eq(find(0x7f4000), "(none)");
	cr_expect_str_eq(find(0x7f5000), "(none)");
	cr_expect_str_eq(find(0x7f6000), "kept");
}

Test(sym_perfmap, links_fifos_and_devices_are_refused_and_named_once)
{
	char secret[128], *text;
	double t0;

	snprintf(secret, sizeof(secret), "%s/secret", dir);
	cr_assert_eq(symlink(secret, map), 0);
	write_map("w", "0 7fffffffffff SECRET\n");	/* through the link: the root-only file */
	cr_assert_eq(chmod(secret, 0600), 0);
	cr_expect_str_eq(find(0x1000), "(none)");
	cr_expect_str_eq(find(0x2000), "(none)");
	text = refusals();
	cr_expect(strstr(text, map) && strstr(text, "a symbolic link"), "%s", text);
	free(text);
	cr_expect_eq(foreign_log__count(env.refused), 1, "named more than once");

	cr_assert_eq(unlink(map), 0);
	cr_assert_eq(mkfifo(map, 0666), 0);
	sym_perfmap__free(m);
	m = sym_perfmap__new(&env, PID, UID);
	t0 = now_s();
	cr_expect_str_eq(find(0x1000), "(none)");
	cr_expect_lt(now_s() - t0, 1.0, "the FIFO's open waited");

	cr_assert_eq(unlink(map), 0);
	cr_assert_eq(symlink("/dev/zero", map), 0);
	sym_perfmap__free(m);
	m = sym_perfmap__new(&env, PID, UID);
	cr_expect_str_eq(find(0x1000), "(none)");
	cr_expect_eq(foreign_log__count(env.refused), 3);
}

Test(sym_perfmap, a_sparse_gigabyte_costs_one_line_bound)
{
	char *text;
	double t0;
	int fd = open(map, O_WRONLY | O_CREAT, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1ll << 30), 0);
	close(fd);
	t0 = now_s();
	cr_expect_str_eq(find(0x1000), "(none)");
	cr_expect_lt(now_s() - t0, 0.5, "reading the sparse map took %.2f s", now_s() - t0);
	cr_expect_str_eq(find(0x1000), "(none)");
	text = refusals();
	cr_expect(strstr(text, map) && strstr(text, "a line too long"), "%s", text);
	free(text);
	cr_expect_eq(foreign_log__count(env.refused), 1, "named more than once");
}

Test(sym_perfmap, owner_must_be_the_process_user_or_root)
{
	char *text;

	write_map("w", "1000 10 mine\n");
	if (geteuid() != 0)
		cr_skip_test("chown needs root");
	cr_assert_eq(chown(map, UID, UID), 0);
	cr_expect_str_eq(find(0x1000), "mine");
	sym_perfmap__free(m);
	m = sym_perfmap__new(&env, PID, UID + 1);
	cr_expect_str_eq(find(0x1000), "(none)");
	text = refusals();
	cr_expect(strstr(text, "owned by another user"), "%s", text);
	free(text);
}

Test(sym_perfmap, a_map_that_shrinks_is_given_up)
{
	write_map("w", "1000 10 before\n2000 10 other\n");
	cr_expect_str_eq(find(0x1000), "before");
	write_map("w", "1000 10 after\n");
	cr_expect_str_eq(find(0x1000), "(none)");
	cr_expect_eq(foreign_log__count(env.refused), 1);
}

Test(sym_perfmap, the_budget_bounds_every_map_together)
{
	struct sym_perfmap *other;
	char line[160], *text;
	FILE *f = fopen(map, "w");

	cr_assert_not_null(f);
	for (int i = 0; i < 5000; i++) {
		snprintf(line, sizeof(line), "%x 10 fn%d\n", 0x100000 + i * 0x10, i);
		fputs(line, f);
	}
	fclose(f);
	env.budget = 2048 * 24;	/* room for 2048 lines */
	cr_expect_str_eq(find(0x100000), "fn0");
	cr_expect_str_eq(find(0x100000 + 4999 * 0x10), "(none)");
	cr_expect_lt(env.budget, 24);
	text = refusals();
	cr_expect(strstr(text, "too large"), "%s", text);
	free(text);
	/* Another map finds the budget spent; freeing the first gives its bytes back. */
	snprintf(line, sizeof(line), "%s/perf-%d.map", dir, PID + 1);
	f = fopen(line, "w");
	fputs("1000 10 x\n", f);
	fclose(f);
	other = sym_perfmap__new(&env, PID + 1, UID);
	cr_expect_null(sym_perfmap__find(other, 0x1000));
	sym_perfmap__free(other);
	sym_perfmap__free(m);
	m = NULL;
	cr_expect_eq(env.budget, 2048 * 24);
	other = sym_perfmap__new(&env, PID + 1, UID);
	/* The other map was refused for good as a map of that process image; a new image reads. */
	cr_expect_str_eq(sym_perfmap__find(other, 0x1000) ?: "(none)", "x");
	sym_perfmap__free(other);
}
