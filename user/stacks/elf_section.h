/* elf_section.h - an ELF file's sections: one by name, the symbols of its tables, the bytes at an
 * address, and what the compressed ones inflate to. */
#ifndef LXTRACE_USER_STACKS_ELF_SECTION_H
#define LXTRACE_USER_STACKS_ELF_SECTION_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first section of elf called name, its header in *sh (sh may be NULL); NULL when there is
 * none or the section names cannot be read. */
Elf_Scn *elf_section__named(Elf *elf, const char *name, GElf_Shdr *sh);

/* Calls fn with each named symbol of elf's symbol tables (.dynsym, .symtab) that has a value,
 * until it returns true. */
void elf_section__each_symbol(Elf *elf, bool (*fn)(const char *name, const GElf_Sym *sym,
						   void *ctx),
			      void *ctx);

/* Copies the len bytes of elf's file at link-time address addr, from the section that holds
 * them all (not .bss: bytes in the file); false when none does. */
bool elf_section__read(Elf *elf, uint64_t addr, void *buf, size_t len);

/* What reading an ELF file's sections would take. */
struct elf_sizes {
	/* The bytes its compressed sections (SHF_COMPRESSED, and GNU-style .zdebug_*) take once
	 * inflated, as their headers declare: what libelf allocates when libdw or libdwfl
	 * inflates them. The ratio to the file's size is the compressor's (zlib reaches 1,000 to
	 * 1). A .gnu_debugdata section (MiniDebugInfo: an xz-compressed ELF file, which libdwfl
	 * inflates as far as its stream goes, with no size declared anywhere) counts as
	 * UINT64_MAX, as does a sum that overflows. */
	uint64_t inflated;
	/* The bytes of its DWARF sections (.debug_*, .zdebug_*), inflated. */
	uint64_t dwarf;
};

void elf_section__sizes(Elf *elf, struct elf_sizes *out);

/* The bytes of elf's DWARF sections that libelf holds in memory of its own: those inflated (a
 * compressed section, once libdw has read it, is inflated in place, its header no longer saying
 * it was compressed: elf_section__sizes then sees none), not those that lie in the file's
 * mapping. Reads no section that was not read yet. */
uint64_t elf_section__dwarf_held(Elf *elf);

#endif
