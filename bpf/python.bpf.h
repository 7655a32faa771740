/* python.bpf.h - a Python thread's frames, read in BPF beside its native stack by the walk of
 * python_walk.bpf.h, and sent as a record of their own.
 *
 * Read at every stack, hit or walk: the native stack of a Python program is the same
 * _PyEval_EvalFrameDefault whatever Python function it runs (3.11+ calls Python from Python
 * without a C call), so the per-thread cache that proves native walks unchanged cannot vouch
 * for these frames.
 */
#ifndef LXTRACE_BPF_PYTHON_BPF_H
#define LXTRACE_BPF_PYTHON_BPF_H

#include "python_walk.bpf.h"
#include "ring.bpf.h"

/* Processes known to run Python (tgid -> layout): a thread of one missing from py_threads is
 * counted, its frames unread until user space has seen it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LX_PY_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} py_stats SEC(".maps");

/* One walk's scratch per nesting level, as the records' scratch buffers. */
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

/* One frame of the current thread's walk (python_walk.bpf.h). A global function: checked
 * once, not per frame. */
__noinline int py_step(struct py_scratch *s, const struct lx_py_layout *l)
{
	return py_step_of(s, l, NULL);
}

/* Reads the frames of thread t into s->out. Returns how many. */
static __always_inline __u32 py_walk(const struct lx_py_thread *t, struct py_scratch *s)
{
	const struct lx_py_layout *l = py_walk_start(t, s, NULL);

	py_count(LX_PY_WALKS);
	for (int i = 0; l && i < 2 * LX_PY_FRAMES_MAX; i++)
		if (py_step(s, l))
			break;
	if (s->w.flags & LX_PYSTACK_FAULT)
		py_count(LX_PY_FAULTS);
	return py_walk_end(s);
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
