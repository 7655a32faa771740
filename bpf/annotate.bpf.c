// SPDX-License-Identifier: GPL-2.0
/* annotate.bpf.c - the USDT probes of include/lxtrace/annotate.h (provider "lxtrace") turned
 * into lx_user records, written into the same per-CPU rings as the scheduler's records
 * (ring.bpf.h), so the daemon's time-ordered merge puts each one in place on its thread.
 *
 * Loaded only when the user asks for annotations; user space attaches the programs to each
 * binary or library that carries the probes (bpf_program__attach_usdt). In a target mode a
 * probe hit by an untraced thread writes nothing: the same filter as the scheduler's programs
 * (target.bpf.h, on the scheduler object's `targets` map), checked before the reserve, because
 * a probe attached to a file fires in every process that runs it.
 *
 * Strings are copied with a bounded read into the record's fixed-size field. A string that
 * fills its field is cut unless the byte after the copy ends it; cut and unreadable strings
 * are flagged for the model to mark.
 *
 * The programs are sleepable uprobes where the kernel allows it (6.0+; user space sets the
 * flag, as libbpf 1.1 has no "usdt.s" section and its "uprobe.s" would force it on kernels that
 * refuse it; attach_usdt takes any uprobe program): a string literal in a page the program has
 * not touched yet (the first call from a freshly loaded library) cannot be read without a page
 * fault, which only a sleepable program may take. Such a fault is taken before the record is
 * reserved, never while it is: a reservation held blocks the reader at it, and every later
 * record of the CPU with it, for as long as the fault lasts, which the program's owner decides
 * (a page of a stalled FUSE file, a userfaultfd that never answers). For the same reason it is
 * taken before the hit is counted as under way (`running`, below): the stop never waits for it.
 * The record's time is therefore when its strings were readable, right before the thread goes
 * on. A page evicted between the fault and the copy reads as a string that could not be read
 * (flagged). Sleepable programs run with migration disabled, so the ring stays this CPU's.
 * Where they may not sleep, `sleepable` keeps the faulting read out of them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "ring.bpf.h"
#include "target.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool sleepable = true;	/* set before load: the programs may fault */

/* The stop. Detaching the probes takes the kernel ~0.1 s each, one after another
 * (docs/record.md), so user space finishes the trace first and detaches after: it sets
 * `stopped`, which every hit from then on sees and writes nothing, and waits for the hits under
 * way, counted per CPU in `running` (a run stays on its CPU), to end; then the rings hold
 * every record the probes will send. The add is a locked instruction (x86): the read of
 * `stopped` after it cannot be done before it, so a hit either is counted before user space
 * looks or sees the flag. */
bool stopped;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} running SEC(".maps");

/* The CPU's count of hits under way, raised; NULL (not raised) once stopped. */
static __always_inline __s64 *enter(void)
{
	__u32 zero = 0;
	__s64 *n = bpf_map_lookup_elem(&running, &zero);

	if (!n)
		return NULL;
	__sync_fetch_and_add(n, 1);
	if (*(volatile bool *)&stopped) {
		__sync_fetch_and_add(n, -1);
		return NULL;
	}
	return n;
}

/* Brings in the pages of the string at src (size bytes at most: its first and last possible
 * byte; the latter may lie past the mapping, then only the copy can tell) unless they are
 * resident, so that the copy into the record does not fault. */
static __always_inline void page_in(const char *src, __u32 size)
{
	char c;

	if (!sleepable || !src)
		return;
	if (bpf_probe_read_user(&c, 1, src))
		bpf_copy_from_user(&c, 1, src);
	if (bpf_probe_read_user(&c, 1, src + size - 1))
		bpf_copy_from_user(&c, 1, src + size - 1);
}

/* The CPU's count of hits under way, raised, for the current thread about to annotate with
 * strings name and msg (either may be NULL), whose pages are brought in first; NULL (not
 * raised) for an untraced thread, which faults nothing in (the probe fires in every process
 * that runs the file), and once stopped. */
static __always_inline __s64 *begin_hit(const char *name, const char *msg)
{
	if (!traced_current(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	page_in(name, LX_NAME_LEN);
	page_in(msg, LX_MSG_LEN);
	return enter();
}

/* Copies the NUL-terminated string at src into dst (size bytes), without faulting; returns
 * cut_flag when it was longer, fault_flag when it could not be read (dst is then ""), else 0. */
static __always_inline __u8 copy_str(char *dst, __u32 size, const char *src, __u8 cut_flag,
				     __u8 fault_flag)
{
	long n = bpf_probe_read_user_str(dst, size, src);
	char next = 0;

	if (n < 0) {
		dst[0] = '\0';
		return fault_flag;
	}
	/* A full field holds size - 1 bytes: the string is longer unless the next byte is its end. */
	if (n == size && (bpf_probe_read_user(&next, 1, src + size - 1) || next))
		return cut_flag;
	return 0;
}

static __always_inline long arg(struct pt_regs *ctx, __u64 n)
{
	long v = 0;

	bpf_usdt_arg(ctx, n, &v);
	return v;
}

/* The record of one annotation by the current thread, which begin_hit found traced, its name
 * copied from the program (name NULL: none). NULL when its CPU's ring is full (counted). */
static __always_inline struct lx_user *user_rec(void **ring, __u32 size, __u8 type, __u64 task,
						 __u64 parent, const char *name)
{
	struct lx_user *r = reserve_here(ring, size, type);

	if (!r)
		return NULL;
	r->task = task;
	r->parent = parent;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->pad[0] = r->pad[1] = r->pad[2] = 0;
	if (name)
		r->flags = copy_str(r->name, sizeof(r->name), name, LX_USER_NAME_CUT, LX_USER_NAME_FAULT);
	else
		r->flags = 0, r->name[0] = '\0';
	return r;
}

static __always_inline int on_user(struct pt_regs *ctx, __u8 type, __u64 task, __u64 parent,
				   const char *name)
{
	__s64 *n = begin_hit(name, NULL);
	struct lx_user *r;
	void *ring;

	if (!n)
		return 0;
	r = user_rec(&ring, sizeof(*r), type, task, parent, name);
	if (r)
		submit(ring, r, sizeof(*r));
	__sync_fetch_and_add(n, -1);
	return 0;
}

/* task_begin(id, parent, type) */
SEC("uprobe")
int task_begin(struct pt_regs *ctx)
{
	return on_user(ctx, LX_REC_TASK_BEGIN, arg(ctx, 0), arg(ctx, 1), (const char *)arg(ctx, 2));
}

/* task_end(id) */
SEC("uprobe")
int task_end(struct pt_regs *ctx)
{
	return on_user(ctx, LX_REC_TASK_END, arg(ctx, 0), 0, NULL);
}

/* region_begin(task, type) */
SEC("uprobe")
int region_begin(struct pt_regs *ctx)
{
	return on_user(ctx, LX_REC_REGION_BEGIN, arg(ctx, 0), 0, (const char *)arg(ctx, 1));
}

/* region_end(task, type) */
SEC("uprobe")
int region_end(struct pt_regs *ctx)
{
	return on_user(ctx, LX_REC_REGION_END, arg(ctx, 0), 0, (const char *)arg(ctx, 1));
}

/* A record with a message: a log, or a trigger (name NULL). */
static __always_inline int send_msg(__u8 type, __u64 task, const char *name, const char *msg)
{
	__s64 *n = begin_hit(name, msg);
	struct lx_user_log *r;
	void *ring;

	if (!n)
		return 0;
	r = (struct lx_user_log *)user_rec(&ring, sizeof(*r), type, task, 0, name);
	if (r) {
		r->u.flags |= copy_str(r->msg, sizeof(r->msg), msg, LX_USER_MSG_CUT,
				       LX_USER_MSG_FAULT);
		submit(ring, r, sizeof(*r));
	}
	__sync_fetch_and_add(n, -1);
	return 0;
}

/* log(task, category, message) */
SEC("uprobe")
int user_log(struct pt_regs *ctx)
{
	return send_msg(LX_REC_LOG, arg(ctx, 0), (const char *)arg(ctx, 1),
			(const char *)arg(ctx, 2));
}

/* trigger(reason): a flight recorder writes its window (lxtrace record --flight-recorder). */
SEC("uprobe")
int trigger(struct pt_regs *ctx)
{
	return send_msg(LX_REC_TRIGGER, 0, NULL, (const char *)arg(ctx, 0));
}
