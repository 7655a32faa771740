/* elf_section.h - an ELF file's section by name. */
#ifndef LXTRACE_USER_STACKS_ELF_SECTION_H
#define LXTRACE_USER_STACKS_ELF_SECTION_H

#include <gelf.h>

/* The first section of elf called name, its header in *sh (sh may be NULL); NULL when there is
 * none or the section names cannot be read. */
Elf_Scn *elf_section__named(Elf *elf, const char *name, GElf_Shdr *sh);

#endif
