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

/* What a file's compressed sections may inflate to for its .debug_frame to be read: held for
 * the compile's length only, but any user's program can declare a thousand times its size. */
#define CFI_INFLATE_MAX (256ull << 20)

/* Compiles the CFI of elf into t (t->rows malloc'd; free it with cfi_table__release). st may
 * be NULL. cancel, when not NULL, is read between entries: once it is set the compile stops
 * with -ECANCELED (a large binary takes seconds, which a recording's end must not wait for).
 * max_rows: what the caller can still load. The compile stops with -EFBIG once the file has
 * twice that many rows before merging (merging saves ~5%: libc 25,212 to 23,331), so a crafted
 * .eh_frame cannot make it hold more than that in memory. Returns 0, -ENOENT when the file has
 * no CFI at all, -ENOMEM, -ECANCELED, -EFBIG, -ENOBUFS when .debug_frame is the CFI and the
 * file's compressed sections would inflate past CFI_INFLATE_MAX (libdw inflates every DWARF
 * section to read it), or -EINVAL for a file that is not an x86_64 ELF object. */
int cfi__compile(Elf *elf, const atomic_bool *cancel, size_t max_rows, struct cfi_table *t,
		 struct cfi_stats *st);

/* Whether elf is a program whose code keeps frame pointers throughout (Go), which unwind it as
 * exactly as its CFI, at no cost in rows. */
bool cfi__keeps_frame_pointers(Elf *elf);

/* The row covering file offset off, or NULL: a binary search, as the BPF side does it. */
const struct lx_cfi_row *cfi_table__find(const struct cfi_table *t, uint32_t off);

void cfi_table__release(struct cfi_table *t);

#endif
