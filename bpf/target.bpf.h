/* target.bpf.h - which threads a record may be about: the target filter (-p, a command,
 * --cgroup) every lxtrace BPF object applies before it reserves ring space. Each object that
 * includes it declares the constants and the `targets` map; user space sets the same constants
 * in every object and hands them the scheduler object's `targets` fd (capture.c), so the fork
 * and exit programs' updates of the traced processes hold for all of them. reserve_current()
 * is the filtered reserve of the records a thread writes about itself.
 */
#ifndef LXTRACE_BPF_TARGET_BPF_H
#define LXTRACE_BPF_TARGET_BPF_H

#include <bpf/bpf_core_read.h>

#include "ring.bpf.h"

/* Set by user space before load. */
const volatile __u32 self_tgid;		/* the tracer's own process: never recorded */
const volatile __u32 helper_tgid;	/* its file worker (lib/file_worker.h), forked before load */
/* The latest process the tracer forked since load (a flight recorder's file writer, one at a
 * time), set by the fork program before the child can run. Like the tracer, never recorded. */
__u32 self_child_tgid;
const volatile __u8 target_mode = LX_TARGET_ALL;	/* enum lx_target_mode */
const volatile __u64 target_cgroup_id;	/* LX_TARGET_CGROUP: the cgroup's kernfs id (inode) */
const volatile __u32 target_cgroup_level;	/* its depth below the root cgroup */

/* LX_TARGET_PIDS: the traced processes, by tgid. User space puts the targets in before attach;
 * the fork program adds each child process of a traced one, so no child is missed between its
 * fork and its first run, and the exit program removes a process when its last thread exits. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* set before load */
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* The cgroup struct before 6.0, which kept its ancestors' ids (not pointers) by level. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
};

/* Whether t (a task of process tgid) is below the target cgroup: its default-hierarchy cgroup
 * has the target as ancestor at the target's level. Read with CO-RE probes in every program
 * type: the cgroup pointers are RCU-protected and read-only here. Kernels before 6.0 keep the
 * ancestors' ids instead of pointers; the relocation of the branch a kernel lacks is dead code
 * to its verifier. */
static __always_inline bool in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp), *anc = NULL;
	struct cgroup___ids *old = (void *)cg;
	__u32 level = target_cgroup_level;
	__u64 id = 0;

	if (!cg || BPF_CORE_READ(cg, level) < (int)level)
		return false;
	if (bpf_core_field_exists(old->ancestor_ids)) {
		if (bpf_core_read(&id, sizeof(id), &old->ancestor_ids[level]))
			return false;
		return id == target_cgroup_id;
	}
	if (bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]) || !anc)
		return false;
	return BPF_CORE_READ(anc, kn, id) == target_cgroup_id;
}

/* Whether process tgid is the tracer or one of its helpers: a CPU it holds is the tracer's
 * (LX_OCC_SELF), never a recorded thread's, so that the trace and its triggers see the
 * workload, not the tracer at work. A helper is its own process (a file worker stuck in a read
 * must not hold up the tracer's exit), so the tracer's tgid alone misses it. */
static __always_inline bool self_process(__u32 tgid)
{
	return tgid == self_tgid || tgid == helper_tgid || tgid == self_child_tgid;
}

/* Whether task t of process tgid is one the user asked to see. target_mode is a constant of
 * the loaded program: the verifier drops the branches of the other modes. */
static __always_inline bool traced_task(struct task_struct *t, __u32 tgid)
{
	if (self_process(tgid))
		return false;
	if (target_mode == LX_TARGET_PIDS)
		return bpf_map_lookup_elem(&targets, &tgid) != NULL;
	if (target_mode == LX_TARGET_CGROUP)
		return in_cgroup(t);
	return true;
}

/* The same for the current thread, of process tgid. Its task is read with probes only, so the
 * untyped helper does, which every kernel has (the typed one is 5.11+). */
static __always_inline bool traced_current(__u32 tgid)
{
	if (target_mode == LX_TARGET_CGROUP)
		return !self_process(tgid) &&
		       in_cgroup((struct task_struct *)bpf_get_current_task());
	return traced_task(NULL, tgid);
}

/* A record about the current thread, which the caller knows is traced, its header filled in,
 * or NULL when the ring is full (counted). */
static __always_inline void *reserve_here(void **ring, __u32 size, __u8 type)
{
	__u64 ts = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct lx_rec *h = reserve(ring, size, cpu);

	if (h)
		header(h, ts, (__u32)id, cpu, type);
	return h;
}

/* A record about the current thread (exec, exit, syscall entry and annotations run in its
 * context), its header filled in, or NULL for an untraced thread (the tracer's own included)
 * and when the ring is full (counted). */
static __always_inline void *reserve_current(void **ring, __u32 size, __u8 type)
{
	if (!traced_current(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	return reserve_here(ring, size, type);
}

#endif
