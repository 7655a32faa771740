/* py_lines.h - the line a CPython 3.11+ code object runs at an instruction, from its location
 * table (co_linetable; the format is described in CPython's Objects/locations.md). */
#ifndef LXTRACE_USER_STACKS_PY_LINES_H
#define LXTRACE_USER_STACKS_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at index (in 2-byte code units) of a code object whose first
 * line is firstlineno and location table tab (len bytes); firstlineno for an index before the
 * first instruction, 0 when the table has no line for it or ends before it. */
int py_lines__line(const uint8_t *tab, size_t len, int firstlineno, int64_t index);

#endif
