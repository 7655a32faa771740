/* python_walk.bpf.h - the walk of a Python thread's frames, shared by the two objects that
 * read them: lxtrace.bpf.c at each stack of the current thread (python.bpf.h), and
 * sleepers.bpf.c at the start, of a thread asleep, read from another task's memory. It follows
 * the chain of _PyInterpreterFrame (PyFrameObject in 3.10) from the thread's PyThreadState,
 * as (code object, instruction) pairs, with the frames where each run of the evaluation loop
 * began. User space tells which threads are Python's and how their version lays its
 * structures out (bpf/python.h, the maps below; sleepers.bpf.c is given lxtrace.bpf.c's own);
 * it names the pairs.
 */
#ifndef LXTRACE_BPF_PYTHON_WALK_BPF_H
#define LXTRACE_BPF_PYTHON_WALK_BPF_H

#include "python.h"

/* Threads whose frames to read (user/stacks/python.c keeps it): tid -> struct lx_py_thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lx_py_thread);
} py_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LX_PY_LAYOUTS);
	__type(key, __u32);
	__type(value, struct lx_py_layout);
} py_layouts SEC(".maps");

/* A walk's state between frames: scalars only, as struct walk in unwind.bpf.h. */
struct py_walk {
	__u64 f;		/* the next frame to read, 0: the chain's end */
	__u32 n;		/* frames written */
	__u16 flags;		/* enum lx_pystack_flags */
	__u16 pad;
};

/* The Python frames as sent. */
struct py_out {
	struct lx_rec h;	/* struct lx_pyrec, its frames at most */
	struct lx_pystack ps;
	struct lx_pyframe f[LX_PY_FRAMES_MAX];
};

/* A walk's state and one frame's bytes as read, off the program's stack (the 512 bytes of
 * the deepest call chain are nearly all taken). b is 192 bytes so that a masked offset
 * (< 128) plus the word read stays inside, as does a read of a masked size (< 128). */
struct py_scratch {
	struct py_walk w;
	__u8 b[192];
	struct lx_py_thread found;	/* a thread whose state the walk found itself */
	struct py_out out;
};

/* Reads size bytes at src of the current thread's process, or with task of task's (a
 * sleepable program's). */
static __always_inline long py_read(void *dst, __u32 size, __u64 src, struct task_struct *task)
{
	if (task)
		return bpf_copy_from_user_task(dst, size, (void *)src, task, 0);
	return bpf_probe_read_user(dst, size, (void *)src);
}

static __always_inline __u64 py_word(const struct py_scratch *s, __u16 off)
{
	__u64 v;

	__builtin_memcpy(&v, &s->b[off & 127], sizeof(v));
	return v;
}

/* Reads frame s->w.f into s->out and steps to the one before it. 0: go on; 1: stop. */
static __always_inline int py_step_of(struct py_scratch *s, const struct lx_py_layout *l,
				      struct task_struct *task)
{
	struct py_walk *w;
	__u64 code, instr;
	__u32 n, i;

	if (!s || !l || !s->w.f)
		return 1;
	w = &s->w;
	_Static_assert(LX_PY_FRAME_READ_MAX < 128, "frame_read masked to 127");
	if (py_read(s->b, l->frame_read & 127, w->f, task)) {
		w->flags |= LX_PYSTACK_FAULT;
		return 1;
	}
	n = w->n;
	w->f = py_word(s, l->frame_previous);
	if (l->frame_owner != LX_PY_NONE && s->b[l->frame_owner & 127] == l->owner_shim) {
		/* The frame before it was the first of an evaluation loop's run. */
		if (n)
			s->out.f[(n - 1) & (LX_PY_FRAMES_MAX - 1)].flags |= LX_PYF_ENTRY;
		return 0;
	}
	if (n >= LX_PY_FRAMES_MAX) {
		w->flags |= LX_PYSTACK_DEEP;
		return 1;
	}
	i = n & (LX_PY_FRAMES_MAX - 1);
	code = py_word(s, l->frame_code);
	instr = py_word(s, l->frame_instr);
	s->out.f[i].code = code;
	if (l->flags & LX_PY_LASTI)
		/* An int: -1 before the first instruction. In bytes, as a pointer's offset. */
		s->out.f[i].instr = (__s32)instr >= 0 ? (__u32)instr * 2 : ~0u;
	else
		s->out.f[i].instr = instr >= code && instr - code < 0xffffffffull ?
				    instr - code : ~0u;
	s->out.f[i].flags = (l->flags & LX_PY_EVERY_ENTRY) ||
			    (l->frame_entry != LX_PY_NONE && s->b[l->frame_entry & 127]) ?
			    LX_PYF_ENTRY : 0;
	w->n = n + 1;
	return 0;
}

/* Starts the walk of thread t into s: its first frame in s->w.f. Returns its layout, or NULL
 * when there is none (s->w.flags says a fault). */
static __always_inline const struct lx_py_layout *py_walk_start(const struct lx_py_thread *t,
								 struct py_scratch *s,
								 struct task_struct *task)
{
	const struct lx_py_layout *l;
	struct py_walk *w = &s->w;
	__u32 key = t->layout;

	w->f = 0;
	w->n = 0;
	w->flags = 0;
	s->out.ps.pid = t->pid;
	l = bpf_map_lookup_elem(&py_layouts, &key);
	if (!l)
		return NULL;
	if (py_read(&w->f, sizeof(w->f), t->tstate + l->tstate_frame, task) ||
	    (l->cframe_frame != LX_PY_NONE && w->f &&
	     py_read(&w->f, sizeof(w->f), w->f + l->cframe_frame, task))) {
		w->flags |= LX_PYSTACK_FAULT;
		return NULL;
	}
	return l;
}

/* Ends the walk in s: s->out.ps says how many frames and how it ended. Returns how many. */
static __always_inline __u32 py_walk_end(struct py_scratch *s)
{
	struct py_walk *w = &s->w;
	__u32 n;

	if (w->f && !(w->flags & LX_PYSTACK_FAULT))
		w->flags |= LX_PYSTACK_DEEP;
	n = w->n;
	if (n > LX_PY_FRAMES_MAX)
		n = LX_PY_FRAMES_MAX;
	s->out.ps.n = n;
	s->out.ps.flags = w->flags;
	return n;
}

#endif
