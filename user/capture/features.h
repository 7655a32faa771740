/* features.h - what the running kernel offers lxtrace's BPF programs, probed once at start from
 * its BTF and by loading tiny probe programs (libbpf's probes), and what lxtrace does where it
 * falls short. capture.c chooses the program variants from it; the summary names each feature
 * a recording missed, and `lxtrace record --check` prints the whole table.
 *
 * Every feature is either needed (no BTF, no ring buffers: nothing can load) or has a fallback
 * that keeps the scheduler's records exact; docs/record.md, "Kernels", has the table.
 */
#ifndef LXTRACE_USER_CAPTURE_FEATURES_H
#define LXTRACE_USER_CAPTURE_FEATURES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum feature {
	FEAT_BTF,		/* /sys/kernel/btf/vmlinux */
	FEAT_RINGBUF,		/* BPF ring buffers */
	FEAT_MODERN,		/* tp_btf with typed task pointers, bpf_task_pt_regs, task storage */
	FEAT_VMA_ITER,		/* the VMA iterator kfuncs: mapping tables built in BPF */
	FEAT_MMAP_TP,		/* mmap_lock tracepoints: BPF learns of each change of mappings */
	FEAT_MM_SEQ,		/* mm->mm_lock_seq a seqcount (6.13+, Debian's 6.12): a process's
				 * mapping table follows each change by its range
				 * (bpf/pmaps_range.bpf.h); without, it is rebuilt whole */
	FEAT_SWITCH_STATE,	/* sched_switch passes prev_state */
	FEAT_EXIT_GROUP,	/* sched_process_exit passes group_dead */
	FEAT_RSS_TP,		/* the rss_stat tracepoint */
	FEAT_SLEEPABLE_UPROBE,	/* sleepable uprobes, for annotation strings not yet paged in */
	FEAT_BPF_COOKIE,	/* BPF cookies on uprobes: USDT probes of a file for every process */
	FEAT_TASK_COPY,		/* bpf_copy_from_user_task in sleepable task iterators: the user
				 * stacks of the threads asleep at the start (startstate.h) */
	FEAT_COUNT
};

/* What a recording uses, to name only the features it missed. */
enum feature_use {
	USE_ALWAYS = 1 << 0,
	USE_USER_STACKS = 1 << 1,
	USE_TARGET = 1 << 2,		/* a target mode: its memory counter */
	USE_ANNOTATIONS = 1 << 3,
};

struct features {
	char release[65];		/* uname -r */
	bool have[FEAT_COUNT];
	/* Why the modern programs are not used although the probes found them: their load
	 * failed (capture.c retries with the compat ones). Empty otherwise. */
	char modern_failed[160];
	/* Why the annotation programs are not loaded although asked for (a refused load). */
	char annotations_failed[96];
	/* The kernel stack's size (THREAD_SIZE), where the compat programs find the user
	 * registers: 32 KiB with KASAN, 16 KiB otherwise (x86_64). */
	uint64_t thread_size;
};

/* Probes the running kernel. 0, or -ENOENT without kernel BTF (f still holds what could be
 * probed). */
int features__probe(struct features *f);

/* Whether every feature the programs cannot do without is there; if not, *missing names one. */
bool features__enough(const struct features *f, enum feature *missing);

/* Whether the user stacks are walked from CFI here (the modern programs, not retried
 * without). */
bool features__cfi_stacks(const struct features *f);

/* Writes the feature table: each feature, whether this kernel has it, the kernel it needs, and
 * what lxtrace does without it. */
void features__print_table(const struct features *f, FILE *out);

/* Writes one line per feature that a recording using `uses` (enum feature_use) misses, each
 * starting with indent; returns how many. */
int features__print_missing(const struct features *f, unsigned uses, const char *indent,
			    FILE *out);

const char *features__name(enum feature which);
/* What a feature needs, e.g. "kernel 6.7+". */
const char *features__needs(enum feature which);

#endif
