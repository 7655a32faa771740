/* py_layouts.h - where CPython keeps what lxtrace reads of a running interpreter, by version:
 * the offsets the BPF walk follows (bpf/python.h) and those the daemon reads to find threads
 * and name code objects. Tables of our own for the versions before 3.13; each offset says
 * which header of CPython it comes from. docs/stacks.md, "Python frames".
 */
#ifndef LXTRACE_USER_STACKS_PY_LAYOUTS_H
#define LXTRACE_USER_STACKS_PY_LAYOUTS_H

#include <stdint.h>

#include "bpf/python.h"

struct py_layout {
	unsigned minor;			/* 3.minor */
	struct lx_py_layout walk;	/* what BPF reads */
	/* Finding the threads: _PyRuntime.interpreters.head, then the interpreter's
	 * threads.head, a list by PyThreadState.next with the thread's kernel tid in
	 * native_thread_id. */
	uint16_t runtime_interp_head;
	uint16_t interp_threads_head;
	uint16_t tstate_next;
	uint16_t tstate_native_tid;
	/* Naming a code object (PyCodeObject). */
	uint16_t code_filename;
	uint16_t code_qualname;
	uint16_t code_linetable;
	uint16_t code_firstlineno;	/* an int */
	uint16_t code_adaptive;		/* co_code_adaptive: the instructions, 2-byte units */
	/* Compact strings (PyASCIIObject and PyCompactUnicodeObject): their characters follow
	 * the header, whose size differs between pure ASCII and other strings. */
	uint16_t str_ascii_data;
	uint16_t str_compact_data;
};

/* The layout of CPython 3.minor, or NULL when lxtrace does not know it. */
const struct py_layout *py_layouts__find(unsigned major, unsigned minor);

/* The index of l in the table: its key in the py_layouts BPF map. */
uint32_t py_layouts__index(const struct py_layout *l);

/* How many layouts the table holds, and the i-th. */
uint32_t py_layouts__count(void);
const struct py_layout *py_layouts__at(uint32_t i);

#endif
