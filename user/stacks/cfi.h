/* cfi.h - a binary's call-frame information compiled into the rows the BPF unwinder searches
 * (bpf/unwind.h, struct lx_cfi_row); a Go program's from its pc tables instead (gopclntab.h).
 *
 * libdw reads the CFI (.eh_frame, or .debug_frame when a file has no .eh_frame) and evaluates
 * each FDE's program; this module walks every FDE's rows and keeps, for each, the few rules
 * an x86_64 unwinder needs: where the CFA is (rsp or rbp plus an offset, a PLT entry, the
 * signal trampoline, the outermost frame) and where the caller's rbp was saved. Anything else
 * (a CFA computed by an arbitrary expression, a return address not at CFA - 8) becomes an
 * LX_CFA_NONE row, for which the unwinder falls back to the frame-pointer chain. Rows are
 * sorted by file offset, gaps between FDEs are LX_CFA_GAP rows, and neighbours with the same
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

/* A compile's CPU time: CFI_NS_BASE, plus CFI_NS_PER_MIB for each MiB of the CFI section. libdw
 * evaluates a row by running its FDE's instructions from the start, so an FDE costs the square
 * of its rows: real code compiles in 60-80 ms a MiB (libLLVM's 4.8 MiB .eh_frame in 0.31 s, no
 * FDE over 574 rows), a crafted 250 KiB one with a single FDE of 60,000 rows took 6.5 s. The
 * margin is for slow machines and sanitizer builds. */
#define CFI_NS_BASE (50ull * 1000 * 1000)
#define CFI_NS_PER_MIB (500ull * 1000 * 1000)

/* What a compile may take. cancel, when not NULL, is read as the compile goes: once it is set
 * the compile stops with -ECANCELED (a large binary takes seconds, which a recording's end must
 * not wait for). max_rows: what the caller can still load; the compile stops with -EFBIG once
 * the file has twice that many rows before merging (merging saves ~5%: libc 25,212 to 23,331),
 * so a crafted .eh_frame cannot make it hold more than that in memory. max_ns, when not 0,
 * lowers the CPU time allowed below the file's own (CFI_NS_BASE...): past it, -ETIME. */
struct cfi_limits {
	const atomic_bool *cancel;
	size_t max_rows;
	uint64_t max_ns;
};

/* Compiles the CFI of elf into t (t->rows malloc'd; free it with cfi_table__release) within
 * lim (NULL: the file's own CPU time only). st may be NULL. Returns 0, -ENOENT when the file
 * has no CFI at all, -ENOMEM, -ECANCELED, -EFBIG, -ETIME, -ENOBUFS when .debug_frame is the CFI
 * and the file's compressed sections would inflate past CFI_INFLATE_MAX (libdw inflates every
 * DWARF section to read it), or -EINVAL for a file that is not an x86_64 ELF object. t holds
 * nothing after an error. */
int cfi__compile(Elf *elf, const struct cfi_limits *lim, struct cfi_table *t,
		 struct cfi_stats *st);

/* What compiling the file open as fd (size bytes) reads, for the loader to choose who compiles
 * it and when: a Go program's pc tables, a third of the file and read ten times faster a byte
 * than CFI (2,582 functions of a 3 MiB program in 5 ms), else the whole size. */
uint64_t cfi__work_bytes(int fd, uint64_t size);

/* The row of rows[0..n) covering file offset off, or NULL: a binary search, as the BPF side
 * does it. */
const struct lx_cfi_row *cfi_rows__find(const struct lx_cfi_row *rows, size_t n, uint32_t off);

void cfi_table__release(struct cfi_table *t);

#endif
