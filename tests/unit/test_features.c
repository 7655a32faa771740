/* test_features.c - what the summary and --check say of a kernel (user/capture/features.h): each
 * feature a recording misses once, only those it uses, in lines of at most 79 columns; and the
 * mask that makes this kernel play an older one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/features.h"

/* A 6.1 kernel: everything but the VMA iterator and group_dead. */
static struct features kernel_6_1(void)
{
	struct features f = { .release = "6.1.0-50-cloud-amd64", .thread_size = 16384 };

	for (int i = 0; i < FEAT_COUNT; i++)
		f.have[i] = true;
	f.have[FEAT_VMA_ITER] = false;
	f.have[FEAT_EXIT_GROUP] = false;
	return f;
}

/* Everything written by print, each line checked to fit 79 columns. */
static char *printed(void (*print)(const struct features *, unsigned, FILE *),
		     const struct features *f, unsigned uses)
{
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert_not_null(out);
	print(f, uses, out);
	fclose(out);
	for (line = buf; *line; ) {
		size_t n = strcspn(line, "\n");

		cr_expect_leq(n, 79, "a line of %zu columns: %.*s", n, (int)n, line);
		line += n + (line[n] == '\n');
	}
	return buf;
}

static void missing(const struct features *f, unsigned uses, FILE *out)
{
	features__print_missing(f, uses, "    without:    ", out);
}

static void table(const struct features *f, unsigned uses, FILE *out)
{
	features__print_table(f, out);
}

Test(features, a_recording_is_told_what_it_missed_once_and_only_what_it_uses)
{
	struct features f = kernel_6_1();
	char *all = printed(missing, &f, USE_ALWAYS | USE_USER_STACKS), *none;

	cr_expect(strstr(all, "VMA iterator"), "%s", all);
	cr_expect(strstr(all, "signal->live"), "%s", all);
	cr_expect_null(strstr(all, "frame pointers only"), "%s", all);
	cr_expect_eq(strstr(strstr(all, "VMA iterator") + 1, "VMA iterator"), NULL,
		     "named twice: %s", all);
	/* No user stacks taken: the tables do not matter. */
	none = printed(missing, &f, USE_ALWAYS);
	cr_expect_null(strstr(none, "VMA iterator"), "%s", none);
	cr_expect(strstr(none, "signal->live"), "%s", none);
	free(all);
	free(none);
}

Test(features, refused_typed_programs_are_said_with_why)
{
	struct features f = kernel_6_1();
	char *out;

	snprintf(f.modern_failed, sizeof(f.modern_failed), "btf_fork: Permission denied");
	cr_expect_not(features__cfi_stacks(&f));
	out = printed(missing, &f, USE_USER_STACKS);
	cr_expect(strstr(out, "frame pointers only"), "%s", out);
	cr_expect(strstr(out, "btf_fork: Permission denied"), "%s", out);
	/* The tables are the walker's: without it, the iterator is not missed. */
	cr_expect_null(strstr(out, "VMA iterator"), "%s", out);
	free(out);
}

Test(features, the_table_lists_every_feature)
{
	struct features f = kernel_6_1();
	char *out = printed(table, &f, 0);
	enum feature missing_one;

	for (int i = 0; i < FEAT_COUNT; i++)
		cr_expect(strstr(out, features__name(i)), "%s not in:\n%s", features__name(i), out);
	cr_expect(features__enough(&f, NULL));
	f.have[FEAT_RINGBUF] = false;
	cr_expect_not(features__enough(&f, &missing_one));
	cr_expect_eq(missing_one, FEAT_RINGBUF);
	free(out);
}
