/* elf_section.c - an ELF file's section by name (elf_section.h). */
#include <string.h>

#include "user/stacks/elf_section.h"

Elf_Scn *elf_section__named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr own;

	if (!sh)
		sh = &own;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s = gelf_getshdr(scn, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}
