/* cfi.h - a binary's call-frame information compiled into the rows the BPF unwinder searches
 * (bpf/unwind.h, struct lx_cfi_row).
 *
 * libdw reads the CFI (.eh_frame, or .debug_frame when a file has no .eh_frame) and evaluates
 * each FDE's program; this module walks every FDE's rows and keeps, for each, the few rules
 * an x86_64 unwinder needs: where the CFA is (rsp or rbp plus an offset, a PLT entry, the
 * signal trampoline, the outermost frame) and where the caller's rbp was saved. Anything else
 * (a CFA computed by an arbitrary expression, a return address not at CFA - 8) becomes an
 * LX_CFA_NONE row, for which the unwinder falls back to the frame-pointer chain. Rows are
 * sorted by file offset, gaps between FDEs are LX_CFA_NONE rows, and neighbours with the same
 * rules are merged.
 */
#ifndef LXTRACE_USER_STACKS_CFI_H
#define LXTRACE_USER_STACKS_CFI_H

#include <gelf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"

struct cfi_table {
	struct lx_cfi_row *rows;	/* malloc'd, sorted by off */
	size_t n;
};

struct cfi_stats {
	uint64_t fdes;		/* FDEs read */
	uint64_t rows_in;	/* rows found in them, before merging */
	uint64_t rows_none;	/* of which could not be expressed (LX_CFA_NONE) */
	uint64_t rows_plt;	/* PLT rows */
	uint64_t rows_signal;	/* signal trampoline rows */
};

/* Compiles the CFI of elf into t (t->rows malloc'd; free it with cfi_table__release). st may
 * be NULL. cancel, when not NULL, is read between entries: once it is set the compile stops
 * with -ECANCELED (a large binary takes seconds, which a recording's end must not wait for).
 * Returns 0, -ENOENT when the file has no CFI at all, -ENOMEM, -ECANCELED, or -EINVAL for a
 * file that is not an x86_64 ELF object. */
int cfi__compile(Elf *elf, const atomic_bool *cancel, struct cfi_table *t, struct cfi_stats *st);

/* Whether elf is a program whose code keeps frame pointers throughout (Go), which unwind it as
 * exactly as its CFI, at no cost in rows. */
bool cfi__keeps_frame_pointers(Elf *elf);

/* The row covering file offset off, or NULL: a binary search, as the BPF side does it. */
const struct lx_cfi_row *cfi_table__find(const struct cfi_table *t, uint32_t off);

void cfi_table__release(struct cfi_table *t);

#endif
