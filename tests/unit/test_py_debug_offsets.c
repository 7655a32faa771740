/* test_py_debug_offsets.c - 3.13's _Py_DebugOffsets, as a process publishes it, checked
 * against lxtrace's 3.13 table: the block pyenv's 3.13.0 holds agrees; a block forged to move
 * one offset, to say another build or version, or to lie about its sizes, does not. */
#include <criterion/criterion.h>
#include <string.h>

#include "user/stacks/py_debug_offsets.h"

/* The words of pyenv's 3.13.0 block (python3.13 -c, ctypes, the first 73 words of
 * _PyRuntime), in internal/pycore_runtime.h's order. */
static const uint64_t real_313[73] = {
	0x7970677562656478, 0x30d00f0, 0x0, 0x452b8, 0x260, 0x278,
	0x2f998, 0x1c68, 0x1c60, 0x1cb0, 0x1ce8, 0x1de8,
	0x1dd8, 0x1de0, 0x10, 0x1e48, 0x0, 0x1e58,
	0x1e50, 0x130, 0x0, 0x8, 0x10, 0x48,
	0x98, 0xa0, 0xe8, 0x20, 0x50, 0x8,
	0x0, 0x38, 0x48, 0x46, 0xd0, 0x70,
	0x78, 0x80, 0x88, 0x44, 0x34, 0x60,
	0x68, 0xc8, 0x10, 0x8, 0x1a0, 0x18,
	0x58, 0xa8, 0x20, 0x18, 0x10, 0x28,
	0x18, 0x10, 0x30, 0x20, 0x28, 0x18,
	0x10, 0x20, 0x10, 0x18, 0x28, 0x10,
	0x20, 0x40, 0x20, 0x10, 0x28, 0xf0,
	0xc8,
};

/* Word indexes of the fields the tests change. */
enum {
	W_COOKIE = 0, W_VERSION = 1, W_FREE_THREADED = 2, W_RUNTIME_SIZE = 3,
	W_INTERPRETERS_HEAD = 5, W_CURRENT_FRAME = 23, W_FRAME_OWNER = 33, W_CODE_QUALNAME = 37,
	W_STR_STATE = 68,
};

#define PY_3_13_0 0x030d00f0u

static enum py_debug_verdict check(const uint64_t *words, size_t len)
{
	return py_debug_offsets__check(words, len, PY_3_13_0, py_layouts__find(3, 13));
}

Test(py_debug_offsets, cpythons_own_block_agrees_with_the_table)
{
	cr_assert_eq(check(real_313, sizeof(real_313)), PY_DEBUG_AGREE);
}

Test(py_debug_offsets, one_offset_moved_disagrees)
{
	static const int fields[] = { W_INTERPRETERS_HEAD, W_CURRENT_FRAME, W_FRAME_OWNER,
				      W_CODE_QUALNAME, W_STR_STATE };
	uint64_t b[73];

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		memcpy(b, real_313, sizeof(b));
		b[fields[i]] += 8;
		cr_expect_eq(check(b, sizeof(b)), PY_DEBUG_DISAGREE, "word %d moved", fields[i]);
	}
}

Test(py_debug_offsets, a_free_threaded_build_disagrees)
{
	uint64_t b[73];

	memcpy(b, real_313, sizeof(b));
	b[W_FREE_THREADED] = 1;
	cr_assert_eq(check(b, sizeof(b)), PY_DEBUG_DISAGREE);
}

Test(py_debug_offsets, no_cookie_another_version_or_a_short_read_is_no_block)
{
	uint64_t b[73];

	memcpy(b, real_313, sizeof(b));
	memcpy(&b[W_COOKIE], "xdebugpz", 8);
	cr_expect_eq(check(b, sizeof(b)), PY_DEBUG_INVALID);
	memcpy(b, real_313, sizeof(b));
	b[W_VERSION] = 0x030e00a1;	/* 3.14's block is laid out otherwise */
	cr_expect_eq(check(b, sizeof(b)), PY_DEBUG_INVALID);
	cr_expect_eq(check(real_313, sizeof(real_313) - 1), PY_DEBUG_INVALID);
}

Test(py_debug_offsets, offsets_outside_their_structure_are_no_block)
{
	uint64_t b[73];

	memcpy(b, real_313, sizeof(b));
	b[W_RUNTIME_SIZE] = 16;	/* interpreters.head past it */
	cr_expect_eq(check(b, sizeof(b)), PY_DEBUG_INVALID);
	memcpy(b, real_313, sizeof(b));
	b[W_INTERPRETERS_HEAD] = UINT64_MAX - 4;	/* an offset + 8 that wraps */
	cr_expect_eq(check(b, sizeof(b)), PY_DEBUG_INVALID);
	memcpy(b, real_313, sizeof(b));
	b[W_RUNTIME_SIZE] = UINT64_MAX;
	cr_expect_eq(check(b, sizeof(b)), PY_DEBUG_INVALID);
}
