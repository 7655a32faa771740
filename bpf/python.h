/* python.h - what the BPF walk of CPython's frames shares with the daemon: the offsets of the
 * interpreter's structures it reads (one layout per CPython version, filled by user space),
 * the threads it may walk, and the frames it sends. See docs/stacks.md ("Python frames").
 *
 * The walk only collects (code object, instruction) pairs; the daemon reads the code objects
 * from the process and names them (user/stacks/python.h), so BPF trusts nothing it reads: a
 * pointer that leads nowhere ends the walk, and a pair that is no code is caught in user space.
 */
#ifndef LXTRACE_BPF_PYTHON_H
#define LXTRACE_BPF_PYTHON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "lxtrace.h"

/* Python frames a stack carries at most; the walk steps over at most twice as many (shim
 * frames included) before it stops. */
#define LX_PY_FRAMES_MAX 32
/* An offset a layout does not have. */
#define LX_PY_NONE 0xffff
/* The most bytes of a frame the walk reads at once: every field it needs lies in them (3.10's
 * f_lasti, the furthest, at 96). Each layout says how many it reads (frame_read): no more than
 * its frame has, or a frame at the end of its memory would fail to read. */
#define LX_PY_FRAME_READ_MAX 104
/* Layouts user space may fill (py_layouts): one per CPython minor version it knows. */
#define LX_PY_LAYOUTS 8

enum lx_py_layout_flags {
	LX_PY_LASTI = 1 << 0,		/* frame_instr is an int, the index of the instruction
					 * in 2-byte code units (3.10's f_lasti), not a pointer */
	LX_PY_EVERY_ENTRY = 1 << 1,	/* every frame has a run of the evaluation loop of its
					 * own (3.10: each Python call is a C call) */
	LX_PY_OWNER_PTHREAD = 1 << 2,	/* tstate_owner holds the thread's pthread_t, which is
					 * its thread pointer (3.10's thread_id), not its tid */
};

/* Where the walk finds what it reads, in bytes (LX_PY_NONE: absent in this version). */
struct lx_py_layout {
	__u16 tstate_frame;	/* PyThreadState: frame (3.10), cframe (3.11, 3.12) or
				 * current_frame (3.13+) */
	__u16 cframe_frame;	/* _PyCFrame.current_frame; LX_PY_NONE: tstate_frame is the frame */
	__u16 frame_code;	/* the frame's code: f_code (f_executable in 3.13) */
	__u16 frame_previous;	/* previous (f_back in 3.10) */
	__u16 frame_instr;	/* prev_instr (instr_ptr in 3.13, f_lasti in 3.10) */
	__u16 frame_entry;	/* is_entry (3.11): the first frame of an evaluation loop's run */
	__u16 frame_owner;	/* owner: with value owner_shim, a frame on the C stack that only
				 * marks where an evaluation loop's run began (3.12+) */
	__u8 owner_shim;	/* FRAME_OWNED_BY_CSTACK; 0xff: none (3.11) */
	__u8 flags;		/* enum lx_py_layout_flags */
	__u16 frame_read;	/* bytes of a frame read, at most LX_PY_FRAME_READ_MAX */
	__u16 tstate_owner;	/* PyThreadState: which thread it is, native_thread_id (3.11+)
				 * or thread_id (3.10, LX_PY_OWNER_PTHREAD) */
};

/* A thread the walk may follow (py_threads, keyed by tid): its PyThreadState, in process pid
 * (a tid another process reuses is not walked), read by py_layouts[layout]. */
struct lx_py_thread {
	__u64 tstate;
	__u32 pid;
	__u32 layout;
};

/* A Python process (py_procs, keyed by tgid): its layout, and where each of its threads keeps
 * its own PyThreadState, for the stacks of a thread user space has not read yet. CPython keeps
 * it in a pthread key (autoTSSkey), whose value glibc keeps for each thread in the thread's
 * struct pthread, at the thread pointer (x86_64's fs base): there a pointer to the block of
 * values the key is in, and in that block the value. */
struct lx_py_proc {
	__u32 layout;
	__u32 tsd_block;	/* from the thread pointer, the pointer to the key's block;
				 * LX_PY_NO_TSD: the key is not known (yet) */
	__u32 tsd_value;	/* in that block, the key's value */
	__u32 pad;
};

#define LX_PY_NO_TSD 0xffffffffu

/* A thread's Python frames, leaf first (struct lx_pyrec). */
enum lx_pystack_flags {
	LX_PYSTACK_DEEP = 1 << 0,	/* more frames than LX_PY_FRAMES_MAX */
	LX_PYSTACK_FAULT = 1 << 1,	/* a frame could not be read: the chain ends early */
};

struct lx_pystack {
	__u16 n;
	__u16 flags;		/* enum lx_pystack_flags */
	__u32 pid;		/* the thread's process: its code objects are read there */
};

enum lx_pyframe_flags {
	LX_PYF_ENTRY = 1 << 0,	/* the first frame its evaluation loop's run took: the frames
				 * after it belong to the next _PyEval_EvalFrameDefault down the
				 * native stack */
};

struct lx_pyframe {
	__u64 code;		/* the frame's code object, as the frame says */
	__u32 instr;		/* its instruction pointer minus code, in bytes; ~0: out of range */
	__u32 flags;		/* enum lx_pyframe_flags */
};

/* LX_REC_PYSTACK: sent just before a record with a stack, by the same program in the same
 * ring, with the same h.ts, h.cpu and the thread in h.tid; the record is 24 + 16 * ps.n
 * bytes. Its own record, not a part of the stack's: the programs' stack has no room left
 * for the call that would build it there (the 512 bytes of the unwinder's deepest chain). */
struct lx_pyrec {
	struct lx_rec h;
	struct lx_pystack ps;
	struct lx_pyframe f[];
};

/* What the walk counts (py_stats, per CPU). */
enum lx_py_stat {
	LX_PY_WALKS = 0,	/* Python frame chains read */
	LX_PY_UNKNOWN_THREAD,	/* stacks of a Python process's thread not known to user space
				 * yet, whose state the walk cannot look for (the process's
				 * key not known): native frames only */
	LX_PY_FAULTS,		/* chains cut short by a read that failed */
	LX_PY_TSD_FOUND,	/* stacks of a thread not known to user space yet whose state
				 * the walk found itself, in the thread's pthread key */
	LX_PY_TSD_NONE,		/* stacks of a thread not known to user space holding no
				 * thread state (the key's value empty: it runs no Python now,
				 * or not yet): native frames only */
	LX_PY_TSD_REFUSED,	/* a key's value that did not prove to be the thread's own
				 * state (forged, stale), or did not read: native frames only */
	LX_PY_NSTATS,
};

_Static_assert(sizeof(struct lx_py_layout) == 20, "lx_py_layout layout");
_Static_assert(sizeof(struct lx_py_thread) == 16, "lx_py_thread layout");
_Static_assert(sizeof(struct lx_py_proc) == 16, "lx_py_proc layout");
_Static_assert(sizeof(struct lx_pystack) == 8, "lx_pystack layout");
_Static_assert(sizeof(struct lx_pyframe) == 16, "lx_pyframe layout");
_Static_assert(sizeof(struct lx_pyrec) == 24, "lx_pyrec layout");

#endif
