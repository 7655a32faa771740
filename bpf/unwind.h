/* unwind.h - what the user-stack unwinder shares between BPF and the daemon: the compiled
 * call-frame rows of each binary, where they sit in the row array, and each process's
 * executable mappings. See docs/stacks.md ("Unwinding").
 *
 * Rows are indexed by file offset, not by ELF address: a program's mapping gives the file
 * offset of an address directly (addr - vm_start + vm_pgoff), whatever the binary's load
 * bias or the address it was linked at.
 */
#ifndef LXTRACE_BPF_UNWIND_H
#define LXTRACE_BPF_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* How the caller's frame is found from a row's instructions (low nibble of lx_cfi_row.kind). */
enum lx_cfa_kind {
	LX_CFA_NONE = 0,	/* the FDE's rule is one the table cannot hold: the unwinder
				 * falls back to the frame-pointer chain, whose 0 there proves
				 * nothing (the code need not keep rbp) */
	LX_CFA_SP,		/* CFA = rsp + cfa_off * 8 */
	LX_CFA_BP,		/* CFA = rbp + cfa_off * 8 */
	LX_CFA_PLT,		/* a lazy-binding PLT entry: CFA = rsp + cfa_off * 8, plus 8 once
				 * (rip & 15) >= plt_cut (the entry has pushed its index) */
	LX_CFA_SIGNAL,		/* the signal return trampoline: rsp points at the ucontext the
				 * kernel saved; rip, rsp and rbp come from its mcontext */
	LX_CFA_END,		/* the outermost frame (the return address is undefined) */
	LX_CFA_GAP,		/* code no FDE covers (hand-written entry points: ld.so's
				 * _start): the frame-pointer chain, whose 0 ends the stack */
	LX_CFA_RA_RDI,		/* CFA = rsp + cfa_off * 8, the return address in rdi (glibc's
				 * __vfork around its syscall): known only where the kernel
				 * saved rdi, at an interrupted leaf */
	LX_CFA_SWITCH,		/* code that moves rsp to another stack (Go's systemstack, mcall,
				 * vDSO calls): one frame-pointer step, which may go to another
				 * stack once, as in code without rows */
};

/* Where the caller's rbp is (high nibble of lx_cfi_row.kind). */
enum lx_rbp_kind {
	LX_RBP_SAME = 0,	/* unchanged by this frame */
	LX_RBP_CFA = 1,		/* saved at CFA + rbp_off * 8 */
	LX_RBP_UNKNOWN = 2,	/* not recoverable: a caller's CFA based on rbp ends the walk */
};

/* One row: from file offset `off` up to the next row's, the return address is at CFA - 8 and
 * the CFA and the caller's rbp are found as kind says. 8 bytes, so a large library's table
 * (libc: ~14,000 rows once equal neighbours are merged) stays small. */
struct lx_cfi_row {
	__u32 off;
	__u16 cfa_off;		/* in 8-byte units */
	__u8 kind;		/* enum lx_cfa_kind | enum lx_rbp_kind << 4 */
	__s8 rbp_off;		/* LX_RBP_CFA: in 8-byte units; LX_CFA_PLT: plt_cut */
};

#define LX_CFI_KIND(k) ((k) & 0xf)
#define LX_CFI_RBP(k) ((k) >> 4)
#define LX_CFI_MAKE_KIND(cfa, rbp) ((__u8)((cfa) | (rbp) << 4))

/* The x86_64 signal frame: at the trampoline rsp points at struct ucontext, whose mcontext
 * (gregs) begins 40 bytes in; the saved rbp, rsp and rip are gregs 10, 15 and 16. */
#define LX_SIGFRAME_RBP 120
#define LX_SIGFRAME_RSP 160
#define LX_SIGFRAME_RIP 168

/* The vDSO has no file: mappings and rows name it by (dev 0, this inode), which no file has. */
#define LX_VDSO_INO (~0ull)

/* The maps user space fills for the unwinder, as the capture hands them to the row loader
 * (user/stacks/cfi_loader.h). User space only. */
struct lx_unwind_maps {
	struct lx_cfi_row *rows;	/* the cfi_rows array map, mmap'ed, owned by the capture */
	__u32 rows_max;			/* its entries */
	/* Makes rows [0, n) of rows writable (the capture maps the array as it fills): 0 or
	 * -errno. Rows already published stay where they are. */
	int (*map_rows)(void *ctx, __u32 n);
	void *map_ctx;
	int files_fd;			/* the cfi_files hash map */
	int wanted_fd;			/* the cfi_wanted LRU hash map */
	volatile __u64 *gen;		/* cfi_gen: bumped after each file published */
};

/* A binary whose rows are loaded: key of the cfi_files map. */
struct lx_file_key {
	__u64 ino;
	__u32 dev;		/* the kernel's encoding (sb->s_dev): major << 20 | minor */
	__u32 pad;
};

/* Its rows are cfi_rows[first .. first + n), sorted by off. */
struct lx_file_rows {
	__u32 first;
	__u32 n;
};

/* lx_file_rows.first of a file published without the rows it has (the rows map full, the
 * compile out of time): a frame-pointer step there is a guess, whose end proves nothing. With
 * n 0, first 0 is a file without rows at all (no CFI: its frame pointers are all there is). */
#define LX_ROWS_UNLOADED 0xffffffffu

/* A process's executable mappings, sorted by start, as the BPF side keeps them (proc_maps). */
#define LX_PMAPS_MAX 128	/* a power of two: the search masks its index */

struct lx_map {
	__u64 start, end;
	__u64 ino;		/* 0: anonymous (JIT code); LX_VDSO_INO: the vDSO */
	__u32 dev;
	__u32 pgoff;		/* in pages, as vm_pgoff */
};

struct lx_pmaps {
	__u64 mm;		/* the address space the mappings belong to */
	__u64 exec_vm;		/* its mm->exec_vm when they were read */
	__u64 nvmas;		/* while it is built: VMAs seen */
	__u32 n;
	__u32 overflow;		/* mappings that did not fit: misses are then not "not code" */
	__u32 told;		/* while it is built: mappings reported to user space */
	__u32 flags;		/* LX_PMAPS_* */
	/* Kept by range where mm->mm_lock_seq is a seqcount (pmaps_range.bpf.h); 0 elsewhere. */
	__u64 pend_lo, pend_hi;	/* addresses changed but not read yet (none: pend_hi 0) */
	__u32 seq;		/* mm->mm_lock_seq, even, the table is in step with (pending aside) */
	__u32 ua_seq;		/* the write section vm_unmapped_area chose ua_lo..ua_hi in */
	__u64 ua_lo, ua_hi;
	struct lx_map m[LX_PMAPS_MAX];
};

#define LX_PMAPS_WHOLE 1	/* all of it still to read: a write was missed or a read untrusted */

/* The tables' versions (pmaps_vers, in .bss): one per tgid modulo this, bumped after each change
 * of a table of that slot, by BPF or by user space when it fills the table (maps_proc.h). */
#define LX_PMAPS_VERS 4096

/* The per-thread cache of walks: slots, and the stack words a cacheable walk may read. */
#define LX_UC_SLOTS 4
#define LX_UC_WORDS 48

/* What the unwinder counts (unwind_stats, per CPU). */
enum lx_unwind_stat {
	LX_UNWIND_WALKS = 0,	/* stacks walked */
	LX_UNWIND_HITS,		/* stacks proven unchanged from the cache instead */
	LX_UNWIND_STORED,	/* walks stored in the cache */
	LX_UNWIND_TRUNCATED,	/* walks that ended at a frame that cannot be code */
	LX_UNWIND_FP,		/* walks with frame-pointer steps */
	LX_UNWIND_NO_TABLE,	/* frames in a file whose rows were not loaded (yet) */
	LX_UNWIND_NO_MAPS,	/* stacks of a process without a mapping table */
	LX_UNWIND_TABLES_FULL,	/* processes the table map had no room for */
	LX_UNWIND_WHOLE,	/* mapping tables built from all the VMAs */
	LX_UNWIND_SCAN_BUSY,	/* builds given up: the mmap lock was taken */
	LX_UNWIND_ASKS_LOST,	/* asks for a process's mappings the maps ring had no room for */
	LX_UNWIND_UPDATES,	/* mapping tables updated from the VMAs of a changed range */
	LX_UNWIND_NSTATS,
};

_Static_assert(sizeof(struct lx_cfi_row) == 8, "lx_cfi_row layout");
_Static_assert(sizeof(struct lx_file_key) == 16, "lx_file_key layout");
_Static_assert(sizeof(struct lx_file_rows) == 8, "lx_file_rows layout");
_Static_assert(sizeof(struct lx_map) == 32, "lx_map layout");
_Static_assert(sizeof(struct lx_pmaps) == 80 + 32 * LX_PMAPS_MAX, "lx_pmaps layout");

#endif
