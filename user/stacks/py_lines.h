/* py_lines.h - the line a CPython code object runs at an instruction, from its line table
 * (co_linetable), in either of its formats: 3.10's (PEP 626, CPython's
 * Objects/lnotab_notes.txt) or 3.11's location table (Objects/locations.md). */
#ifndef LXTRACE_USER_STACKS_PY_LINES_H
#define LXTRACE_USER_STACKS_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

enum py_lines_format {
	PY_LINES_LOCATIONS = 0,	/* 3.11+ */
	PY_LINES_PEP626,	/* 3.10 */
};

/* The line of the instruction at index (in 2-byte code units) of a code object whose first
 * line is firstlineno and line table tab (len bytes, in format fmt); firstlineno for an index
 * before the first instruction, 0 when the table has no line for it or ends before it. */
int py_lines__line(enum py_lines_format fmt, const uint8_t *tab, size_t len, int firstlineno,
		   int64_t index);

#endif
