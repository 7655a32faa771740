/* elf_section.c - an ELF file's sections: by name, their symbols, bytes at an address, and
 * inflated sizes (elf_section.h). */
#include <stdbool.h>
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
		const char *s =
			gelf_getshdr(scn, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

void elf_section__each_symbol(Elf *elf, bool (*fn)(const char *name, const GElf_Sym *sym,
						   void *ctx),
			      void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_value &&
			    (name = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
			    fn(name, &sym, ctx))
				return;
		}
	}
}

bool elf_section__read(Elf *elf, uint64_t addr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && sh.sh_size >= len &&
		    addr >= sh.sh_addr && addr - sh.sh_addr <= sh.sh_size - len &&
		    (d = elf_getdata(scn, NULL)) && d->d_buf && d->d_size == sh.sh_size) {
			memcpy(buf, (const char *)d->d_buf + (addr - sh.sh_addr), len);
			return true;
		}
	}
	return false;
}

/* A GNU-style compressed section: "ZLIB", then its inflated size as 8 big-endian bytes. */
static uint64_t gnu_inflated(Elf_Scn *scn)
{
	const Elf_Data *d = elf_rawdata(scn, NULL);
	const unsigned char *p = d ? d->d_buf : NULL;
	uint64_t size = 0;

	if (!p || d->d_size < 12 || memcmp(p, "ZLIB", 4))
		return 0;
	for (int i = 4; i < 12; i++)
		size = size << 8 | p[i];
	return size;
}

static uint64_t add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

void elf_section__sizes(Elf *elf, struct elf_sizes *out)
{
	Elf_Scn *scn = NULL;
	uint64_t n;
	size_t shstrndx;
	GElf_Chdr ch;
	GElf_Shdr sh;
	/* Without names, a compressed symbol table is still found (by type) and inflated. */
	bool names = !elf_getshdrstrndx(elf, &shstrndx);

	*out = (struct elf_sizes){ 0 };
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		bool gnu, dwarf;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = names ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		gnu = name && !strncmp(name, ".zdebug", 7);
		dwarf = gnu || (name && !strncmp(name, ".debug", 6));
		if (sh.sh_flags & SHF_COMPRESSED)
			n = gelf_getchdr(scn, &ch) ? ch.ch_size : 0;
		else if (name && !strcmp(name, ".gnu_debugdata"))
			n = UINT64_MAX;
		else
			n = gnu ? gnu_inflated(scn) : 0;
		out->inflated = add(out->inflated, n);
		if (dwarf)
			out->dwarf = add(out->dwarf, n ? n : sh.sh_size);
	}
}

uint64_t elf_section__dwarf_held(Elf *elf)
{
	size_t shstrndx, size = 0;
	const char *raw = elf_rawfile(elf, &size);
	Elf_Scn *scn = NULL;
	uint64_t held = 0;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug", 6) && strncmp(name, ".zdebug", 7)))
			continue;
		/* libdw reads every DWARF section it knows when it opens the file: these are read,
		 * and one it does not know, read here, points into the mapping. */
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && d->d_size &&
		    (!raw || (const char *)d->d_buf < raw || (const char *)d->d_buf >= raw + size))
			held = add(held, d->d_size);
	}
	return held;
}
