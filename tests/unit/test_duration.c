/* test_duration.c - the one duration reader (lib/duration.h), as record, cut and triggers use
 * it: exact nanoseconds, the same rule everywhere (before, record -d 800ms was refused while
 * cut --to 800ms was taken). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "lib/duration.h"

static int parse(const char *s, bool unit, uint64_t *ns)
{
	return duration__parse(s, strlen(s), unit, ns);
}

Test(duration, units_and_bare_seconds_read_exactly)
{
	static const struct { const char *s; uint64_t ns; } cases[] = {
		{ "2.5", 2500000000ull }, { "2.5s", 2500000000ull }, { "2500ms", 2500000000ull },
		{ "800ms", 800000000ull }, { "250us", 250000ull }, { "10ns", 10 }, { "0", 0 },
		{ "0.000000001", 1 }, { "1.0000000001", 1000000000ull }, { "18446744073s", 18446744073000000000ull },
	};
	uint64_t ns;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect_eq(parse(cases[i].s, false, &ns), 0, "%s", cases[i].s);
		cr_expect_eq(ns, cases[i].ns, "%s: %llu ns", cases[i].s, (unsigned long long)ns);
	}
}

Test(duration, refusals_say_which_kind)
{
	uint64_t ns;

	cr_expect_eq(parse("", false, &ns), -EINVAL);
	cr_expect_eq(parse("-1", false, &ns), -EINVAL);
	cr_expect_eq(parse("+1", false, &ns), -EINVAL);
	cr_expect_eq(parse(".5", false, &ns), -EINVAL);
	cr_expect_eq(parse("1e3", false, &ns), -EINVAL);
	cr_expect_eq(parse("5m", false, &ns), -EINVAL);
	cr_expect_eq(parse("5 ms", false, &ns), -EINVAL);
	cr_expect_eq(parse("50", true, &ns), -ENOMSG, "a threshold needs its unit");
	cr_expect_eq(parse("18446744074s", false, &ns), -ERANGE);
	cr_expect_eq(parse("99999999999999999999", false, &ns), -ERANGE);
	/* len bounds the text: a trigger's threshold inside "sched-latency>50ms,comm=x". */
	cr_expect_eq(duration__parse("50ms,comm=x", 4, true, &ns), 0);
	cr_expect_eq(ns, 50000000ull);
}
