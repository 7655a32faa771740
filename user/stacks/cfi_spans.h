/* cfi_spans.h - what every maker of unwind rows shares (cfi.c from DWARF CFI, gopclntab.c from
 * Go's pc tables): the executable segments that turn ELF addresses into file offsets, the spans
 * of code with one rule each, which become the sorted, merged rows the BPF unwinder searches
 * (struct lx_cfi_row), and the CPU time and cancel flag a compile answers to (struct
 * cfi_limits, cfi.h).
 */
#ifndef LXTRACE_USER_STACKS_CFI_SPANS_H
#define LXTRACE_USER_STACKS_CFI_SPANS_H

#include <gelf.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"
#include "user/stacks/cfi.h"

/* The executable PT_LOAD segments: ELF address -> file offset. */
struct cfi_segs {
	GElf_Phdr p[16];
	size_t n;
};

/* Reads elf's executable segments into s: 0, or -EINVAL. */
int cfi_segs__read(Elf *elf, struct cfi_segs *s);

/* The segment holding ELF address a, or NULL. */
const GElf_Phdr *cfi_segs__of(const struct cfi_segs *s, uint64_t a);

/* One row before merging: [lo, hi) in file offsets. */
struct cfi_span {
	uint64_t lo, hi;
	struct lx_cfi_row rule;	/* off unused */
};

struct cfi_spans {
	struct cfi_span *v;
	size_t n, cap, max;	/* past max spans, cfi_spans__add fails with -EFBIG */
};

/* Appends [lo, hi) with rule: 0, -EFBIG or -ENOMEM. */
int cfi_spans__add(struct cfi_spans *sp, uint64_t lo, uint64_t hi, struct lx_cfi_row rule);

/* Sorts the spans into t's rows (malloc'd): a GAP row in each gap longer than alignment
 * padding and past the last span, equal neighbours merged. 0 or -ENOMEM. */
int cfi_spans__to_rows(struct cfi_spans *sp, struct cfi_table *t);

/* A row of kind cfa with no offsets and the caller's rbp not known. */
struct lx_cfi_row cfi_rule(enum lx_cfa_kind cfa);

/* What is left of a compile's limits: its cancel flag and the thread CPU time it must end by. */
struct cfi_budget {
	const atomic_bool *cancel;
	uint64_t cpu_end;
	unsigned steps;
};

/* A budget of ns of this thread's CPU time from now (lowered to lim->max_ns when that is not 0),
 * and lim's cancel flag; lim may be NULL. */
struct cfi_budget cfi_budget__start(const struct cfi_limits *lim, uint64_t ns);

/* 0, or why the compile must stop now (-ECANCELED, -ETIME): read every few calls, as a clock
 * read is a system call. */
int cfi_budget__spent(struct cfi_budget *b);

#endif
