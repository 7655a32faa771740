/* test_report_safety.c - what `lxtrace report` and `pprof` make of files lxtrace never writes
 * but anyone may hand them: each event keeps the stack it was written under, and a file that
 * `dump` refuses they refuse too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/v1bytes.h"
#include "user/report/profile.h"

TestSuite(report_safety, .timeout = 60);

static const struct walk_filter everything = { .to_ns = UINT64_MAX };

/* The folded CPU profile of the file, or NULL with the refusal in err. */
static char *folded_cpu(const struct v1bytes *b, char *err, size_t errlen)
{
	struct profile *p;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int fd = v1b_memfd(b);

	cr_assert(fd >= 0);
	if (profile__read(fd, PROFILE_CPU, &everything, &p, err, errlen)) {
		close(fd);
		return NULL;
	}
	out = open_memstream(&text, &len);
	cr_assert(out);
	cr_assert_eq(profile__write_folded(p, out), 0);
	fclose(out);
	profile__free(p);
	close(fd);
	return text;
}

static void sample(struct v1bytes *b, uint64_t ts, uint64_t stk)
{
	V1B(b, GT_EV_CPU_SAMPLE, 0, ts, 0, 0, stk);
}

/* Go lets a file define a stack id again (docs/format.md §4): a sample taken under the first
 * definition stays there, one under the third goes to the third, whatever the allocator
 * does with the second. */
Test(report_safety, a_stack_id_defined_again_keeps_each_sample_where_it_was_taken)
{
	struct v1bytes b;
	char err[256] = "", *text;

	v1b_init(&b);
	v1b_batch(&b, 0, 100);
	v1b_frequency(&b, 1000000000);
	v1b_string(&b, 1, "funcA");
	v1b_string(&b, 2, "funcB");
	v1b_string(&b, 3, "funcC");
	v1b_string(&b, 4, "f.go");
	v1b_stack1(&b, 1, 0x10, 1, 4, 1);
	sample(&b, 101, 1);
	v1b_stack1(&b, 1, 0x20, 2, 4, 2);
	v1b_stack1(&b, 1, 0x30, 3, 4, 3);
	sample(&b, 102, 1);
	V1B(&b, GT_EV_HEAP_ALLOC, 3, 5);
	text = folded_cpu(&b, err, sizeof(err));
	cr_assert(text, "%s", err);
	cr_expect_str_eq(text, "funcA 1\nfuncC 1\n");
	free(text);
}
