/* python.bpf.h - a Python thread's frames, read in BPF beside its native stack: the chain of
 * _PyInterpreterFrame from its PyThreadState, as (code object, instruction) pairs, with the
 * frames where each run of the evaluation loop began. User space tells which threads are
 * Python's and how their version lays its structures out (bpf/python.h); it names the pairs.
 *
 * Read at every stack, hit or walk: the native stack of a Python program is the same
 * _PyEval_EvalFrameDefault whatever Python function it runs (3.11+ calls Python from Python
 * without a C call), so the per-thread cache that proves native walks unchanged cannot vouch
 * for these frames.
 */
#ifndef LXTRACE_BPF_PYTHON_BPF_H
#define LXTRACE_BPF_PYTHON_BPF_H

#include "python.h"
#include "ring.bpf.h"

/* Threads whose frames to read (user/stacks/python.c keeps it): tid -> struct lx_py_thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lx_py_thread);
} py_threads SEC(".maps");

/* Processes known to run Python (tgid -> layout): a thread of one missing from py_threads is
 * counted, its frames unread until user space has seen it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LX_PY_LAYOUTS);
	__type(key, __u32);
	__type(value, struct lx_py_layout);
} py_layouts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LX_PY_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} py_stats SEC(".maps");

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
 * the deepest call chain are nearly all taken); one per nesting level, as the records'
 * scratch buffers. b is 128 bytes so that a masked offset (< 64) plus the word read stays
 * inside. */
struct py_scratch {
	struct py_walk w;
	__u8 b[128];
	struct py_out out;
};

#define PY_LEVELS 4

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PY_LEVELS);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

/* The walks under way on each CPU, nested by interrupts: the next one's py_scratch entry. Kept
 * here rather than passed by the caller, whose stack has no byte to spare. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_depth SEC(".maps");

static __always_inline void py_count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&py_stats, &which);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* The current thread, if its Python frames are to be read; with count, a thread of a Python
 * process user space has not seen yet is counted. */
static __always_inline const struct lx_py_thread *py_thread_of_current(bool count)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, pid = id >> 32;
	const struct lx_py_thread *t = bpf_map_lookup_elem(&py_threads, &tid);

	if (t && t->pid == pid)
		return t;
	if (count && bpf_map_lookup_elem(&py_procs, &pid))
		py_count(LX_PY_UNKNOWN_THREAD);
	return NULL;
}

static __always_inline __u64 py_word(const struct py_scratch *s, __u16 off)
{
	__u64 v;

	__builtin_memcpy(&v, &s->b[off & 63], sizeof(v));
	return v;
}

/* Reads frame w->f into out and steps to the one before it. 0: go on; 1: stop. A global
 * function: checked once, not per frame. */
__noinline int py_step(struct py_scratch *s, const struct lx_py_layout *l)
{
	struct py_walk *w;
	__u64 code, instr;
	__u32 n, i;

	if (!s || !l || !s->w.f)
		return 1;
	w = &s->w;
	if (bpf_probe_read_user(s->b, LX_PY_FRAME_READ, (void *)w->f)) {
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
	s->out.f[i].instr = instr >= code && instr - code < 0xffffffffull ? instr - code : ~0u;
	s->out.f[i].flags = l->frame_entry != LX_PY_NONE && s->b[l->frame_entry & 127] ?
			    LX_PYF_ENTRY : 0;
	w->n = n + 1;
	return 0;
}

/* Reads the frames of thread t into s->out. Returns how many. */
static __always_inline __u32 py_walk(const struct lx_py_thread *t, struct py_scratch *s)
{
	const struct lx_py_layout *l;
	struct py_walk *w = &s->w;
	__u32 key = t->layout, n;

	l = bpf_map_lookup_elem(&py_layouts, &key);
	if (!l)
		return 0;
	py_count(LX_PY_WALKS);
	w->f = 0;
	w->n = 0;
	w->flags = 0;
	if (bpf_probe_read_user(&w->f, sizeof(w->f), (void *)(t->tstate + l->tstate_frame)) ||
	    (l->cframe_frame != LX_PY_NONE && w->f &&
	     bpf_probe_read_user(&w->f, sizeof(w->f), (void *)(w->f + l->cframe_frame))))
		w->flags |= LX_PYSTACK_FAULT;
	else
		for (int i = 0; i < 2 * LX_PY_FRAMES_MAX; i++)
			if (py_step(s, l))
				break;
	if (w->f && !(w->flags & LX_PYSTACK_FAULT))
		w->flags |= LX_PYSTACK_DEEP;
	if (w->flags & LX_PYSTACK_FAULT)
		py_count(LX_PY_FAULTS);
	n = w->n;
	if (n > LX_PY_FRAMES_MAX)
		n = LX_PY_FRAMES_MAX;
	s->out.ps.n = n;
	s->out.ps.flags = w->flags;
	s->out.ps.pad = 0;
	return n;
}

/* When the current thread is a Python thread user space told of: sends its frames as an
 * LX_REC_PYSTACK record of time ts into CPU cpu's ring, for the record with a stack the
 * caller sends next. A global function, as py_step, called where the caller has the fewest
 * values to keep. */
__noinline int py_send(__u32 cpu, __u64 ts)
{
	const struct lx_py_thread *t;
	struct py_scratch *s;
	__u32 zero = 0, level, n, size;
	__u32 *depth;
	void *ring;

	t = py_thread_of_current(true);
	depth = bpf_map_lookup_elem(&py_depth, &zero);
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!t || !depth || !ring)
		return 0;
	/* Interrupts nest strictly: a nested walk restores the depth before this one goes on. */
	level = (*depth)++;
	barrier();
	s = level < PY_LEVELS ? bpf_map_lookup_elem(&py_scratch, &level) : NULL;
	if (s) {
		n = py_walk(t, s);
		s->out.h.ts = ts;
		s->out.h.tid = (__u32)bpf_get_current_pid_tgid();
		s->out.h.cpu = cpu;
		s->out.h.type = LX_REC_PYSTACK;
		s->out.h.flags = 0;
		size = sizeof(struct lx_pyrec) + (n & (2 * LX_PY_FRAMES_MAX - 1)) * sizeof(s->out.f[0]);
		if (size > sizeof(s->out))
			size = sizeof(s->out);
		if (bpf_ringbuf_output(ring, &s->out, size, wake_flags(ring, size)))
			count_lost(1);
	}
	barrier();
	(*depth)--;
	return 0;
}

#endif
