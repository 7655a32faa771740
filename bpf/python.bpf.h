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

/* Processes known to run Python (tgid -> struct lx_py_proc): the state of a thread of one
 * missing from py_threads is looked for where the thread keeps it, or the thread counted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct lx_py_proc);
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

/* The PyThreadState of the current thread (tid of process pid, p's), found where the thread
 * keeps it itself: the value of CPython's pthread key in the thread's struct pthread, at its
 * thread pointer. Into s->found; NULL, counted, when the key has no value (the thread runs no
 * Python now) or the value does not prove to be this thread's state: its owner field must
 * name this very thread. A process can write anything there: what is read is its own memory,
 * a fixed number of reads. */
static __always_inline const struct lx_py_thread *py_thread_by_tsd(struct py_scratch *s,
								    const struct lx_py_proc *p,
								    __u32 tid, __u32 pid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct lx_py_layout *l;
	__u32 key = p->layout;
	__u64 tp, *v = (__u64 *)s->b;

	if (p->tsd_block == LX_PY_NO_TSD) {
		py_count(LX_PY_UNKNOWN_THREAD);
		return NULL;
	}
	l = bpf_map_lookup_elem(&py_layouts, &key);
	if (!l)
		return NULL;
	tp = task->thread.fsbase;
	/* The key's block (none: the thread never set a key of it), then its value. */
	if (py_read(v, sizeof(*v), tp + p->tsd_block, NULL))
		goto refused;
	if (*v && py_read(v, sizeof(*v), *v + p->tsd_value, NULL))
		goto refused;
	if (!*v) {
		py_count(LX_PY_TSD_NONE);
		return NULL;
	}
	s->found.tstate = *v;
	if (py_read(v, sizeof(*v), s->found.tstate + l->tstate_owner, NULL) ||
	    *v != (l->flags & LX_PY_OWNER_PTHREAD ? tp : tid))
		goto refused;
	s->found.pid = pid;
	s->found.layout = key;
	py_count(LX_PY_TSD_FOUND);
	return &s->found;
refused:
	py_count(LX_PY_TSD_REFUSED);
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

/* When the current thread is a Python thread (user space told of it, or its state is found
 * where it keeps it): sends its frames as an LX_REC_PYSTACK record of time ts into CPU cpu's
 * ring, for the record with a stack the caller sends next. A global function, as py_step,
 * called where the caller has the fewest values to keep. */
__noinline int py_send(__u32 cpu, __u64 ts)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, pid = id >> 32, zero = 0, level, n, size;
	const struct lx_py_thread *t = bpf_map_lookup_elem(&py_threads, &tid);
	const struct lx_py_proc *p = NULL;
	struct py_scratch *s;
	__u32 *depth;
	void *ring;

	if (t && t->pid != pid)
		t = NULL;
	if (!t && !(p = bpf_map_lookup_elem(&py_procs, &pid)))
		return 0;
	depth = bpf_map_lookup_elem(&py_depth, &zero);
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!depth || !ring)
		return 0;
	/* Interrupts nest strictly: a nested walk restores the depth before this one goes on. */
	level = (*depth)++;
	barrier();
	s = level < PY_LEVELS ? bpf_map_lookup_elem(&py_scratch, &level) : NULL;
	if (s && p)
		t = py_thread_by_tsd(s, p, tid, pid);
	if (s && t) {
		n = py_walk(t, s);
		s->out.h.ts = ts;
		s->out.h.tid = tid;
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
