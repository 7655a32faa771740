/* capture.h - the user-space half of the kernel side: loads and attaches the BPF programs, reads
 * the per-CPU ring buffers and hands their records to a consumer in global time order.
 *
 * Lifecycle: capture__new (open and configure) -> capture__load -> [capture__add_target] ->
 * capture__attach -> capture__sample ->
 * capture__poll ... -> capture__drain -> capture__free. Errors are reported on stderr with the
 * object and the cause; functions return 0 or a negative errno.
 */
#ifndef LXTRACE_USER_CAPTURE_H
#define LXTRACE_USER_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lxtrace.h"
#include "bpf/python.h"
#include "bpf/unwind.h"
#include "user/capture/features.h"
#include "user/capture/merge.h"

struct capture;

struct capture_opts {
	size_t sz;			/* sizeof(struct capture_opts) */
	size_t ring_bytes;		/* per CPU; rounded up to a power of two pages */
	bool syscalls;			/* record every syscall entry (raw_syscalls:sys_enter) */
	bool sysrets;			/* with syscalls, every return too (sys_exit) */
	bool annotations;		/* load the annotation programs (capture__attach_usdt) */
	uint32_t self_tgid;		/* a process never recorded: the tracer itself */
	uint32_t helper_tgid;		/* and its file worker, 0: none (the processes the
					 * tracer forks after the load are its own too) */
	uint32_t sample_hz;		/* cpu-clock samples per second and CPU; 0: none */
	bool sample_idle;		/* keep samples of the idle task */
	bool stack_kern, stack_user;	/* stacks on switch, wakeup and fork records */
	/* Each record in time order (merge.h); a negative return stops the poll and is
	 * returned by it, but -EAGAIN, which only ends this round's delivery: the records not
	 * delivered yet wait for the next poll (the consumer keeps the rings read while it is
	 * slow, e.g. symbolizing the first stacks of every process at the start), and -EBUSY:
	 * the record was not taken and comes first again at the next poll (merge.h). */
	merge_record_fn on_record;
	/* Optional: called for each record as soon as it is read from its ring, before the
	 * ordering window delays it, for work that cannot wait (noting a new process's mappings
	 * while it still runs). Its return value is ignored. */
	merge_record_fn on_peek;
	merge_lost_fn on_lost;
	void *ctx;
	/* Which threads to record (enum lx_target_mode); in a target mode the resident memory of
	 * the target processes is recorded too (LX_REC_RSS). */
	uint8_t target_mode;
	uint64_t cgroup_id;		/* LX_TARGET_CGROUP: the cgroup directory's inode */
	uint32_t cgroup_level;		/* its depth below the root cgroup */
	/* What the kernel offers (features__probe), which decides the programs; NULL: probed
	 * here. */
	const struct features *features;
	const char *proc_root;		/* where /proc is; NULL: "/proc" */
};

struct capture_stats {
	uint64_t records;		/* delivered */
	uint64_t lost;			/* reserve failures: ring full */
	uint64_t out_of_order;		/* delivered older than an earlier record */
	uint64_t misses;		/* program runs the kernel skipped (recursion) */
	uint64_t malformed;		/* of the lost, records dropped as malformed */
	uint64_t dropped;		/* of the lost, records the recorder's queue had no room for */
	uint64_t after_stop;		/* read after the stop, not delivered (capture__drain) */
	uint64_t staged;		/* read and not delivered yet */
	uint64_t dropped_samples;	/* of them, CPU samples: dropped first */
	uint64_t abandoned;		/* of the lost, records not written by the stop's deadline */
	uint64_t staged_peak;		/* the most bytes one CPU's queue took (merge.h) */
};

/* Opens the BPF object and configures it; NULL with errno set on failure. */
struct capture *capture__new(const struct capture_opts *opts);
int capture__load(struct capture *c);
int capture__attach(struct capture *c);
/* Starts the CPU samples (opts.sample_hz), after capture__attach: once the recorder has read
 * the machine's threads, whose /proc scan a high rate slows (at -F 100000 the samples' walks
 * took the CPUs, and the start 3.5 s instead of 0.2). */
int capture__sample(struct capture *c);

/* LX_TARGET_PIDS: traces process tgid, and from then on the processes it forks. After load. */
int capture__add_target(struct capture *c, uint32_t tgid);
/* Stops tracing tgid (a target that was gone before the programs could see it exit). */
int capture__drop_target(struct capture *c, uint32_t tgid);
/* LX_TARGET_PIDS: whether any traced process is still alive (the programs remove a process
 * when its last thread exits). */
bool capture__has_targets(const struct capture *c);

/* Attaches the annotation probes (include/lxtrace/annotate.h) of the binary or shared library
 * at path, for process pid or every process (-1), after capture__attach. Needs
 * opts.annotations. -ENOENT when path has none of the probes. */
int capture__attach_usdt(struct capture *c, pid_t pid, const char *path);

/* Puts a record of the tracer's own (a SIGUSR1's LX_REC_TRIGGER) into CPU r->cpu's stream, to
 * be delivered in time order among the kernel's records. r->ts must be the current time
 * (CLOCK_MONOTONIC), so no later record has been delivered yet. 0 or a negative errno. */
int capture__inject(struct capture *c, const struct lx_rec *r, size_t size);

/* Waits up to one poll period (a few ms) for a ring to fill, reads every ring and delivers the
 * records that are older than the ordering window. */
int capture__poll(struct capture *c);

/* Detaches the programs, then reads what is left in the rings and delivers all of it up to
 * until (CLOCK_MONOTONIC, the time recording stopped); later records are counted, not
 * delivered (capture_stats.after_stop). What is not delivered by deadline (CLOCK_MONOTONIC;
 * UINT64_MAX: none) is given up on, one loss report a CPU (capture_stats.abandoned): a
 * recorder far behind stops on time. The annotation probes are stopped, not detached: the
 * kernel takes ~0.1 s for each, so a thread detaches them meanwhile, and capture__free waits
 * for it. */
int capture__drain(struct capture *c, uint64_t until, uint64_t deadline);

void capture__stats(const struct capture *c, struct capture_stats *out);

/* The user-stack unwinder's maps, for loading binaries' unwind rows (user/stacks/cfi_loader.h).
 * After load; -ENOENT when no user stacks are taken. */
int capture__unwind_maps(struct capture *c, struct lx_unwind_maps *out);

/* The Python walk's maps (bpf/python.h: py_threads, py_procs, py_layouts). After load;
 * -ENOENT when the programs do not walk Python frames (no user stacks, or the compat programs
 * of kernels without BTF, whose user stacks are the kernel's walk). */
int capture__python_maps(struct capture *c, int *threads_fd, int *procs_fd, int *layouts_fd);

/* The Python walk's counters summed over the CPUs (enum lx_py_stat); -ENOENT as above. */
int capture__python_stats(const struct capture *c, uint64_t out[LX_PY_NSTATS]);

/* What the kernel offers, as the load found it (a variant refused is noted there). */
const struct features *capture__features(const struct capture *c);

/* Whether the annotation programs are loaded (asked for, and not refused by the kernel). */
bool capture__annotations(const struct capture *c);

/* How the mappings were asked of user space on a kernel without the VMA iterator. */
struct capture_maps_stats {
	uint64_t asked;			/* requests read (each a process whose code changed) */
	uint64_t answered;		/* /proc/PID/maps reads that answered them */
	uint64_t gone;			/* processes gone before the answer */
	uint64_t reported;		/* mappings reported to the consumer as LX_REC_MMAP */
	uint64_t tables_full;		/* tables the unwinder's map had no room for */
	uint64_t asks_lost;		/* asks the BPF side had no room for */
};

/* Zeros when the kernel lists the mappings itself. */
void capture__maps_stats(const struct capture *c, struct capture_maps_stats *out);

/* The unwinder's counters (enum lx_unwind_stat), summed over CPUs. */
int capture__unwind_stats(const struct capture *c, uint64_t out[LX_UNWIND_NSTATS]);

/* Detaches (after capture__drain: waits until the annotation probes are gone) and frees.
 * Accepts NULL and half-built captures. */
void capture__free(struct capture *c);

#endif
