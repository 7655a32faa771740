/* gopclntab.h - unwind rows of a Go program from its pc tables (.gopclntab), which Go keeps even
 * in a stripped binary, where it has no .eh_frame: for every PC of every function the runtime's
 * own traceback knows how far the stack pointer is from the frame's entry (the pcsp table),
 * so the caller is found at CFA = rsp + delta + 8, with the return address at CFA - 8, in a
 * frameless leaf too (which a frame-pointer step skips the caller of). See docs/stacks.md,
 * "Go".
 *
 * Layouts read: Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19 (0xfffffff0), 1.20 and later
 * (0xfffffff1), little-endian, 8-byte pointers (x86_64).
 */
#ifndef LXTRACE_USER_STACKS_GOPCLNTAB_H
#define LXTRACE_USER_STACKS_GOPCLNTAB_H

#include <gelf.h>
#include <stdbool.h>

#include "user/stacks/cfi.h"
#include "user/stacks/cfi_spans.h"

/* The pc tables of a Go program, or NULL (not Go, or a layout this reader does not know). */
Elf_Data *gopclntab__find(Elf *elf);

/* Adds a span for every PC range of every function of pclntab (gopclntab__find) to sp: the CFA
 * from the stack pointer, the caller's rbp where the function saved it, LX_CFA_END for the
 * functions Go's traceback ends a stack at (goexit, mstart, rt0_go; not sigtramp, whose stack
 * goes on through the signal frame), LX_CFA_SIGNAL for the signal restorer, LX_CFA_SWITCH for those
 * that move the stack pointer to another stack (systemstack, mcall, the vDSO calls). Counts go
 * to st (fdes: functions). 0, -EINVAL for tables that do not hold together, or the errors of
 * cfi_spans__add and cfi_budget__spent. */
int gopclntab__spans(Elf *elf, Elf_Data *pclntab, const struct cfi_segs *segs,
		     struct cfi_spans *sp, struct cfi_stats *st, struct cfi_budget *b);

/* Calls fn(ctx, lo, hi, name) for each function of pclntab whose name the table holds: its
 * ELF addresses [lo, hi) and name (in pclntab's data, NUL-terminated), which Go keeps in a
 * binary stripped of its symbols (-ldflags=-s). 0, -EINVAL for tables that do not hold
 * together, or the first error fn returns. */
int gopclntab__funcs(Elf *elf, Elf_Data *pclntab,
		     int (*fn)(void *ctx, uint64_t lo, uint64_t hi, const char *name), void *ctx);

#endif
