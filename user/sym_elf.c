/* sym_elf.c - symbols, lines and inline expansion of one ELF file with elfutils libdwfl. */
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/sym_elf.h"
#include "user/sym_search.h"

/* libstdc++'s demangler (C++ ABI); libdw does not demangle. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Inline nesting deeper than this is cut at its innermost frames. */
#define MAX_DEPTH 64

/* Where a CU's code is, for binaries without .debug_aranges (Go emits none, and libdw 0.188
 * finds CUs by address only through it). */
struct cu_range {
	Dwarf_Addr lo, hi;	/* module addresses, [lo, hi) */
	Dwarf_Die cu;
	Dwarf_Addr bias;
};

/* A function symbol. libdwfl's dwfl_module_addrinfo scans the whole symbol table on every
 * call (a third of the lookup time with libc's debug symbols), so the table is sorted once. */
struct func_sym {
	uint64_t addr, size;
	const char *name;	/* in the ELF string table, alive with the Dwfl */
	int rank;		/* among aliases: global 2, weak 1, local 0 */
};

struct sym_elf {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	char *owned[2 * MAX_DEPTH + 2];	/* names and paths handed out by the last lookup */
	int nowned;
	struct cu_range *ranges;	/* sorted by lo; built on the first aranges miss */
	size_t nranges;
	bool ranges_built;
	struct func_sym *syms;		/* sized functions, sorted by addr; built on first use */
	size_t nsyms;
	bool syms_built;
};

struct sym_elf *sym_elf__open(int fd, const char *path, const char *debuginfo_path)
{
	struct sym_elf *e = calloc(1, sizeof(*e));
	int err = ENOMEM;

	if (!e)
		goto fail;
	if (debuginfo_path) {
		e->debuginfo_path = strdup(debuginfo_path);
		if (!e->debuginfo_path)
			goto fail;
	}
	e->cb.find_elf = dwfl_build_id_find_elf;
	e->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	e->cb.section_address = dwfl_offline_section_address;
	e->cb.debuginfo_path = debuginfo_path ? &e->debuginfo_path : NULL;
	e->dwfl = dwfl_begin(&e->cb);
	if (!e->dwfl)
		goto fail;
	/* Base 0: ET_DYN files sit at their link-time addresses; ET_EXEC ignore the base. On
	 * success libdwfl owns fd and closes it at dwfl_end. */
	e->mod = dwfl_report_elf(e->dwfl, path, path, fd, 0, false);
	if (!e->mod) {
		err = EINVAL;
		goto fail;
	}
	fd = -1;
	if (dwfl_report_end(e->dwfl, NULL, NULL)) {
		err = EINVAL;
		goto fail;
	}
	return e;
fail:
	if (fd >= 0)
		close(fd);
	sym_elf__free(e);
	errno = err;
	return NULL;
}

int sym_elf__vaddr(struct sym_elf *e, uint64_t off, uint64_t *vaddr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(e->mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr + bias;
			return 0;
		}
	}
	return -ENOENT;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every CU's address ranges, read from the CUs themselves (DW_AT_ranges, low/high pc). */
static void build_ranges(struct sym_elf *e)
{
	size_t cap = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = NULL;

	e->ranges_built = true;
	while ((cu = dwfl_module_nextcu(e->mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (e->nranges == cap) {
				struct cu_range *r;

				cap = cap ? cap * 2 : 256;
				r = realloc(e->ranges, cap * sizeof(*r));
				if (!r)
					return;
				e->ranges = r;
			}
			e->ranges[e->nranges++] = (struct cu_range){ lo + bias, hi + bias, *cu, bias };
		}
	}
	qsort(e->ranges, e->nranges, sizeof(*e->ranges), cmp_range);
}

/* The CU holding vaddr and its bias: through .debug_aranges, else the CUs' own ranges. */
static Dwarf_Die *find_cu(struct sym_elf *e, uint64_t vaddr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(e->mod, vaddr, bias);
	size_t lo;

	if (cu)
		return cu;
	if (!e->ranges_built)
		build_ranges(e);
	lo = sym_search__upto(e->ranges, e->nranges, sizeof(*e->ranges),
			      offsetof(struct cu_range, lo), vaddr);
	if (!lo || vaddr >= e->ranges[lo - 1].hi)
		return NULL;
	*bias = e->ranges[lo - 1].bias;
	return &e->ranges[lo - 1].cu;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct func_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	/* Among equal aliases, the one without a reserved-name underscore: getppid, not
	 * __getppid. */
	return (x->name[0] == '_') - (y->name[0] == '_');
}

static void build_syms(struct sym_elf *e)
{
	int n = dwfl_module_getsymtab(e->mod);

	e->syms_built = true;
	if (n <= 0)
		return;
	e->syms = calloc((size_t)n, sizeof(*e->syms));
	if (!e->syms)
		return;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(e->mod, i, &sym, &addr, NULL, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name || !sym.st_size ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		e->syms[e->nsyms++] = (struct func_sym){
			addr, sym.st_size, name,
			bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0,
		};
	}
	qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_sym);
}

/* The function symbol holding vaddr, or NULL. Functions do not nest, but a few (cold parts,
 * aliases of different sizes) start before the nearest one and reach past it. */
static const char *find_sym(struct sym_elf *e, uint64_t vaddr)
{
	size_t lo;

	if (!e->syms_built)
		build_syms(e);
	lo = sym_search__upto(e->syms, e->nsyms, sizeof(*e->syms), offsetof(struct func_sym, addr),
			      vaddr);
	for (size_t i = lo; i > 0 && lo - i < 8; i--) {
		const struct func_sym *f = &e->syms[i - 1];

		if (vaddr - f->addr < f->size) {
			while (i > 1 && e->syms[i - 2].addr == f->addr &&
			       vaddr - e->syms[i - 2].addr < e->syms[i - 2].size)
				f = &e->syms[--i - 1];
			return f->name;
		}
	}
	return NULL;
}

/* Rust's legacy mangling is C++'s plus a trailing "::h<16 hex digits>" hash path element,
 * which only adds noise to a frame. */
static void strip_rust_hash(char *s)
{
	size_t len = strlen(s);
	char *h = s + len - 19;

	if (len < 19 || memcmp(h, "::h", 3))
		return;
	for (int i = 3; i < 19; i++)
		if (!isxdigit((unsigned char)h[i]))
			return;
	*h = '\0';
}

char *sym_elf__demangle(const char *mangled)
{
	int status;
	char *s;

	if (strncmp(mangled, "_Z", 2))
		return NULL;
	s = __cxa_demangle(mangled, NULL, NULL, &status);
	if (!s || status)
		return NULL;
	strip_rust_hash(s);
	return s;
}

/* A name a caller can show: demangled when mangled, owned by e until the next lookup. */
static const char *show(struct sym_elf *e, const char *name)
{
	char *d;

	if (!name || e->nowned == (int)(sizeof(e->owned) / sizeof(*e->owned)))
		return name;
	d = sym_elf__demangle(name);
	if (!d)
		return name;
	e->owned[e->nowned++] = d;
	return d;
}

/* file made absolute with the CU's compilation directory, as DWARF 5 line tables may hold
 * paths relative to it; owned by e until the next lookup. */
static const char *full_path(struct sym_elf *e, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;
	char *p;

	if (!file || *file == '/' || !cu ||
	    e->nowned == (int)(sizeof(e->owned) / sizeof(*e->owned)))
		return file;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir || asprintf(&p, "%s/%s", dir, file) < 0)
		return file;
	e->owned[e->nowned++] = p;
	return p;
}

/* The name of a subprogram or inlined instance: the linkage name (full C++/Rust path, once
 * demangled) when there is one, else DW_AT_name, both through abstract origins. */
static const char *die_name(struct sym_elf *e, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		s = dwarf_formstring(&attr);
		if (s)
			return show(e, s);
	}
	return dwarf_diename(die);
}

/* The call site of an inlined instance, as a file of its CU's line table and a line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, uint64_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx = 0, ln = 0;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &ln) == 0)
		*line = ln;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &idx) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

int sym_elf__frames(struct sym_elf *e, uint64_t vaddr, struct sym_elf_frame *out, int max)
{
	const char *symname, *file = NULL;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Addr bias = 0;
	uint64_t line = 0;
	int n = 0, nscopes = 0;

	while (e->nowned)
		free(e->owned[--e->nowned]);
	if (max <= 0)
		return -EINVAL;
	symname = show(e, find_sym(e, vaddr));
	cu = find_cu(e, vaddr, &bias);
	if (cu) {
		Dwarf_Line *dl = dwarf_getsrc_die(cu, vaddr - bias);
		int l = 0;

		if (dl && dwarf_lineno(dl, &l) == 0 && l > 0)
			line = (uint64_t)l;
		file = full_path(e, cu, dl ? dwarf_linesrc(dl, NULL, NULL) : NULL);
		nscopes = dwarf_getscopes(cu, vaddr - bias, &scopes);
	}
	if (nscopes > 0) {
		/* dwarf_getscopes continues an inlined instance with its abstract definition's
		 * scopes; the code's real nesting (inlined into what) is the DIE's own chain. */
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
	}

	/* Walk out from the innermost scope: each inlined instance is a frame at the location
	 * so far, and moves the location to its call site in the next function out. */
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		out[n] = (struct sym_elf_frame){ die_name(e, &scopes[i]), file, line };
		if (tag == DW_TAG_subprogram) {
			/* The symbol table's name is the fully qualified one (DW_AT_name of a
			 * C++ method is not) and names the code libdwfl actually found. */
			if (symname)
				out[n].func = symname;
			n++;
			break;
		}
		call_site(cu, &scopes[i], &file, &line);
		file = full_path(e, cu, file);
		n++;
	}
	free(scopes);
	if (n == 0 && symname) {
		out[0] = (struct sym_elf_frame){ symname, file, line };
		n = 1;
	}
	return n;
}

void sym_elf__free(struct sym_elf *e)
{
	if (!e)
		return;
	while (e->nowned)
		free(e->owned[--e->nowned]);
	dwfl_end(e->dwfl);
	free(e->ranges);
	free(e->syms);
	free(e->debuginfo_path);
	free(e);
}
