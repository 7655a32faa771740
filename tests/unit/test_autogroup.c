/* test_autogroup.c - the session's nice under scheduling by session (lib/autogroup.h): raised
 * only where the kernel groups by session and only when higher, given back as it was; read
 * and written in a fake /proc. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/autogroup.h"

static char root[] = "/tmp/lxtrace-autogroup-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static const char *got(const char *name)
{
	static char buf[128];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void setup(void)
{
	char dir[256];

	cr_assert_not_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/sys", root);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/sys/kernel", root);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/self", root);
	mkdir(dir, 0700);
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(autogroup, .init = setup, .fini = teardown);

Test(autogroup, the_session_is_raised_and_given_back)
{
	struct autogroup g;

	put("sys/kernel/sched_autogroup_enabled", "1\n");
	put("self/autogroup", "/autogroup-46691 nice 0\n");
	cr_assert_eq(autogroup__raise(&g, root, -10), 0);
	cr_expect_str_eq(got("self/autogroup"), "-10");
	autogroup__restore(&g, root);
	cr_expect_str_eq(got("self/autogroup"), "0");
	/* Once. */
	put("self/autogroup", "/autogroup-46691 nice -10\n");
	autogroup__restore(&g, root);
	cr_expect_str_eq(got("self/autogroup"), "/autogroup-46691 nice -10\n");
}

Test(autogroup, nothing_without_scheduling_by_session_or_when_higher_already)
{
	struct autogroup g;

	put("sys/kernel/sched_autogroup_enabled", "0\n");
	put("self/autogroup", "/autogroup-7 nice 0\n");
	cr_assert_eq(autogroup__raise(&g, root, -10), 0);
	cr_expect_str_eq(got("self/autogroup"), "/autogroup-7 nice 0\n");
	put("sys/kernel/sched_autogroup_enabled", "1\n");
	put("self/autogroup", "/autogroup-7 nice -15\n");
	cr_assert_eq(autogroup__raise(&g, root, -10), 0);
	autogroup__restore(&g, root);
	cr_expect_str_eq(got("self/autogroup"), "/autogroup-7 nice -15\n");
}
