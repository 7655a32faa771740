/* test_format_dedup.c - the writer's bounded tables: a key used in every generation keeps its
 * id, one left unused for a generation is forgotten and gets a new id, memory stays under
 * twice the budget, and the locations of definitions are known until they are written. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "format/dedup.h"

#define BUDGET 4096

static uint64_t add(struct gt_dedup *d, const char *key, uint64_t loc)
{
	uint64_t id;

	cr_assert_eq(gt_dedup__find(d, key, strlen(key)), 0, "%s is known", key);
	if (gt_dedup__full(d))
		gt_dedup__rotate(d, NULL, NULL);
	id = gt_dedup__add(d, key, strlen(key), loc);
	cr_assert(id);
	return id;
}

Test(format_dedup, ids_start_above_the_base_and_locations_are_kept)
{
	struct gt_dedup *d = gt_dedup__new(100, BUDGET);
	uint64_t loc;

	cr_assert_eq(gt_dedup__max_id(d), 100);
	cr_assert_eq(add(d, "a", 7), 101);
	cr_assert_eq(add(d, "b", 8), 102);
	cr_assert_eq(gt_dedup__find(d, "a", 1), 101);
	cr_assert_eq(gt_dedup__loc(d, 102, &loc), 0);
	cr_assert_eq(loc, 8);
	cr_assert_eq(gt_dedup__loc(d, 100, &loc), -EINVAL);
	cr_assert_eq(gt_dedup__loc(d, 103, &loc), -EINVAL);
	cr_assert_eq(gt_dedup__max_id(d), 102);
	/* After a rotation the caller has written them: no location any more, still valid. */
	gt_dedup__rotate(d, NULL, NULL);
	cr_assert_eq(gt_dedup__loc(d, 101, &loc), 0);
	cr_assert_eq(loc, GT_DEDUP_WRITTEN);
	gt_dedup__free(d);
}

Test(format_dedup, forgets_what_a_generation_left_unused)
{
	struct gt_dedup *d = gt_dedup__new(0, BUDGET);
	struct gt_dedup_stats st;
	uint64_t hot = add(d, "hot", 1), cold = add(d, "cold", 1), cold2, max_bytes = 0;
	char key[32];

	for (unsigned i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "key-%u", i);
		add(d, key, 2);
		cr_assert_eq(gt_dedup__find(d, "hot", 3), hot, "the hot key changed id at %u", i);
		gt_dedup__stats(d, &st);
		if (st.bytes > max_bytes)
			max_bytes = st.bytes;
	}
	gt_dedup__stats(d, &st);
	cr_assert_gt(st.generations, 10);
	cr_assert_eq(st.defined, 20002);
	/* Everything but the hot key was forgotten, some of it still remembered. */
	cr_assert_gt(st.forgotten, 20000 - 2 * BUDGET / 16);
	cr_assert_leq(max_bytes, 2 * BUDGET + 64, "held %llu bytes", (unsigned long long)max_bytes);
	/* The cold key comes back: a new id. */
	cr_assert_eq(gt_dedup__find(d, "cold", 4), 0);
	cold2 = add(d, "cold", 3);
	cr_assert_neq(cold2, cold);
	cr_assert_eq(cold2, gt_dedup__max_id(d));
	gt_dedup__free(d);
}

static void note_forgot(void *ctx, uint64_t id)
{
	uint8_t *forgot = ctx;

	cr_assert_lt(id, 64);
	cr_assert_eq(forgot[id]++, 0, "id %llu forgotten twice", (unsigned long long)id);
}

/* A rotation reports each id it forgets for good, once; a key used again in the generation
 * that follows its definition moves with it and stays live under its id. */
Test(format_dedup, reports_what_it_forgets_and_knows_what_is_live)
{
	struct gt_dedup *d = gt_dedup__new(0, BUDGET);
	uint8_t forgot[64] = { 0 };
	uint64_t a = gt_dedup__add(d, "a", 1, 1), b = gt_dedup__add(d, "b", 1, 1), c;

	cr_assert(gt_dedup__live(d, a) && gt_dedup__live(d, b));
	cr_assert_not(gt_dedup__live(d, 0));
	cr_assert_not(gt_dedup__live(d, b + 1));
	gt_dedup__rotate(d, note_forgot, forgot);	/* a and b: the previous generation */
	cr_assert(gt_dedup__live(d, a) && gt_dedup__live(d, b));
	cr_assert_eq(gt_dedup__find(d, "a", 1), a);	/* a moves to the current one */
	c = gt_dedup__add(d, "c", 1, 2);
	gt_dedup__rotate(d, note_forgot, forgot);	/* b is forgotten */
	cr_assert(forgot[b] == 1 && !forgot[a] && !forgot[c]);
	cr_assert(gt_dedup__live(d, a) && gt_dedup__live(d, c));
	cr_assert_not(gt_dedup__live(d, b));
	gt_dedup__rotate(d, note_forgot, forgot);	/* a (moved) and c */
	gt_dedup__rotate(d, note_forgot, forgot);
	cr_assert(forgot[a] == 1 && forgot[c] == 1);
	cr_assert_not(gt_dedup__live(d, a) || gt_dedup__live(d, c));
	cr_assert_eq(gt_dedup__find(d, "a", 1), 0);
	gt_dedup__free(d);
}
