/* test_shed.c - what a recorder behind sheds (user/capture/shed.h): waits from half a second
 * behind, symbols from a second and a half, each until caught up to its lower mark, not on and
 * off around one mark; the records of the start count from the recording's start; spells and
 * their time are counted. */
#include <criterion/criterion.h>

#include "user/capture/shed.h"

#define MS (1000 * 1000ULL)

Test(shed, waits_then_symbols_each_until_caught_up)
{
	struct shed s = { 0 };
	uint64_t now = 10000 * MS;

	shed__update(&s, now - 20 * MS, now);
	cr_expect(!s.waits.on && !s.symbols.on, "the ordering window: nothing");
	shed__update(&s, now - SHED_WAITS_AFTER_NS + MS, now);
	cr_expect(!s.waits.on);
	shed__update(&s, now - SHED_WAITS_AFTER_NS, now);
	cr_expect(s.waits.on && !s.symbols.on, "waits first");
	shed__update(&s, now - SHED_SYMBOLS_AFTER_NS, now);
	cr_expect(s.waits.on && s.symbols.on);
	/* Between the marks each stays as it is. */
	now += 100 * MS;
	shed__update(&s, now - SHED_SYMBOLS_UNTIL_NS - MS, now);
	cr_expect(s.waits.on && s.symbols.on);
	now += 100 * MS;
	shed__update(&s, now - SHED_SYMBOLS_UNTIL_NS, now);
	cr_expect(s.waits.on && !s.symbols.on, "symbols again first");
	now += 100 * MS;
	shed__update(&s, now - SHED_WAITS_UNTIL_NS, now);
	cr_expect(!s.waits.on && !s.symbols.on);
	/* And off between them. */
	shed__update(&s, now - 300 * MS, now);
	cr_expect(!s.waits.on);
	cr_expect_eq(s.waits.spells, 1);
	cr_expect_eq(s.symbols.spells, 1);
	cr_expect_eq(s.waits.ns, 300 * MS);
	cr_expect_eq(s.symbols.ns, 200 * MS);
	cr_expect_eq(s.worst, SHED_SYMBOLS_AFTER_NS);
}

Test(shed, time_counts_the_spell_under_way)
{
	struct shed s = { 0 };

	shed__update(&s, 0, 1000 * MS);
	cr_assert(s.waits.on);
	shed__update(&s, 1500 * MS, 1550 * MS);
	cr_assert(!s.waits.on);
	shed__update(&s, 2000 * MS, 3000 * MS);
	cr_assert(s.waits.on);
	cr_expect_eq(s.waits.spells, 2);
	cr_expect_eq(shed__ns(&s.waits, 3250 * MS), 550 * MS + 250 * MS);
	cr_expect_eq(shed__ns(&s.symbols, 3250 * MS), 0);
}

/* Records read once a busy start is over are late by the start: not a recorder behind. */
Test(shed, records_of_the_start_count_from_its_end)
{
	struct shed s = { .from = 5000 * MS };

	shed__update(&s, 1000 * MS, 5100 * MS);
	cr_expect(!s.waits.on);
	cr_expect_eq(s.worst, 100 * MS);
	shed__update(&s, 1000 * MS, 5000 * MS + SHED_WAITS_AFTER_NS);
	cr_expect(s.waits.on);
}

/* A clock read before the record's stamp (another CPU's clock a little ahead) is not behind. */
Test(shed, a_record_from_the_future_is_not_behind)
{
	struct shed s = { 0 };

	shed__update(&s, 2000 * MS, 1000 * MS);
	cr_expect(!s.waits.on);
	cr_expect_eq(s.worst, 0);
}
