/* test_devino_map.c - file identities as the unwind-row loader keys its files by
 * (lib/devino_map.h): no two (device, inode) pairs share an entry. Before, the loader folded
 * both into one 64-bit key, and (dev 0, ino 2^48) was the same file as (dev 1, ino 0): a
 * FUSE file whose inode its owner picks could leave libc without rows. */
#include <criterion/criterion.h>

#include "lib/devino_map.h"

Test(devino_map, pairs_that_folded_together_are_apart)
{
	struct devino_map *m = devino_map__new();
	uint64_t *v;
	bool added;

	cr_assert_not_null(m);
	v = devino_map__put(m, 0, 1ull << 48, &added);
	cr_assert(v && added);
	*v = 7;
	v = devino_map__put(m, 1, 0, &added);
	cr_assert(v && added, "(1, 0) found (0, 2^48)'s entry");
	*v = 9;
	cr_expect_eq(*devino_map__get(m, 0, 1ull << 48), 7);
	cr_expect_eq(*devino_map__get(m, 1, 0), 9);
	cr_expect_null(devino_map__get(m, 2, 0));
	devino_map__free(m);
}

Test(devino_map, deleted_entries_come_back_fresh_and_leave_others_found)
{
	struct devino_map *m = devino_map__new();
	bool added;

	cr_assert_not_null(m);
	for (uint64_t i = 0; i < 5000; i++)
		*devino_map__put(m, i % 7, i, &added) = i + 1;
	for (uint64_t i = 0; i < 5000; i += 2)
		devino_map__del(m, i % 7, i);
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t *v = devino_map__get(m, i % 7, i);

		if (i % 2)
			cr_assert(v && *v == i + 1, "(%llu, %llu) lost", (unsigned long long)(i % 7),
				  (unsigned long long)i);
		else
			cr_assert_null(v, "(%llu, %llu) still there", (unsigned long long)(i % 7),
				       (unsigned long long)i);
	}
	cr_expect_eq(*devino_map__put(m, 0, 0, &added), 0);
	cr_expect(added, "a deleted pair put again is new");
	devino_map__free(m);
}
