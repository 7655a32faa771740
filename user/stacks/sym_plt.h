/* sym_plt.h - names the entries of an ELF file's procedure linkage table ("read@plt"), which
 * no symbol covers: a stack caught in one (a sample, a preemption) would read "[unknown]".
 * An entry is named by the relocation of the GOT slot its jump reads: the imported symbol's
 * name, or for an IFUNC (R_X86_64_IRELATIVE) the address of its resolver, which the caller
 * names. x86_64: lazy .plt entries and .plt.sec entries (endbr64, bnd jmp). */
#ifndef LXTRACE_USER_STACKS_SYM_PLT_H
#define LXTRACE_USER_STACKS_SYM_PLT_H

#include <gelf.h>
#include <stdint.h>

struct sym_plt;

/* The PLT of elf (which must outlive it); NULL with errno set (ENOENT: the file has none). */
struct sym_plt *sym_plt__new(Elf *elf);

/* What the entry holding vaddr jumps through: 1 and *name for an imported symbol, 2 and
 * *resolver for an IFUNC's resolver address, 3 for the table's first entry (which calls the
 * dynamic linker), 0 when vaddr is in no entry. p may be NULL. */
int sym_plt__target(const struct sym_plt *p, uint64_t vaddr, const char **name, uint64_t *resolver);

/* Accepts NULL. */
void sym_plt__free(struct sym_plt *p);

#endif
