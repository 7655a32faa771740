/* py_layouts.c - the offsets of CPython's structures by version (py_layouts.h). Each one is
 * offsetof() of the field in the named header of that version, for x86_64 with the default
 * build (no --disable-gil, no Py_TRACE_REFS, which moves every object's fields); checked
 * against Debian's 3.11.2 and pyenv's 3.10.13, 3.11.7, 3.12.1 and 3.13.0 headers. 3.13
 * publishes the same facts in the process (_Py_DebugOffsets, at the start of _PyRuntime):
 * its table is used only where they agree (py_debug_offsets.h). */
#include <stddef.h>

#include "user/stacks/py_layouts.h"

static const struct py_layout layouts[] = {
	{
		.minor = 10,
		.walk = {
			.tstate_frame = 24,	/* PyThreadState.frame: cpython/pystate.h */
			.cframe_frame = LX_PY_NONE,	/* its CFrame has no frame */
			.frame_code = 32,	/* PyFrameObject.f_code: cpython/frameobject.h */
			.frame_previous = 24,	/* .f_back: cpython/frameobject.h */
			.frame_instr = 96,	/* .f_lasti, an int: cpython/frameobject.h */
			.frame_entry = LX_PY_NONE,
			.frame_owner = LX_PY_NONE,
			.owner_shim = 0xff,
			.flags = LX_PY_LASTI | LX_PY_EVERY_ENTRY,
			.frame_read = 104,	/* through f_lasti and f_lineno, the word read */
		},
		.runtime_interp_head = 32,	/* _PyRuntimeState.interpreters.head:
						 * internal/pycore_runtime.h */
		.interp_threads_head = 8,	/* struct _is tstate_head:
						 * internal/pycore_interp.h */
		.tstate_next = 8,		/* PyThreadState.next: cpython/pystate.h */
		.tstate_native_tid = LX_PY_NONE,	/* none before 3.11 */
		.tstate_pthread = 176,		/* .thread_id: cpython/pystate.h */
		.runtime_tss = 584,		/* _PyRuntimeState.gilstate.autoTSSkey:
						 * internal/pycore_runtime.h */
		.code_filename = 104,		/* PyCodeObject.co_filename: cpython/code.h */
		.code_qualname = 112,		/* .co_name, no co_qualname yet: cpython/code.h */
		.code_linetable = 120,		/* .co_linetable: cpython/code.h */
		.code_firstlineno = 40,		/* .co_firstlineno: cpython/code.h */
		.code_adaptive = 0,		/* f_lasti counts from the first instruction */
		.linetable = PY_LINES_PEP626,
		.str_ascii_data = 48,		/* sizeof(PyASCIIObject): cpython/unicodeobject.h */
		.str_compact_data = 72,		/* sizeof(PyCompactUnicodeObject): the same */
	},
	{
		.minor = 11,
		.walk = {
			.tstate_frame = 56,	/* PyThreadState.cframe: cpython/pystate.h */
			.cframe_frame = 8,	/* _PyCFrame.current_frame: cpython/pystate.h */
			.frame_code = 32,	/* _PyInterpreterFrame.f_code:
						 * internal/pycore_frame.h */
			.frame_previous = 48,	/* .previous: internal/pycore_frame.h */
			.frame_instr = 56,	/* .prev_instr: internal/pycore_frame.h */
			.frame_entry = 68,	/* .is_entry: internal/pycore_frame.h */
			.frame_owner = 69,	/* .owner: internal/pycore_frame.h */
			.owner_shim = 0xff,	/* no FRAME_OWNED_BY_CSTACK before 3.12 */
			.frame_read = 72,	/* sizeof(_PyInterpreterFrame) */
		},
		.runtime_interp_head = 40,	/* _PyRuntimeState.interpreters.head:
						 * internal/pycore_runtime.h */
		.interp_threads_head = 16,	/* struct _is threads.head:
						 * internal/pycore_interp.h */
		.tstate_next = 8,		/* PyThreadState.next: cpython/pystate.h */
		.tstate_native_tid = 160,	/* .native_thread_id: cpython/pystate.h */
		.tstate_pthread = LX_PY_NONE,
		.runtime_tss = 592,		/* _PyRuntimeState.gilstate.autoTSSkey:
						 * internal/pycore_runtime.h */
		.code_filename = 112,		/* PyCodeObject.co_filename: cpython/code.h */
		.code_qualname = 128,		/* .co_qualname: cpython/code.h */
		.code_linetable = 136,		/* .co_linetable: cpython/code.h */
		.code_firstlineno = 72,		/* .co_firstlineno: cpython/code.h */
		.code_adaptive = 184,		/* .co_code_adaptive: cpython/code.h */
		.linetable = PY_LINES_LOCATIONS,
		.str_ascii_data = 48,		/* sizeof(PyASCIIObject): cpython/unicodeobject.h */
		.str_compact_data = 72,		/* sizeof(PyCompactUnicodeObject): the same */
	},
	{
		.minor = 12,
		.walk = {
			.tstate_frame = 56,	/* PyThreadState.cframe: cpython/pystate.h */
			.cframe_frame = 0,	/* _PyCFrame.current_frame: cpython/pystate.h */
			.frame_code = 0,	/* _PyInterpreterFrame.f_code:
						 * internal/pycore_frame.h */
			.frame_previous = 8,	/* .previous: internal/pycore_frame.h */
			.frame_instr = 56,	/* .prev_instr: internal/pycore_frame.h */
			.frame_entry = LX_PY_NONE,
			.frame_owner = 70,	/* .owner: internal/pycore_frame.h */
			.owner_shim = 3,	/* FRAME_OWNED_BY_CSTACK: internal/pycore_frame.h */
			.frame_read = 72,	/* sizeof(_PyInterpreterFrame) */
		},
		.runtime_interp_head = 40,	/* _PyRuntimeState.interpreters.head:
						 * internal/pycore_runtime.h */
		.interp_threads_head = 72,	/* struct _is threads.head:
						 * internal/pycore_interp.h */
		.tstate_next = 8,		/* PyThreadState.next: cpython/pystate.h */
		.tstate_native_tid = 144,	/* .native_thread_id: cpython/pystate.h */
		.tstate_pthread = LX_PY_NONE,
		.runtime_tss = 1544,		/* _PyRuntimeState.autoTSSkey:
						 * internal/pycore_runtime.h */
		.code_filename = 112,		/* PyCodeObject.co_filename: cpython/code.h */
		.code_qualname = 128,		/* .co_qualname: cpython/code.h */
		.code_linetable = 136,		/* .co_linetable: cpython/code.h */
		.code_firstlineno = 68,		/* .co_firstlineno: cpython/code.h */
		.code_adaptive = 192,		/* .co_code_adaptive: cpython/code.h */
		.linetable = PY_LINES_LOCATIONS,
		.str_ascii_data = 40,		/* sizeof(PyASCIIObject): cpython/unicodeobject.h */
		.str_compact_data = 56,		/* sizeof(PyCompactUnicodeObject): the same */
	},
	{
		.minor = 13,
		.walk = {
			.tstate_frame = 72,	/* PyThreadState.current_frame: cpython/pystate.h */
			.cframe_frame = LX_PY_NONE,	/* no _PyCFrame since 3.13 */
			.frame_code = 0,	/* _PyInterpreterFrame.f_executable:
						 * internal/pycore_frame.h */
			.frame_previous = 8,	/* .previous: internal/pycore_frame.h */
			.frame_instr = 56,	/* .instr_ptr: internal/pycore_frame.h */
			.frame_entry = LX_PY_NONE,
			.frame_owner = 70,	/* .owner: internal/pycore_frame.h */
			.owner_shim = 3,	/* FRAME_OWNED_BY_CSTACK: internal/pycore_frame.h */
			.frame_read = 72,	/* sizeof(_PyInterpreterFrame) */
		},
		.runtime_interp_head = 632,	/* _PyRuntimeState.interpreters.head:
						 * internal/pycore_runtime.h */
		.interp_threads_head = 7344,	/* struct _is threads.head:
						 * internal/pycore_interp.h */
		.tstate_next = 8,		/* PyThreadState.next: cpython/pystate.h */
		.tstate_native_tid = 160,	/* .native_thread_id: cpython/pystate.h */
		.tstate_pthread = LX_PY_NONE,
		.runtime_tss = 2160,		/* _PyRuntimeState.autoTSSkey:
						 * internal/pycore_runtime.h */
		.code_filename = 112,		/* PyCodeObject.co_filename: cpython/code.h */
		.code_qualname = 128,		/* .co_qualname: cpython/code.h */
		.code_linetable = 136,		/* .co_linetable: cpython/code.h */
		.code_firstlineno = 68,		/* .co_firstlineno: cpython/code.h */
		.code_adaptive = 200,		/* .co_code_adaptive: cpython/code.h */
		.linetable = PY_LINES_LOCATIONS,
		.str_ascii_data = 40,		/* sizeof(PyASCIIObject): cpython/unicodeobject.h */
		.str_compact_data = 56,		/* sizeof(PyCompactUnicodeObject): the same */
	},
};

_Static_assert(sizeof(layouts) / sizeof(layouts[0]) <= LX_PY_LAYOUTS, "py_layouts map size");

const struct py_layout *py_layouts__find(unsigned major, unsigned minor)
{
	for (size_t i = 0; major == 3 && i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

uint32_t py_layouts__index(const struct py_layout *l)
{
	return (uint32_t)(l - layouts);
}

uint32_t py_layouts__count(void)
{
	return sizeof(layouts) / sizeof(layouts[0]);
}

const struct py_layout *py_layouts__at(uint32_t i)
{
	return i < py_layouts__count() ? &layouts[i] : NULL;
}
