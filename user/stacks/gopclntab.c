/* gopclntab.c - a Go program's pc tables to unwind spans (gopclntab.h). The layouts are those of
 * Go's runtime (runtime/symtab.go: pcHeader, _func, the functab, step) and debug/gosym. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "user/stacks/elf_section.h"
#include "user/stacks/gopclntab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* _func.flag (Go 1.17 and later; 0 in 1.16's padding). */
#define FLAG_TOPFRAME 1	/* the outermost frame of its stack: traceback ends there */
#define FLAG_SPWRITE 2	/* writes rsp other than by a constant: pcsp says nothing after */

/* The tables, as the header places them. */
struct pcln {
	const uint8_t *d;
	size_t size;
	int ver;		/* 116, 118, 120 */
	uint64_t nfunc;
	uint64_t text;		/* ELF address function entries are offsets from (1.18+) */
	uint64_t pctab, functab;	/* offsets into d */
	uint64_t funcname;	/* offset into d of the function names */
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);	/* x86_64 is little-endian, as its ELF files */
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

Elf_Data *gopclntab__find(Elf *elf)
{
	/* A position-independent program keeps it among its relocated read-only data. */
	static const char *const names[] = { ".gopclntab", ".data.rel.ro.gopclntab" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_section__named(elf, names[i], &sh);
		Elf_Data *d = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
		uint32_t magic;

		if (!d || d->d_size < 8 + 8 * 8)
			continue;
		magic = rd32(d->d_buf);
		if ((magic == MAGIC_116 || magic == MAGIC_118 || magic == MAGIC_120) &&
		    !((const uint8_t *)d->d_buf)[4] && !((const uint8_t *)d->d_buf)[5] &&
		    ((const uint8_t *)d->d_buf)[6] == 1 && ((const uint8_t *)d->d_buf)[7] == 8)
			return d;
	}
	return NULL;
}

/* The header's fields; -EINVAL when they do not fit the section. */
static int read_header(Elf *elf, Elf_Data *data, struct pcln *t)
{
	const uint8_t *d = data->d_buf;
	uint64_t word[8];
	uint32_t magic = rd32(d);
	int pctab_w, functab_w;

	t->d = d;
	t->size = data->d_size;
	for (int i = 0; i < 8; i++)
		word[i] = rd64(d + 8 + 8 * i);
	t->ver = magic == MAGIC_116 ? 116 : magic == MAGIC_118 ? 118 : 120;
	t->nfunc = word[0];
	if (t->ver == 116) {
		/* No text start: entries are addresses. */
		pctab_w = 5;
		functab_w = 6;
		t->text = 0;
	} else {
		GElf_Shdr sh;

		pctab_w = 6;
		functab_w = 7;
		t->text = word[2];
		/* A position-independent program's is relocated at load: 0 in the file. Go's
		 * linker starts .text with runtime.text then (debug/gosym reads it so too). */
		if (!t->text && elf_section__named(elf, ".text", &sh))
			t->text = sh.sh_addr;
	}
	t->pctab = word[pctab_w];
	t->functab = word[functab_w];
	t->funcname = word[pctab_w - 3];
	/* The function table: nfunc + 1 pairs (the last one's entry is the end of the text). */
	if (t->pctab >= t->size || t->functab >= t->size || t->funcname >= t->size ||
	    t->nfunc > t->size / 8 ||
	    (t->ver == 116 ? 16 : 8) * (t->nfunc + 1) > t->size - t->functab)
		return -EINVAL;
	return 0;
}

/* Function i's entry (ELF address) and its _func's offset in the table. */
static void functab_at(const struct pcln *t, uint64_t i, uint64_t *entry, uint64_t *func)
{
	const uint8_t *p = t->d + t->functab;

	if (t->ver == 116) {
		*entry = rd64(p + 16 * i);
		*func = rd64(p + 16 * i + 8);
	} else {
		*entry = t->text + rd32(p + 8 * i);
		*func = rd32(p + 8 * i + 4);
	}
}

/* The name of the function whose _func is at offset fo of the function table, or NULL when
 * the table holds none there. */
static const char *func_name(const struct pcln *t, uint64_t fo)
{
	const char *name;
	uint64_t at;

	/* _func: nameOff, an int32 at 4 (at 8 in 1.16's, whose entry is 8 bytes). */
	if (fo > t->size - t->functab || t->size - t->functab - fo < 12)
		return NULL;
	at = (uint64_t)rd32(t->d + t->functab + fo + (t->ver == 116 ? 8 : 4));
	if (at >= t->size - t->funcname)
		return NULL;
	name = (const char *)t->d + t->funcname + at;
	/* A name must end inside the section: the file is the program's owner's. */
	return *name && memchr(name, '\0', t->size - t->funcname - at) ? name : NULL;
}

/* An unsigned varint of the pc tables; false past end. */
static bool uvarint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 35; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* One entry of a pc-value table: the value changes by a zigzag delta, then holds for pcdelta
 * bytes. false at the table's end (a 0 delta past the first entry) or past end. */
static bool step(const uint8_t **p, const uint8_t *end, bool first, int32_t *val,
		 uint64_t *pc)
{
	uint32_t vd, pd;

	if (*p >= end || (!**p && !first))
		return false;
	if (!uvarint(p, end, &vd) || !uvarint(p, end, &pd))
		return false;
	*val += (int32_t)(-(vd & 1) ^ (vd >> 1));
	*pc += pd;	/* x86_64's pc quantum is 1 */
	return true;
}

/* The code bytes at ELF address a, n of them, or NULL. */
static const uint8_t *code_at(const uint8_t *file, size_t fsize, const struct cfi_segs *segs,
			      uint64_t a, size_t n)
{
	const GElf_Phdr *seg = cfi_segs__of(segs, a);
	uint64_t off;

	if (!seg || a + n > seg->p_vaddr + seg->p_filesz)
		return NULL;
	off = a - seg->p_vaddr + seg->p_offset;
	return off + n <= fsize ? file + off : NULL;
}

/* Where a function whose stack pointer first moves by frame at pc has saved the caller's rbp,
 * at CFA - 16, from: Go 1.21+ begins a frame with `push %rbp; mov %rsp,%rbp` (the push ends at
 * pc), earlier ones with `sub $frame,%rsp` then `mov %rbp,frame-8(%rsp)` (at pc). UINT64_MAX:
 * no frame pointer saved (a frameless function whose stack moved for other reasons). */
static uint64_t rbp_saved_from(const uint8_t *file, size_t fsize, const struct cfi_segs *segs,
			       uint64_t pc, int32_t frame)
{
	static const uint8_t mov_sp_bp[] = { 0x48, 0x89, 0xe5 };
	const uint8_t *c = code_at(file, fsize, segs, pc - 1, 9);
	uint32_t disp = (uint32_t)frame - 8;

	if (!c)
		return UINT64_MAX;
	if (frame == 8 && c[0] == 0x55 && !memcmp(c + 1, mov_sp_bp, 3))
		return pc;
	/* mov %rbp,(%rsp) / mov %rbp,disp8(%rsp) / mov %rbp,disp32(%rsp) */
	if (c[1] == 0x48 && c[2] == 0x89 && c[3] == 0x2c && c[4] == 0x24 && !disp)
		return pc + 4;
	if (c[1] == 0x48 && c[2] == 0x89 && c[3] == 0x6c && c[4] == 0x24 && disp < 0x80 &&
	    c[5] == disp)
		return pc + 5;
	if (c[1] == 0x48 && c[2] == 0x89 && c[3] == 0xac && c[4] == 0x24 && rd32(c + 5) == disp)
		return pc + 8;
	return UINT64_MAX;
}

/* Adds [lo, hi) (ELF addresses inside one segment) with rule r. */
static int add(struct cfi_spans *sp, const struct cfi_segs *segs, uint64_t lo, uint64_t hi,
	       struct lx_cfi_row r)
{
	const GElf_Phdr *seg = cfi_segs__of(segs, lo);

	if (lo >= hi || !seg || hi > seg->p_vaddr + seg->p_filesz)
		return 0;	/* not code this file maps executable */
	return cfi_spans__add(sp, lo - seg->p_vaddr + seg->p_offset,
			      hi - seg->p_vaddr + seg->p_offset, r);
}

/* The rule of a pc range whose stack pointer is delta below the entry's, the caller's rbp saved
 * at CFA - 16 or still in rbp. */
static struct lx_cfi_row sp_rule(int32_t delta, bool rbp_saved, struct cfi_stats *st)
{
	struct lx_cfi_row r = cfi_rule(LX_CFA_SP);

	if (delta < 0 || delta % 8 || (delta + 8) / 8 > UINT16_MAX) {
		st->rows_none++;
		return cfi_rule(LX_CFA_NONE);
	}
	r.cfa_off = (uint16_t)((delta + 8) / 8);
	/* Go changes rbp only to make its frame, after saving the caller's. */
	if (delta && rbp_saved) {
		r.kind = LX_CFI_MAKE_KIND(LX_CFA_SP, LX_RBP_CFA);
		r.rbp_off = -2;
	} else {
		r.kind = LX_CFI_MAKE_KIND(LX_CFA_SP, LX_RBP_SAME);
	}
	return r;
}

/* Whether the function at entry is a signal restorer: `mov $SYS_rt_sigreturn,%rax; syscall`,
 * where the kernel makes a handler return to (Go's runtime.sigreturn, sigreturn__sigaction
 * from 1.20), as gdb tells __restore_rt by its code. rsp there points at the ucontext. */
static bool is_restorer(const uint8_t *file, size_t fsize, const struct cfi_segs *segs,
			uint64_t entry)
{
	static const uint8_t code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	const uint8_t *c = code_at(file, fsize, segs, entry, sizeof(code));

	return c && !memcmp(c, code, sizeof(code));
}

/* Whether a function Go flags as a stack's top is its signal handler's entry, which the kernel
 * calls on the signal stack with the restorer as return address: Go's traceback of the
 * handler ends there, but the thread's stack goes on, through the signal frame, in the code the
 * signal interrupted (gdb shows it under "<signal handler called>"). */
static bool is_sigtramp(const struct pcln *t, uint64_t fo)
{
	const char *name = func_name(t, fo);

	return name &&
	       (!strcmp(name, "runtime.sigtramp") || !strcmp(name, "runtime.sigtramp.abi0"));
}

/* The spans of one function: [entry, end), its pcsp table at offset pcsp of the pc tables. */
static int func_spans(const struct pcln *t, const uint8_t *file, size_t fsize,
		      const struct cfi_segs *segs, uint64_t entry, uint64_t end, uint32_t pcsp,
		      struct cfi_spans *sp, struct cfi_stats *st)
{
	const uint8_t *p, *tend = t->d + t->size;
	uint64_t pc = entry, saved = UINT64_MAX;
	struct lx_cfi_row last = cfi_rule(LX_CFA_NONE);
	int32_t val = -1;
	bool first = true, framed = false;
	int err;

	if (!pcsp || pcsp >= t->size - t->pctab)
		return add(sp, segs, entry, end, cfi_rule(LX_CFA_NONE));
	p = t->d + t->pctab + pcsp;
	while (pc < end) {
		uint64_t lo = pc;
		int32_t v;

		if (!step(&p, tend, first, &val, &pc))
			break;
		first = false;
		v = val;
		if (pc > end)
			pc = end;
		if (v > 0 && !framed) {
			framed = true;
			saved = rbp_saved_from(file, fsize, segs, lo, v);
		}
		st->rows_in++;
		if (saved > lo && saved < pc) {
			/* The save is inside this range: before it rbp is the caller's. */
			err = add(sp, segs, lo, saved, sp_rule(v, false, st));
			if (!err)
				err = add(sp, segs, saved, pc, sp_rule(v, true, st));
		} else {
			err = add(sp, segs, lo, pc, sp_rule(v, saved <= lo, st));
		}
		if (err)
			return err;
		last = sp_rule(v, saved < pc, st);
	}
	/* The table ends with the function's code; up to the next one's entry is alignment
	 * padding, never run: the last rule covers it, as one row. */
	return pc < end ? add(sp, segs, pc, end, last) : 0;
}

int gopclntab__spans(Elf *elf, Elf_Data *pclntab, const struct cfi_segs *segs,
		     struct cfi_spans *sp, struct cfi_stats *st, struct cfi_budget *b)
{
	struct pcln t;
	size_t fsize;
	const uint8_t *file = (const uint8_t *)elf_rawfile(elf, &fsize);
	int err = read_header(elf, pclntab, &t);

	if (err)
		return err;
	if (!file)
		return -EINVAL;
	for (uint64_t i = 0; i < t.nfunc; i++) {
		uint64_t entry, end, fo, unused;
		const uint8_t *f;
		uint8_t flag;
		uint32_t pcsp;

		err = cfi_budget__spent(b);
		if (err)
			return err;
		functab_at(&t, i, &entry, &fo);
		functab_at(&t, i + 1, &end, &unused);
		/* _func: pcsp at 16 (20 in 1.16's, whose entry is 8 bytes), flag at 37 (1.18-1.19),
		 * 41 (1.16-1.17, and 1.20+ with its start line). */
		if (end <= entry || fo > t.size - t.functab || t.size - t.functab - fo < 44)
			continue;
		f = t.d + t.functab + fo;
		pcsp = rd32(f + (t.ver == 116 ? 20 : 16));
		flag = f[t.ver == 118 ? 37 : 41];
		st->fdes++;
		if (is_restorer(file, fsize, segs, entry))
			err = add(sp, segs, entry, end, cfi_rule(LX_CFA_SIGNAL));
		else if ((flag & FLAG_TOPFRAME) && !is_sigtramp(&t, fo))
			err = add(sp, segs, entry, end, cfi_rule(LX_CFA_END));
		else if (flag & FLAG_SPWRITE)
			err = add(sp, segs, entry, end, cfi_rule(LX_CFA_SWITCH));
		else
			err = func_spans(&t, file, fsize, segs, entry, end, pcsp, sp, st);
		if (err)
			return err;
	}
	return 0;
}

int gopclntab__funcs(Elf *elf, Elf_Data *pclntab,
		     int (*fn)(void *ctx, uint64_t lo, uint64_t hi, const char *name), void *ctx)
{
	struct pcln t;
	int err = read_header(elf, pclntab, &t);

	if (err)
		return err;
	for (uint64_t i = 0; i < t.nfunc; i++) {
		uint64_t entry, end, fo, unused;
		const char *name;

		functab_at(&t, i, &entry, &fo);
		functab_at(&t, i + 1, &end, &unused);
		if (end <= entry)
			continue;
		name = func_name(&t, fo);
		if (!name)
			continue;
		err = fn(ctx, entry, end, name);
		if (err)
			return err;
	}
	return 0;
}
