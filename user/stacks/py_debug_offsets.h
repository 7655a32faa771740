/* py_debug_offsets.h - the offsets CPython 3.13 publishes in the process itself: the
 * _Py_DebugOffsets block at the start of _PyRuntime (cookie "xdebugpy"), which debuggers and
 * profilers read instead of tables of their own. lxtrace reads it (a bounded read, every
 * field checked) and walks a 3.13 process only where the block says what its own table for
 * that version says (py_layouts.h): the table also holds what the block does not publish
 * (the owner value of a C-stack frame, the header of a non-ASCII string), written for one
 * build; a block that disagrees is another build (free-threaded, Py_TRACE_REFS) or a release
 * that moved a field, and its process keeps native frames, counted. docs/stacks.md, "Python
 * frames". */
#ifndef LXTRACE_USER_STACKS_PY_DEBUG_OFFSETS_H
#define LXTRACE_USER_STACKS_PY_DEBUG_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "user/stacks/py_layouts.h"

/* The bytes of 3.13's block, as internal/pycore_runtime.h lays it out: its first 73 words
 * (through the GC's), each field a uint64_t. */
#define PY_DEBUG_OFFSETS_SIZE (73 * 8)

enum py_debug_verdict {
	PY_DEBUG_AGREE,		/* the block's offsets are the table's */
	PY_DEBUG_DISAGREE,	/* a valid block that is not the table's */
	PY_DEBUG_INVALID,	/* no block of this version: cookie, version or sizes wrong */
};

/* The verdict on block (len bytes read from the start of _PyRuntime of a process whose
 * Py_Version is version) against table l. */
enum py_debug_verdict py_debug_offsets__check(const void *block, size_t len, uint32_t version,
					      const struct py_layout *l);

#endif
