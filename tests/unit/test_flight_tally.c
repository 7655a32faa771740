/* test_flight_tally.c - the triggers without a file, grouped by trigger and thread: counts,
 * first and last times, the longest firing, and the bound on groups. */
#include <criterion/criterion.h>

#include "user/flight/tally.h"

#define MS 1000000ull

static void add(struct tally *t, const struct trigger *tr, uint32_t tid, uint64_t ts, uint64_t ns)
{
	tally__add(t, &(struct trigger_fired){ .ts = ts, .trigger = tr, .nr = -1, .ns = ns,
					       .tid = tid });
}

Test(flight_tally, groups_by_trigger_and_thread)
{
	struct trigger lat = { .kind = TRIGGER_SCHED_LATENCY }, off = { .kind = TRIGGER_OFFCPU };
	struct tally t = { 0 };

	for (uint64_t i = 0; i < 100; i++)
		add(&t, &lat, 7, (100 + i) * MS, (i == 40 ? 90 : 60) * MS);
	add(&t, &lat, 8, 500 * MS, 70 * MS);
	add(&t, &off, 7, 600 * MS, 2000 * MS);
	/* SIGUSR1 twice, then a record delivered a little late. */
	add(&t, NULL, 0, 700 * MS, 0);
	add(&t, NULL, 0, 800 * MS, 0);
	add(&t, NULL, 0, 650 * MS, 0);

	cr_assert_eq(t.ngroups, 4);
	cr_expect_eq(t.g[0].n, 100);
	cr_expect_eq(t.g[0].first_ts, 100 * MS);
	cr_expect_eq(t.g[0].last_ts, 199 * MS);
	cr_expect(t.g[0].longest.ns == 90 * MS && t.g[0].longest.ts == 140 * MS,
		  "the longest of the group is kept");
	cr_expect(t.g[1].n == 1 && t.g[1].longest.tid == 8);
	cr_expect(t.g[2].n == 1 && t.g[2].longest.trigger == &off);
	cr_expect(t.g[3].n == 3 && t.g[3].first_ts == 650 * MS && t.g[3].last_ts == 800 * MS);
	cr_expect(t.g[3].longest.ts == 700 * MS, "a record's group shows its first");
	cr_expect_eq(t.others, 0);
}

Test(flight_tally, a_storm_on_many_threads_keeps_a_few_groups)
{
	struct trigger lat = { .kind = TRIGGER_SCHED_LATENCY };
	struct tally t = { 0 };

	for (uint32_t tid = 1; tid <= 1000; tid++)
		for (int k = 0; k < 3; k++)
			add(&t, &lat, tid, tid * MS, 60 * MS);
	cr_expect_eq(t.ngroups, TALLY_GROUPS);
	for (size_t i = 0; i < TALLY_GROUPS; i++)
		cr_expect(t.g[i].n == 3 && t.g[i].longest.tid == i + 1);
	cr_expect_eq(t.others, 3 * (1000 - TALLY_GROUPS));
}
