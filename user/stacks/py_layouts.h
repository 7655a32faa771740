/* py_layouts.h - where CPython keeps what lxtrace reads of a running interpreter, by version:
 * the offsets the BPF walk follows (bpf/python.h) and those the daemon reads to find threads
 * and name code objects. Tables of our own, each offset saying which header of CPython it
 * comes from; 3.13's are checked against those the process publishes (py_debug_offsets.h).
 * docs/stacks.md, "Python frames".
 */
#ifndef LXTRACE_USER_STACKS_PY_LAYOUTS_H
#define LXTRACE_USER_STACKS_PY_LAYOUTS_H

#include <stdint.h>

#include "bpf/python.h"
#include "user/stacks/py_lines.h"

/* What every version lays out alike (object.h, bytesobject.h, unicodeobject.h): an object's
 * type, a bytes object's size and bytes, a string's length and state bits. */
#define PY_OB_TYPE 8
#define PY_BYTES_SIZE 16
#define PY_BYTES_DATA 32
#define PY_STR_LENGTH 16
#define PY_STR_STATE 32

struct py_layout {
	unsigned minor;			/* 3.minor */
	struct lx_py_layout walk;	/* what BPF reads */
	/* Finding the threads: _PyRuntime.interpreters.head, then the interpreter's
	 * threads.head, a list by PyThreadState.next with the thread's kernel tid in
	 * native_thread_id; before 3.11, which has none, the tid is read from the thread's
	 * pthread_t (thread_id, the address of glibc's struct pthread). */
	uint16_t runtime_interp_head;
	uint16_t interp_threads_head;
	uint16_t tstate_next;
	uint16_t tstate_native_tid;	/* LX_PY_NONE: none, tstate_pthread instead */
	uint16_t tstate_pthread;
	/* Where a thread keeps its own state: _PyRuntime's autoTSSkey, a Py_tss_t (an int that
	 * says it is made, then the pthread key), whose value is the thread's state. */
	uint16_t runtime_tss;
	/* Naming a code object (PyCodeObject). */
	uint16_t code_filename;
	uint16_t code_qualname;		/* co_name before 3.11, which has no co_qualname */
	uint16_t code_linetable;
	uint16_t code_firstlineno;	/* an int */
	uint16_t code_adaptive;		/* co_code_adaptive: the instructions, 2-byte units; 0
					 * where the walk reports the instruction's offset in
					 * bytes from the first (LX_PY_LASTI) */
	uint8_t linetable;		/* enum py_lines_format */
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
