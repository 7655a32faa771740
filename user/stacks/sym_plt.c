/* sym_plt.c - PLT entries to the symbols they jump to (sym_plt.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/stacks/sym_plt.h"

#define PLT_ENTRY 16
#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif

struct slot {
	uint64_t got;		/* the GOT slot the entry jumps through */
	const char *name;	/* imported symbol, NULL for an IFUNC */
	uint64_t resolver;	/* IFUNC: its resolver's address */
};

struct plt_sec {
	uint64_t addr, size;
	const uint8_t *bytes;
	bool first_is_plt0;	/* .plt: entry 0 calls the dynamic linker */
};

struct sym_plt {
	struct plt_sec secs[3];
	size_t nsecs;
	struct slot *slots;	/* sorted by got */
	size_t nslots, cap;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The slots of a .rela.plt section, named through its symbol table. */
static int read_relocs(struct sym_plt *p, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *d = elf_getdata(scn, NULL), *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr symsh;
	size_t n;

	if (!d || !syms || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name = NULL;

		if (!gelf_getrela(d, (int)i, &r))
			continue;
		if (GELF_R_TYPE(r.r_info) != R_X86_64_IRELATIVE) {
			if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
		}
		if (grow_array((void **)&p->slots, &p->cap, p->nslots + 1, sizeof(*p->slots), 64))
			return -ENOMEM;
		p->slots[p->nslots++] = (struct slot){ r.r_offset, name,
						       name ? 0 : (uint64_t)r.r_addend };
	}
	return 0;
}

struct sym_plt *sym_plt__new(Elf *elf)
{
	struct sym_plt *p = calloc(1, sizeof(*p));
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = 0;

	if (!p)
		return NULL;
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		err = EINVAL;
		goto fail;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_RELA && !strcmp(name, ".rela.plt")) {
			err = -read_relocs(p, elf, scn, &sh);
		} else if ((!strcmp(name, ".plt") || !strcmp(name, ".plt.sec")) &&
			   sh.sh_type == SHT_PROGBITS &&
			   p->nsecs < sizeof(p->secs) / sizeof(p->secs[0]) &&
			   (d = elf_getdata(scn, NULL)) && d->d_buf && d->d_size >= sh.sh_size) {
			p->secs[p->nsecs++] = (struct plt_sec){ sh.sh_addr, sh.sh_size, d->d_buf,
								!strcmp(name, ".plt") };
		}
	}
	if (!err && (!p->nsecs || !p->nslots))
		err = ENOENT;
	if (err)
		goto fail;
	qsort(p->slots, p->nslots, sizeof(*p->slots), cmp_slot);
	return p;
fail:
	sym_plt__free(p);
	errno = err;
	return NULL;
}

/* The GOT slot an entry's indirect jump reads: `jmp *d(%rip)` (ff 25), after an endbr64
 * (f3 0f 1e fa) and a bnd prefix (f2) in .plt.sec entries. 0 when the entry is none of these. */
static uint64_t entry_slot(const uint8_t *b, uint64_t addr)
{
	size_t at = 0;
	int32_t disp;

	if (!memcmp(b, "\xf3\x0f\x1e\xfa", 4))
		at = 4;
	if (b[at] == 0xf2)
		at++;
	if (b[at] != 0xff || b[at + 1] != 0x25)
		return 0;
	memcpy(&disp, b + at + 2, sizeof(disp));
	return addr + at + 6 + (int64_t)disp;
}

int sym_plt__target(const struct sym_plt *p, uint64_t vaddr, const char **name, uint64_t *resolver)
{
	for (size_t i = 0; p && i < p->nsecs; i++) {
		const struct plt_sec *s = &p->secs[i];
		uint64_t off, got;
		size_t lo = 0, hi = p->nslots;

		if (vaddr < s->addr || vaddr >= s->addr + s->size)
			continue;
		off = (vaddr - s->addr) & ~(uint64_t)(PLT_ENTRY - 1);
		if (s->first_is_plt0 && off == 0)
			return 3;
		if (off + PLT_ENTRY > s->size)
			return 0;
		got = entry_slot(s->bytes + off, s->addr + off);
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (p->slots[mid].got < got)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!got || lo == p->nslots || p->slots[lo].got != got)
			return 0;
		if (p->slots[lo].name) {
			*name = p->slots[lo].name;
			return 1;
		}
		*resolver = p->slots[lo].resolver;
		return 2;
	}
	return 0;
}

void sym_plt__free(struct sym_plt *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p);
}
