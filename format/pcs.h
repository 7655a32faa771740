/* pcs.h - who may hand out which PCs in a trace. A trace maps each PC to one frame for the
 * whole file, so the makers of frames that are no real address keep to ranges of their own,
 * clear of real ones (user space below 2^57 even with 5-level paging; the kernel's with bits
 * 63..47 set) and of one another, by bits 63..59:
 *
 *   0b1xxxx  kernel addresses (bits 63..47 set)
 *   0b011xx  the symbolizer's remapped PCs (user/stacks/symbolize.h, "PCs")
 *   0b010xx  the symbolizer's inlined callers: GT_PC_SYMBOLIZER | depth << 47 | address
 *   0b001xx  the format tools' own frames (repair's notes, cut's unnamed creators)
 *   0b00011  identities and specials moved off a PC another name held (user/stacks/pcclaims.h)
 *   0b00010  identities, syscall frames, specials, trim marks (user/stacks/idents.h)
 *   0b00000  real user addresses
 *
 * (LX_PC_EXACT, bit 63 of a user address in a record, never reaches a trace.) */
#ifndef LXTRACE_FORMAT_PCS_H
#define LXTRACE_FORMAT_PCS_H

#define GT_PC_SYMBOLIZER (1ull << 62)
#define GT_PC_SYMBOLIZER_REMAPPED (1ull << 61)	/* with GT_PC_SYMBOLIZER */
#define GT_PC_TOOLS (1ull << 61)		/* alone */
#define GT_PC_IDENT (1ull << 60)
#define GT_PC_IDENT_REMAPPED (1ull << 59)	/* with GT_PC_IDENT */

/* The format tools' frames. */
#define GT_PC_NOTE (GT_PC_TOOLS | 1)		/* repair and cut's notes (format/go119/close.c) */
#define GT_PC_UNNAMED (GT_PC_TOOLS | 2)		/* a creator cut away (format/go119/cut.c) */

#endif
