/* test_u64cache.c - a cache of two generations: what is in use stays, what is not is forgotten,
 * and it never holds more than two generations of keys. */
#include <criterion/criterion.h>

#include "lib/u64cache.h"

Test(u64cache, a_key_in_use_stays_and_keeps_its_value)
{
	struct u64cache *c = u64cache__new(8);
	uint64_t v = 0;

	cr_assert(c);
	cr_assert_eq(u64cache__put(c, 42, 4200), 0);
	for (uint64_t i = 1; i <= 1000; i++) {
		cr_assert_eq(u64cache__put(c, 1000 + i, i), 0);
		cr_assert(u64cache__get(c, 42, &v), "lost after %llu keys", (unsigned long long)i);
		cr_assert_eq(v, 4200);
		cr_assert_leq(u64cache__count(c), 2 * 8);
	}
	cr_assert_gt(u64cache__generations(c), 100);
	u64cache__free(c);
}

Test(u64cache, a_key_unused_for_a_generation_is_forgotten)
{
	struct u64cache *c = u64cache__new(8);
	uint64_t v = 0;

	cr_assert(c);
	cr_assert_eq(u64cache__put(c, 42, 4200), 0);
	/* Fills the young generation, then a whole new one: 42's is emptied. */
	for (uint64_t i = 1; i <= 16; i++)
		cr_assert_eq(u64cache__put(c, 1000 + i, i), 0);
	cr_assert(u64cache__get(c, 1016, &v));
	cr_assert_eq(v, 16);
	cr_assert_not(u64cache__get(c, 42, &v));
	cr_assert_eq(u64cache__generations(c), 2);
	u64cache__free(c);
}

Test(u64cache, a_key_of_the_old_generation_moves_to_the_young_one)
{
	struct u64cache *c = u64cache__new(4);
	uint64_t v = 0;

	cr_assert(c);
	for (uint64_t i = 1; i <= 4; i++)
		cr_assert_eq(u64cache__put(c, i, 10 * i), 0);
	cr_assert_eq(u64cache__put(c, 5, 50), 0);	/* 1..4 are the old generation now */
	cr_assert(u64cache__get(c, 2, &v));		/* moves */
	cr_assert_eq(v, 20);
	cr_assert_eq(u64cache__put(c, 6, 60), 0);
	cr_assert_eq(u64cache__put(c, 7, 70), 0);	/* young full: 5, 2, 6, 7 */
	cr_assert_eq(u64cache__put(c, 8, 80), 0);	/* 1, 3, 4 forgotten */
	cr_assert(u64cache__get(c, 2, &v));
	cr_assert_eq(v, 20);
	cr_assert_not(u64cache__get(c, 1, &v));
	cr_assert_not(u64cache__get(c, 3, &v));
	u64cache__free(c);
}

/* Values that own memory: each told forgotten once, a moved one not while it is held. */
struct told {
	unsigned times[64];
	unsigned total;
};

static void told_forgotten(uint64_t key, uint64_t val, void *ctx)
{
	struct told *t = ctx;

	cr_assert_eq(val, key * 10, "key %llu forgotten with value %llu",
		     (unsigned long long)key, (unsigned long long)val);
	t->times[key]++;
	t->total++;
}

Test(u64cache, each_value_it_forgets_is_told_once)
{
	struct u64cache *c = u64cache__new(4);
	struct told t = { { 0 }, 0 };
	uint64_t v = 0;

	cr_assert(c);
	u64cache__on_forget(c, told_forgotten, &t);
	for (uint64_t i = 1; i <= 5; i++)
		cr_assert_eq(u64cache__put(c, i, 10 * i), 0);	/* 1..4 old, 5 young */
	cr_assert(u64cache__get(c, 2, &v));			/* moves, not copied */
	cr_assert_eq(u64cache__count(c), 5);
	for (uint64_t i = 6; i <= 8; i++)
		cr_assert_eq(u64cache__put(c, i, 10 * i), 0);	/* 1, 3, 4 forgotten */
	cr_assert_eq(t.total, 3);
	cr_assert(t.times[1] == 1 && t.times[3] == 1 && t.times[4] == 1);
	cr_assert_eq(t.times[2], 0, "a value moved to the young generation is still held");
	cr_assert(u64cache__get(c, 2, &v));
	cr_assert_eq(v, 20);
	for (uint64_t i = 9; i <= 10; i++)
		cr_assert_eq(u64cache__put(c, i, 10 * i), 0);	/* young full: 8, 2, 9, 10 */
	/* Moved with the young generation full: the generation it was in is emptied, it stays. */
	cr_assert(u64cache__get(c, 5, &v));
	cr_assert_eq(v, 50);
	cr_assert(t.times[5] == 0 && t.times[6] == 1 && t.times[7] == 1);
	u64cache__free(c);
	for (uint64_t i = 1; i <= 10; i++)
		cr_assert_eq(t.times[i], 1, "key %llu told %u times", (unsigned long long)i,
			     t.times[i]);
}
