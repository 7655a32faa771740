/* py_lines.c - CPython's line tables read for one instruction's line (py_lines.h).
 *
 * 3.11+: the location table is a run of entries, each covering 1 to 8 code units: a first
 * byte with its top bit set, a 4-bit code and the units covered less one, then the code's own
 * bytes. Codes 0-9 (short form) and 10-12 (one line: the line moves by code - 10) carry
 * columns only; 13 moves the line by a signed varint; 14 (long form) too, then three varints;
 * 15 has no location. Varints are 6 bits a byte, low first, bit 6 set on every byte but the
 * last; a signed one keeps its sign in bit 0.
 *
 * 3.10: pairs of bytes, each a range of code after the previous one: its length in bytes
 * (unsigned) and the line's change (signed; -128: the range has no line, the line unchanged).
 *
 * The tables come from another process: every read is bounded. */
#include "user/stacks/py_lines.h"

/* A varint at *at, not past end; *ok false when the table ends inside it. */
static uint64_t varint(const uint8_t *tab, size_t len, size_t *at, int *ok)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*at < len && shift < 60) {
		uint8_t b = tab[(*at)++];

		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			return v;
	}
	*ok = 0;
	return 0;
}

static int64_t svarint(const uint8_t *tab, size_t len, size_t *at, int *ok)
{
	uint64_t v = varint(tab, len, at, ok);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* A line as returned: 0 for none or one no file has. */
static int line_of(int64_t line)
{
	return line > 0 && line <= INT32_MAX ? (int)line : 0;
}

/* 3.10's table, as CPython's PyCode_Addr2Line reads it: the range holding the instruction's
 * byte offset, ranges of no length holding none. */
static int pep626_line(const uint8_t *tab, size_t len, int firstlineno, int64_t index)
{
	int64_t line = firstlineno, start, end = 0, at = index * 2;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)tab[i + 1];

		start = end;
		end += tab[i];
		if (delta != -128)
			line += delta;
		if (at >= start && at < end)
			return delta == -128 ? 0 : line_of(line);
	}
	return 0;
}

static int locations_line(const uint8_t *tab, size_t len, int firstlineno, int64_t index)
{
	int64_t line = firstlineno, addr = 0;
	size_t at = 0;
	int ok = 1;

	while (at < len && ok) {
		uint8_t b = tab[at++];
		unsigned code = (b >> 3) & 15, units = (b & 7) + 1;
		int known = 1;

		if (!(b & 128))
			return 0;	/* not an entry's first byte: not a table */
		switch (code) {
		case 15:
			known = 0;
			break;
		case 14:
			line += svarint(tab, len, &at, &ok);
			(void)varint(tab, len, &at, &ok);	/* end line */
			(void)varint(tab, len, &at, &ok);	/* column */
			(void)varint(tab, len, &at, &ok);	/* end column */
			break;
		case 13:
			line += svarint(tab, len, &at, &ok);
			break;
		case 12:
		case 11:
		case 10:
			line += code - 10;
			at += 2;	/* column, end column */
			break;
		default:
			at += 1;	/* the column bits */
			break;
		}
		if (!ok || at > len)
			return 0;
		if (index < addr + units)
			return known ? line_of(line) : 0;
		addr += units;
	}
	return 0;
}

int py_lines__line(enum py_lines_format fmt, const uint8_t *tab, size_t len, int firstlineno,
		   int64_t index)
{
	if (index < 0)
		return firstlineno;
	return fmt == PY_LINES_PEP626 ? pep626_line(tab, len, firstlineno, index) :
					locations_line(tab, len, firstlineno, index);
}
