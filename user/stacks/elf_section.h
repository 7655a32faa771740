/* elf_section.h - an ELF file's sections: one by name, and what the compressed ones inflate to. */
#ifndef LXTRACE_USER_STACKS_ELF_SECTION_H
#define LXTRACE_USER_STACKS_ELF_SECTION_H

#include <gelf.h>
#include <stdint.h>

/* The first section of elf called name, its header in *sh (sh may be NULL); NULL when there is
 * none or the section names cannot be read. */
Elf_Scn *elf_section__named(Elf *elf, const char *name, GElf_Shdr *sh);

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
