/* test_pcclaims.c - one PC, one frame, in bounded memory: a claim in use keeps its PC, a PC
 * whose claim was forgotten is never handed to another frame. */
#include <criterion/criterion.h>

#include "user/stacks/pcclaims.h"
#include "user/stacks/symbolize.h"

#define A 0x55d0c0de1000ull

Test(pcclaims, a_taken_pc_moves_the_same_way_each_time)
{
	struct pcclaims *c = pcclaims__new(1024, SYM_PC_SYNTHETIC | SYM_PC_REMAPPED, SYM_PC_REMAPPED - 1);
	uint64_t other;

	cr_assert(c);
	cr_assert_eq(pcclaims__claim(c, A, 1), A);
	cr_assert_eq(pcclaims__claim(c, A, 1), A);
	other = pcclaims__claim(c, A, 2);
	cr_assert_neq(other, A);
	cr_assert(other & SYM_PC_SYNTHETIC && other & SYM_PC_REMAPPED);
	cr_assert_eq(pcclaims__claim(c, A, 2), other);
	pcclaims__free(c);
}

Test(pcclaims, forgotten_pcs_go_to_no_other_frame)
{
	struct pcclaims *c = pcclaims__new(16, SYM_PC_SYNTHETIC | SYM_PC_REMAPPED, SYM_PC_REMAPPED - 1);
	struct pcclaims_stats st;
	uint64_t again, other;

	cr_assert(c);
	cr_assert_eq(pcclaims__claim(c, A, 1), A);
	cr_assert_eq(pcclaims__claim(c, A + 1, 7), A + 1);
	for (uint64_t i = 0; i < 1000; i++) {
		cr_assert_eq(pcclaims__claim(c, 0x400000 + i, 100 + i), 0x400000 + i);
		/* In use all along: keeps its PC. */
		cr_assert_eq(pcclaims__claim(c, A + 1, 7), A + 1);
	}
	pcclaims__stats(c, &st);
	cr_assert_gt(st.generations, 10);
	/* A's claim is forgotten: another frame must not get A, nor the PC A's frame gets now. */
	other = pcclaims__claim(c, A, 2);
	again = pcclaims__claim(c, A, 1);
	cr_assert_neq(other, A);
	cr_assert_neq(again, other);
	cr_assert_eq(pcclaims__claim(c, A, 2), other);
	cr_assert_eq(pcclaims__claim(c, A, 1), again);
	pcclaims__free(c);
}
