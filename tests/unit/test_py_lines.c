/* test_py_lines.c - a CPython 3.11 location table and a 3.10 line table read for each
 * instruction's line, as CPython's own code.co_lines() gives them; bad tables give 0, never a
 * read past the end. */
#include <criterion/criterion.h>

#include "user/stacks/py_lines.h"

/* f's co_linetable and co_lines() per code unit, from /usr/bin/python3 (3.11.2) compiling:
 *
 *   def f(a, b):              # line 2
 *       x = a + b
 *
 *       if x > 3:
 *           y = [i * 2
 *                for i in range(x)]
 *       else:
 *           y = None
 *       return (x,
 *               y)
 */
static const uint8_t table[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xe0, 0x07, 0x08,
	0x88, 0x31, 0x82, 0x75, 0x80, 0x75, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01,
	0x0d, 0x20, 0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01,
	0x0d, 0x20, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01,
	0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x11, 0x88, 0x01, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c,
	0x0d, 0xf0, 0x03, 0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f,
};
static const int lines[] = {
	2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 9, 9, 10, 11, 10, 10,
};

static int line311(int64_t i)
{
	return py_lines__line(PY_LINES_LOCATIONS, table, sizeof(table), 2, i);
}

Test(py_lines, every_instruction_on_cpythons_line)
{
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		cr_expect_eq(line311((int64_t)i), lines[i], "unit %zu: line %d, CPython says %d",
			     i, line311((int64_t)i), lines[i]);
}

Test(py_lines, before_the_first_instruction_is_the_first_line)
{
	cr_expect_eq(line311(-1), 2);
}

Test(py_lines, past_the_table_or_cut_short_is_unknown)
{
	cr_expect_eq(line311(1000), 0);
	/* Cut inside a long-form entry's varints: no byte past len is read (ASan). */
	for (size_t len = 0; len < sizeof(table); len++)
		(void)py_lines__line(PY_LINES_LOCATIONS, table, len, 2, 43);
}

Test(py_lines, not_a_table_is_unknown)
{
	static const uint8_t junk[] = { 0x01, 0x02, 0x03 };

	cr_expect_eq(py_lines__line(PY_LINES_LOCATIONS, junk, sizeof(junk), 2, 0), 0);
}

/* The same function's co_linetable and co_lines() per code unit from pyenv's 3.10.13, its def
 * on line 1 (3.10: pairs of a byte range and a line change; the comprehension is a code object
 * of its own). */
static const uint8_t table310[] = {
	0x08, 0x01, 0x08, 0x02, 0x06, 0x01, 0x06, 0x01, 0x06, 0xff, 0x02, 0x04,
	0x02, 0x01, 0x04, 0xff, 0x04, 0xff, 0x02, 0x01, 0x02, 0x01, 0x04, 0xff,
};
static const int lines310[] = {
	2, 2, 2, 2, 4, 4, 4, 4, 5, 5, 5, 6, 6, 6, 5, 5, 5, 9, 10, 9, 9, 8, 8, 9, 10, 9, 9,
};

static int line310(const uint8_t *tab, size_t len, int64_t i)
{
	return py_lines__line(PY_LINES_PEP626, tab, len, 1, i);
}

Test(py_lines, every_310_instruction_on_cpythons_line)
{
	for (size_t i = 0; i < sizeof(lines310) / sizeof(lines310[0]); i++)
		cr_expect_eq(line310(table310, sizeof(table310), (int64_t)i), lines310[i],
			     "unit %zu: line %d, CPython says %d", i,
			     line310(table310, sizeof(table310), (int64_t)i), lines310[i]);
	cr_expect_eq(line310(table310, sizeof(table310), -1), 1, "before the first: its def");
	cr_expect_eq(line310(table310, sizeof(table310), 27), 0, "past the table");
}

Test(py_lines, a_310_range_without_a_line_is_unknown_and_keeps_the_line)
{
	/* 2 bytes with no line (-128), then 2 bytes a line further, then 4 with no change. */
	static const uint8_t t[] = { 0x02, 0x80, 0x02, 0x01, 0x04, 0x00 };

	cr_expect_eq(line310(t, sizeof(t), 0), 0);
	cr_expect_eq(line310(t, sizeof(t), 1), 2);
	cr_expect_eq(line310(t, sizeof(t), 2), 2);
	cr_expect_eq(line310(t, sizeof(t), 3), 2);
	/* An odd length: the last byte is half an entry, never read as one. */
	cr_expect_eq(line310(t, 3, 1), 0);
}
