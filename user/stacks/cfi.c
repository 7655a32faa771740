/* cfi.c - compiles .eh_frame / .debug_frame into the unwinder's rows (cfi.h). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/stacks/cfi.h"
#include "user/stacks/cfi_spans.h"
#include "user/stacks/elf_section.h"
#include "user/stacks/gopclntab.h"

/* DWARF register numbers of x86_64 (System V psABI). */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RDI 5
#define REG_RIP 16

/* ---- FDE ranges: libdw decodes the rows, but hands out an FDE's initial location and
 * length still in the pointer encoding its CIE's augmentation names ---- */

#define PE_OMIT 0xff

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Reads a pointer of encoding enc at *p, whose address (for pc-relative values) is at_addr.
 * Only the application the FDEs of Linux binaries use (absolute, pc-relative) is accepted. */
static bool read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t at_addr,
			 bool apply, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = 0;
	size_t size;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	case DW_EH_PE_uleb128:
		if (!read_uleb(p, end, &x))
			return false;
		size = 0;
		break;
	default:
		return false;
	}
	if (size) {
		if ((size_t)(end - q) < size)
			return false;
		memcpy(&x, q, size);	/* x86_64 is little-endian, as its ELF files */
		if (size < 8 && (enc & 0x08) && (x >> (size * 8 - 1)))
			x |= ~0ull << (size * 8);
		*p = q + size;
	}
	if (!apply)
		*v = x;
	else if ((enc & 0x70) == DW_EH_PE_pcrel)
		*v = x + at_addr;
	else if ((enc & 0x70) == DW_EH_PE_absptr)
		*v = x;
	else
		return false;
	return true;
}

/* The FDE pointer encoding a CIE's augmentation ("zR", "zPLR", "zRS", ...) gives. */
static uint8_t fde_encoding(const Dwarf_CIE *cie, bool eh_frame)
{
	const uint8_t *d = cie->augmentation_data, *end = d + cie->augmentation_data_size;
	const char *a = cie->augmentation;

	if (!eh_frame)
		return DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return a && !a[0] ? DW_EH_PE_absptr : PE_OMIT;
	for (a++; *a; a++) {
		uint64_t skip;
		uint8_t enc;

		switch (*a) {
		case 'R':
			return d < end ? *d : PE_OMIT;
		case 'L':
			d++;
			break;
		case 'P':
			if (d >= end)
				return PE_OMIT;
			enc = *d++;
			if (!read_encoded(enc & 0x0f, &d, end, 0, false, &skip))
				return PE_OMIT;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return PE_OMIT;
		}
	}
	return DW_EH_PE_absptr;
}

/* ---- rules ---- */

static bool breg(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = (unsigned)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* The register's rule "saved at CFA + off" (libdw: call_frame_cfa, plus_uconst off). */
static bool at_cfa(Dwarf_Frame *f, int reg, int64_t *off, bool *same, bool *undef)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	*same = *undef = false;
	if (dwarf_frame_register(f, reg, mem, &ops, &n))
		return false;
	if (!n) {
		*same = !ops;
		*undef = !!ops;
		return false;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	return false;
}

/* A register's rule "saved at rsp + off" as the signal trampoline's FDE states it
 * (DW_CFA_expression: libdw gives call_frame_cfa, breg7 off). */
static bool at_sp(Dwarf_Frame *f, int reg, int64_t want)
{
	Dwarf_Op mem[3], *ops;
	unsigned r;
	int64_t off;
	size_t n;

	return !dwarf_frame_register(f, reg, mem, &ops, &n) && n == 2 &&
	       ops[0].atom == DW_OP_call_frame_cfa && breg(&ops[1], &r, &off) && r == REG_RSP &&
	       off == want;
}

/* glibc's and the kernel's sigreturn trampoline: CFA = *(rsp + 160), registers from the
 * mcontext at rsp. */
static bool signal_rule(Dwarf_Frame *f, const Dwarf_Op *cfa, size_t ncfa)
{
	unsigned r;
	int64_t off;

	return ncfa == 2 && breg(&cfa[0], &r, &off) && r == REG_RSP && off == LX_SIGFRAME_RSP &&
	       cfa[1].atom == DW_OP_deref && at_sp(f, REG_RIP, LX_SIGFRAME_RIP) &&
	       at_sp(f, REG_RBP, LX_SIGFRAME_RBP);
}

/* The lazy-binding PLT's CFA: rsp + 8 + ((rip & 15) >= cut ? 8 : 0), as binutils writes it. */
static bool plt_rule(const Dwarf_Op *o, size_t n, int64_t *base, uint8_t *cut)
{
	unsigned r1, r2;
	int64_t off2;

	if (n != 9 || !breg(&o[0], &r1, base) || r1 != REG_RSP || !breg(&o[1], &r2, &off2) ||
	    r2 != REG_RIP || off2 || o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 || o[5].atom != DW_OP_ge ||
	    o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return false;
	*cut = o[4].atom - DW_OP_lit0;
	return true;
}

/* Whether the return address is held in rdi (rule "register(rdi)"): glibc's __vfork pops it
 * there around its syscall, which the child shares the stack for. */
static bool ra_in_rdi(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	return !dwarf_frame_register(f, REG_RIP, mem, &ops, &n) && n == 1 &&
	       ops[0].atom == DW_OP_regx && ops[0].number == REG_RDI;
}

/* The row of frame f, as the unwinder can hold it. */
static struct lx_cfi_row rule_of(Dwarf_Frame *f, bool signal, struct cfi_stats *st)
{
	struct lx_cfi_row r = cfi_rule(LX_CFA_NONE);
	bool same, undef;
	Dwarf_Op *cfa;
	size_t ncfa;
	unsigned reg;
	int64_t off, ra;
	uint8_t cut, rbp = LX_RBP_UNKNOWN;
	int8_t rbp_off = 0;

	if (dwarf_frame_cfa(f, &cfa, &ncfa) || !ncfa)
		return r;
	if (signal) {
		if (signal_rule(f, cfa, ncfa)) {
			st->rows_signal++;
			r.kind = LX_CFI_MAKE_KIND(LX_CFA_SIGNAL, LX_RBP_UNKNOWN);
		}
		return r;
	}
	if (at_cfa(f, REG_RBP, &off, &same, &undef)) {
		if (off % 8 == 0 && off / 8 >= -128 && off / 8 <= 127) {
			rbp = LX_RBP_CFA;
			rbp_off = (int8_t)(off / 8);
		}
	} else if (same) {
		rbp = LX_RBP_SAME;
	}
	if (!at_cfa(f, REG_RIP, &ra, &same, &undef)) {
		if (undef) {
			r.kind = LX_CFI_MAKE_KIND(LX_CFA_END, LX_RBP_UNKNOWN);
		} else if (ra_in_rdi(f) && ncfa == 1 && breg(&cfa[0], &reg, &off) &&
			   reg == REG_RSP && off >= 0 && off % 8 == 0 && off / 8 <= UINT16_MAX) {
			r.kind = LX_CFI_MAKE_KIND(LX_CFA_RA_RDI, rbp);
			r.cfa_off = (uint16_t)(off / 8);
			r.rbp_off = rbp_off;
		}
		return r;
	}
	if (ra != -8)
		return r;
	r.rbp_off = rbp_off;
	if (ncfa == 1 && breg(&cfa[0], &reg, &off) && (reg == REG_RSP || reg == REG_RBP) &&
	    off > 0 && off % 8 == 0 && off / 8 <= UINT16_MAX) {
		r.kind = LX_CFI_MAKE_KIND(reg == REG_RSP ? LX_CFA_SP : LX_CFA_BP, rbp);
		r.cfa_off = (uint16_t)(off / 8);
	} else if (plt_rule(cfa, ncfa, &off, &cut) && off > 0 && off % 8 == 0 &&
		   off / 8 <= UINT16_MAX) {
		st->rows_plt++;
		r.kind = LX_CFI_MAKE_KIND(LX_CFA_PLT, rbp == LX_RBP_CFA ? LX_RBP_UNKNOWN : rbp);
		r.cfa_off = (uint16_t)(off / 8);
		r.rbp_off = (int8_t)cut;
	}
	return r;
}

/* Every row of the FDE covering ELF addresses [lo, hi). */
static int fde_rows(Dwarf_CFI *cfi, const struct cfi_segs *segs, uint64_t lo, uint64_t hi,
		    struct cfi_spans *sp, struct cfi_stats *st, struct cfi_budget *b)
{
	const GElf_Phdr *seg = cfi_segs__of(segs, lo);
	uint64_t pc = lo;

	if (!seg || hi > seg->p_vaddr + seg->p_filesz)
		return 0;	/* not code this file maps executable */
	while (pc < hi) {
		Dwarf_Addr start, end;
		Dwarf_Frame *f;
		bool signal;
		struct lx_cfi_row rule;
		int err = cfi_budget__spent(b);

		if (err)
			return err;
		if (dwarf_cfi_addrframe(cfi, pc, &f))
			return 0;	/* a malformed FDE: its code stays uncovered */
		if (dwarf_frame_info(f, &start, &end, &signal) < 0 || end <= pc) {
			free(f);
			return 0;
		}
		if (end > hi)
			end = hi;
		rule = rule_of(f, signal, st);
		free(f);
		st->rows_in++;
		st->rows_none += LX_CFI_KIND(rule.kind) == LX_CFA_NONE;
		err = cfi_spans__add(sp, pc - seg->p_vaddr + seg->p_offset,
			       end - seg->p_vaddr + seg->p_offset, rule);
		if (err)
			return err;
		pc = end;
	}
	return 0;
}

/* The CFI section: .eh_frame, else .debug_frame. */
static Elf_Scn *cfi_section(Elf *elf, bool *eh_frame, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_section__named(elf, ".eh_frame", sh);

	*eh_frame = scn && sh->sh_type != SHT_NOBITS;
	if (*eh_frame)
		return scn;
	scn = elf_section__named(elf, ".debug_frame", sh);
	return scn && sh->sh_type != SHT_NOBITS ? scn : NULL;
}

/* Code a Go program's own functions cover (sorted spans of its pc tables' rows), whose FDEs, if
 * any, are not taken: its pc tables say more. */
struct go_cover {
	const struct cfi_spans *sp;	/* its first n spans (the array moves as spans are added) */
	size_t n;
};

static bool go_covers(const struct go_cover *go, uint64_t lo, uint64_t hi)
{
	const struct cfi_span *v = go->sp->v;
	size_t a = 0, b = go->n;

	/* The first span ending past lo. */
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (v[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < go->n && v[a].lo < hi;
}

/* The rows of every FDE of data (an ELF's .eh_frame when eh_frame, else its .debug_frame, at
 * ELF address sh_addr), through cfi; those of code go covers (when not NULL) left out. */
static int fde_spans(const GElf_Ehdr *eh, Elf_Data *data, bool eh_frame,
		     uint64_t sh_addr, Dwarf_CFI *cfi, const struct cfi_segs *segs,
		     const struct go_cover *go, struct cfi_spans *sp, struct cfi_stats *st,
		     struct cfi_budget *b)
{
	Dwarf_Off off = 0, next;
	int err;

	for (;;) {
		Dwarf_CFI_Entry e, cie;
		const uint8_t *p, *end = (const uint8_t *)data->d_buf + data->d_size;
		uint64_t lo, len;
		uint8_t enc;
		int r;

		err = cfi_budget__spent(b);
		if (err)
			return err;
		r = dwarf_next_cfi(eh->e_ident, data, eh_frame, off, &next, &e);
		if (r > 0)
			return 0;
		if (r < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				return 0;
			off = next;
			continue;
		}
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		st->fdes++;
		if (dwarf_next_cfi(eh->e_ident, data, eh_frame, e.fde.CIE_pointer, &next, &cie) ||
		    !dwarf_cfi_cie_p(&cie))
			continue;
		enc = fde_encoding(&cie.cie, eh_frame);
		if (enc == PE_OMIT)
			continue;
		p = e.fde.start;
		if (!read_encoded(enc, &p, end, sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf),
				  true, &lo) ||
		    !read_encoded(enc & 0x0f, &p, end, 0, false, &len) || !len)
			continue;
		if (go) {
			const GElf_Phdr *seg = cfi_segs__of(segs, lo);

			if (!seg || go_covers(go, lo - seg->p_vaddr + seg->p_offset,
					      lo + len - seg->p_vaddr + seg->p_offset))
				continue;
		}
		err = fde_rows(cfi, segs, lo, lo + len, sp, st, b);
		if (err)
			return err;
	}
}

static int span_cmp(const void *a, const void *b)
{
	const struct cfi_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A cgo program's C code (its .eh_frame, which an external link writes): rows from its FDEs
 * where Go's pc tables have none, so that a walk goes on through C frames, which gcc gives no
 * frame pointer, to the Go frames under them. */
static int c_spans(Elf *elf, const struct cfi_segs *segs, struct cfi_spans *sp,
		   struct cfi_stats *st, struct cfi_budget *b)
{
	GElf_Shdr sh;
	GElf_Ehdr eh;
	Elf_Scn *scn = elf_section__named(elf, ".eh_frame", &sh);
	Elf_Data *data = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
	struct go_cover go = { sp, sp->n };
	Dwarf_CFI *cfi;
	int err;

	if (!data || !data->d_size || !gelf_getehdr(elf, &eh) || !(cfi = dwarf_getcfi_elf(elf)))
		return 0;
	/* The Go spans first, sorted: FDE spans are added after them, checked against them. */
	qsort(sp->v, sp->n, sizeof(*sp->v), span_cmp);
	err = fde_spans(&eh, data, true, sh.sh_addr, cfi, segs, &go, sp, st, b);
	dwarf_cfi_end(cfi);
	return err;
}

/* The rows of a Go program, from its pc tables: a compile's budget and limits, as for CFI. */
static int compile_go(Elf *elf, Elf_Data *pclntab, const struct cfi_segs *segs,
		      const struct cfi_limits *lim, struct cfi_table *t, struct cfi_stats *st_out)
{
	uint64_t ns = CFI_NS_BASE + (uint64_t)((double)pclntab->d_size / (1 << 20) * CFI_NS_PER_MIB);
	struct cfi_budget b = cfi_budget__start(lim, ns);
	struct cfi_spans sp = { .max = SIZE_MAX };
	struct cfi_stats st = { 0 };
	int err;

	if (lim && lim->max_rows <= SIZE_MAX / 2)
		sp.max = 2 * lim->max_rows;
	err = gopclntab__spans(elf, pclntab, segs, &sp, &st, &b);
	if (!err && sp.n)
		err = c_spans(elf, segs, &sp, &st, &b);
	if (!err)
		err = sp.n ? cfi_spans__to_rows(&sp, t) : -ENOENT;
	free(sp.v);
	if (err)
		cfi_table__release(t);
	if (st_out)
		*st_out = st;
	return err;
}

int cfi__compile(Elf *elf, const struct cfi_limits *lim, struct cfi_table *t,
		 struct cfi_stats *st_out)
{
	const struct cfi_limits none = { .max_rows = SIZE_MAX };
	struct cfi_stats st = { 0 };
	struct cfi_spans sp = { 0 };
	struct cfi_budget b;
	uint64_t ns;
	struct cfi_segs segs;
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	Elf_Data *pclntab;
	bool eh_frame;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || cfi_segs__read(elf, &segs))
		return -EINVAL;
	pclntab = gopclntab__find(elf);
	if (pclntab)
		return compile_go(elf, pclntab, &segs, lim, t, st_out);
	/* A Go program of a layout gopclntab does not read: frame pointers, as Go keeps them
	 * (its .debug_frame says no more than its pc tables, and only when not stripped). */
	if (elf_section__named(elf, ".go.buildinfo", NULL))
		return -ENOENT;
	scn = cfi_section(elf, &eh_frame, &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_size)
		return -ENOENT;
	if (!lim)
		lim = &none;
	sp.max = lim->max_rows > SIZE_MAX / 2 ? SIZE_MAX : 2 * lim->max_rows;
	ns = CFI_NS_BASE + (uint64_t)((double)data->d_size / (1 << 20) * CFI_NS_PER_MIB);
	b = cfi_budget__start(lim, ns);
	if (eh_frame) {
		cfi = dwarf_getcfi_elf(elf);
	} else {
		struct elf_sizes sz;

		elf_section__sizes(elf, &sz);
		if (sz.inflated > CFI_INFLATE_MAX)
			return -ENOBUFS;
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		cfi = dw ? dwarf_getcfi(dw) : NULL;
	}
	if (!cfi) {
		err = -ENOENT;
		goto out;
	}
	err = fde_spans(&eh, data, eh_frame, sh.sh_addr, cfi, &segs, NULL, &sp, &st, &b);
	if (!err)
		err = cfi_spans__to_rows(&sp, t);
out:
	free(sp.v);
	if (dw)
		dwarf_end(dw);
	else if (cfi)
		dwarf_cfi_end(cfi);
	if (err)
		cfi_table__release(t);
	if (st_out)
		*st_out = st;
	return err;
}

uint64_t cfi__work_bytes(int fd, uint64_t size)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Data *pclntab = elf ? gopclntab__find(elf) : NULL;

	if (pclntab && pclntab->d_size < size)
		size = pclntab->d_size;
	if (elf)
		elf_end(elf);
	return size;
}

const struct lx_cfi_row *cfi_rows__find(const struct lx_cfi_row *rows, size_t n, uint32_t off)
{
	size_t lo = 0, hi = n;

	/* The last row starting at or below off. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rows[lo - 1] : NULL;
}

void cfi_table__release(struct cfi_table *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}
