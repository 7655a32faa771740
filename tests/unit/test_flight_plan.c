/* test_flight_plan.c - which triggers get a flight recorder file, and when it is due. */
#include <criterion/criterion.h>

#include "user/flight/plan.h"

#define MS 1000000ull

Test(flight_plan, file_due_after_the_trigger_then_ready_for_the_next)
{
	struct flight_plan p;

	flight_plan__init(&p, 500 * MS, 0, 0);
	cr_assert_eq(flight_plan__trigger(&p, 1000 * MS), FLIGHT_FILE);
	cr_expect_not(flight_plan__due(&p, 1499 * MS));
	cr_expect(flight_plan__due(&p, 1500 * MS));
	/* Inside the --after span: the pending file covers it. */
	cr_expect_eq(flight_plan__trigger(&p, 1500 * MS), FLIGHT_IN_PENDING);
	flight_plan__written(&p);
	cr_expect_not(flight_plan__due(&p, 9999 * MS));
	cr_expect_eq(flight_plan__trigger(&p, 1501 * MS), FLIGHT_FILE);
	cr_expect_eq(p.st.fired, 3);
	cr_expect_eq(p.st.files, 1);
	cr_expect_eq(p.st.in_pending, 1);
}

Test(flight_plan, gap_keeps_a_storm_from_making_files)
{
	struct flight_plan p;
	unsigned files = 0;

	/* A stall every 100 ms for 10 s, at most one file per 2 s, written at once. */
	flight_plan__init(&p, 0, 2000 * MS, 0);
	for (uint64_t t = 100 * MS; t <= 10000 * MS; t += 100 * MS) {
		if (flight_plan__trigger(&p, t) == FLIGHT_FILE)
			files++;
		if (flight_plan__due(&p, t))
			flight_plan__written(&p);
	}
	cr_expect_eq(files, 5);
	cr_expect_eq(p.st.files, 5);
	cr_expect_eq(p.st.too_soon, 95);
	/* Exactly gap after the last file's trigger is no longer too soon. */
	flight_plan__init(&p, 0, 2000 * MS, 0);
	cr_expect_eq(flight_plan__trigger(&p, 1000 * MS), FLIGHT_FILE);
	flight_plan__written(&p);
	cr_expect_eq(flight_plan__trigger(&p, 2999 * MS), FLIGHT_TOO_SOON);
	cr_expect_eq(flight_plan__trigger(&p, 3000 * MS), FLIGHT_FILE);
}

Test(flight_plan, max_files_then_done)
{
	struct flight_plan p;

	flight_plan__init(&p, 100 * MS, 0, 3);
	for (uint64_t i = 0; i < 3; i++) {
		cr_expect_not(flight_plan__done(&p));
		cr_assert_eq(flight_plan__trigger(&p, (i + 1) * 1000 * MS), FLIGHT_FILE);
		/* Past its due time, a pending file not yet begun holds the trigger. */
		if (i == 2)
			cr_expect_eq(flight_plan__trigger(&p, 3200 * MS), FLIGHT_IN_PENDING);
		flight_plan__written(&p);
	}
	cr_expect(flight_plan__done(&p));
	cr_expect_eq(flight_plan__trigger(&p, 9000 * MS), FLIGHT_NO_MORE);
	cr_expect_eq(p.st.files, 3);
	cr_expect_eq(p.st.no_more, 1);
	cr_expect_eq(p.st.in_pending, 1);
}

Test(flight_plan, late_trigger_is_too_soon)
{
	struct flight_plan p;

	flight_plan__init(&p, 0, 100 * MS, 0);
	cr_assert_eq(flight_plan__trigger(&p, 1000 * MS), FLIGHT_FILE);
	flight_plan__written(&p);
	cr_expect_eq(flight_plan__trigger(&p, 900 * MS), FLIGHT_TOO_SOON);
}

/* A file that cannot be opened is given up: counted, and the next trigger gets one. */
Test(flight_plan, an_abandoned_file_frees_the_next_trigger)
{
	struct flight_plan p;

	flight_plan__init(&p, 0, 0, 0);
	cr_assert_eq(flight_plan__trigger(&p, 1000 * MS), FLIGHT_FILE);
	flight_plan__abandon(&p);
	cr_expect_not(flight_plan__due(&p, 2000 * MS));
	cr_expect_eq(flight_plan__trigger(&p, 2000 * MS), FLIGHT_FILE);
	cr_expect_eq(p.st.abandoned, 1);
	cr_expect_eq(p.st.files, 0);
}
