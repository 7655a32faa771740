/* sym_elf.c - symbols, lines and inline expansion of one ELF file with elfutils libdwfl. */
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/stacks/elf_section.h"
#include "user/stacks/gopclntab.h"
#include "user/stacks/sym_elf.h"
#include "user/stacks/sym_plt.h"
#include "user/stacks/sym_search.h"

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

/* One range of a concrete function (DW_TAG_subprogram with code) in a CU. dwarf_getscopes
 * finds an address's scopes by walking its CU's DIEs from the start, which costs 15 to 80 µs
 * per address in C CUs and 0.8 ms in Go's package-sized ones; a per-CU sorted table of its
 * functions, built on the CU's first lookup, leaves only one function's subtree to walk. */
struct fn_range {
	Dwarf_Addr lo, hi;	/* DWARF addresses (module address - bias), [lo, hi) */
	Dwarf_Die die;
};

struct cu_fns {
	struct fn_range *r;	/* sorted by lo */
	size_t n;
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
	size_t nsyms, syms_cap;
	Dwarf_Addr go_bias;		/* of the names from a Go program's pc tables */
	char **plain;			/* the names of versioned symbols without the version */
	size_t nplain, plain_cap;
	bool syms_built;
	bool no_dwarf;			/* its DWARF names an alternate file outside root's tree,
					 * or is past the budget (dwarf_refused) */
	bool dwarf_refused;
	struct u64map *cu_fns_at;	/* CU DIE offset -> index + 1 in cu_fns */
	struct cu_fns *cu_fns;
	size_t ncu_fns, cu_fns_cap;
	struct sym_plt *plt;		/* built on the first address no symbol covers */
	bool plt_built;
	char plt_name[256];
	uint64_t bytes;			/* what it holds, as counted (sym_elf__bytes) */
	bool dwarf_counted;		/* the DWARF file's inflated sections are in bytes */
};

/* What libdw keeps of a line table row once a CU's table is parsed (its Dwarf_Line is 40-56
 * bytes by version), with the share of the file table, of libdwfl's own entry for the row and
 * of the parse's freed lists that malloc cannot give back: looked up all over libc with its
 * debug file (291,211 rows in 2,063 CUs), the heap grew 34.5 MiB, counted 31.2 at 64 bytes a
 * row (sym_names/what_reading_a_binary_takes_is_counted). */
#define LINE_BYTES 76
/* What a CU looked up costs besides its lines and functions: libdw's CU and abbreviations. */
#define CU_BYTES 2048
/* An address range of a CU: libdw's and libdwfl's entries for it. */
#define ARANGE_BYTES 64

/* Whether name is in dir/sub (sub may be empty): access only, nothing opened. */
static bool debug_file_at(const char *dir, size_t dirlen, const char *sub, size_t sublen,
			  const char *name)
{
	char path[PATH_MAX];

	return snprintf(path, sizeof(path), "%.*s/%.*s%s%s", (int)dirlen, dir, (int)sublen, sub,
			sublen ? "/" : "", name) < (int)sizeof(path) && !access(path, F_OK);
}

/* Whether one of the names libdwfl's search tries for file_name's debug file in the absolute
 * directory dir exists: the link name (or BASENAME.debug and BASENAME without one) under each
 * tail of the file's directory (dir/usr/lib/x/NAME, dir/lib/x/NAME, dir/x/NAME, dir/NAME), or
 * dwz's dir/.dwz/NAME. */
static bool debug_file_in(const char *dir, size_t dirlen, const char *file_name,
			  const char *debuglink)
{
	const char *base = strrchr(file_name, '/') + 1, *sub = file_name;
	char made[NAME_MAX + 8];

	if (!debuglink && snprintf(made, sizeof(made), "%s.debug", base) < (int)sizeof(made))
		debuglink = made;
	if (debuglink && debug_file_at(dir, dirlen, ".dwz", 4, debuglink))
		return true;
	while ((sub = strchr(sub, '/'))) {
		size_t sublen = ++sub < base ? (size_t)(base - 1 - sub) : 0;

		if ((debuglink && debug_file_at(dir, dirlen, sub, sublen, debuglink)) ||
		    (debuglink == made && debug_file_at(dir, dirlen, sub, sublen, base)))
			return true;
		if (!sublen)
			break;
	}
	return false;
}

/* Whether a separate debug file for mod may be in one of dirs (libdwfl's syntax: absolute
 * directories separated by ':', each perhaps after a '+' or '-' of its CRC check), by build id
 * (DIR/.build-id/xx/rest.debug) or, for an absolute file_name, by name (debug_file_in), for
 * it or the file its symlinks lead to: the places libdwfl's search looks. When none has one, its search goes on
 * to a debuginfod server: it loads libdebuginfod, and with it libcurl, gnutls and kerberos
 * (~7 MB of the recorder's memory, for nothing), and with DEBUGINFOD_URLS in root's
 * environment it would fetch the file over the network, however long that takes. */
static bool debug_file_may_be_there(Dwfl_Module *mod, const char *dirs, const char *file_name,
				    const char *debuglink)
{
	const unsigned char *id;
	GElf_Addr at;
	int n = dwfl_module_build_id(mod, &id, &at);
	char hex[2 * 64 + 8] = "", sub[16], *canon;
	bool found = false;

	/* A relative name (the vDSO's "[vdso]") has only its build id looked up. */
	if (file_name && file_name[0] != '/')
		file_name = NULL;
	for (int i = 1; i < n && i < 64; i++)
		snprintf(hex + 2 * (i - 1), 3, "%02x", id[i]);
	strcat(hex, ".debug");
	canon = file_name ? realpath(file_name, NULL) : NULL;
	snprintf(sub, sizeof(sub), ".build-id/%02x", n > 1 ? id[0] : 0);
	for (const char *d = dirs; d && *d && !found; d += *d == ':') {
		size_t len;

		d += *d == '+' || *d == '-';
		len = strcspn(d, ":");
		found = d[0] != '/' || (n > 1 && debug_file_at(d, len, sub, strlen(sub), hex)) ||
			(file_name && debug_file_in(d, len, file_name, debuglink)) ||
			(canon && debug_file_in(d, len, canon, debuglink));
		d += len;
	}
	free(canon);
	return found;
}

/* libdwfl's standard search, kept to the debuginfo path's directories. Its default path also
 * looks beside the binary and in its .debug directory, where the binary's owner can put a
 * FIFO whose open never returns (libdwfl retries an open that a signal interrupts, so not
 * even Ctrl-C ends it); and a .gnu_debuglink is a name the binary chose, which "../" could
 * walk out of the directory: only a plain name is looked up, else the default BASENAME.debug. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	const struct sym_elf *e = userdata ? *userdata : NULL;

	/* A debuglink with a '/' is dwz's shared file (altlink_outside_root kept it to root's
	 * tree), looked up as before. */
	if (debuglink_file && (strchr(debuglink_file, '/') || !strcmp(debuglink_file, "..")))
		debuglink_file = NULL;
	else if (e && !debug_file_may_be_there(mod, e->debuginfo_path, file_name, debuglink_file))
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

/* Whether path lies in root's debug tree, without a ".." step out of it. */
static bool in_debug_root(const char *path)
{
	size_t n = strlen(SYM_ELF_DEBUG_ROOT);

	if (strncmp(path, SYM_ELF_DEBUG_ROOT "/", n + 1))
		return false;
	for (const char *p = path; (p = strstr(p, "/..")); p += 3)
		if (p[3] == '/' || !p[3])
			return false;
	return true;
}

/* libdw opens the file a .gnu_debugaltlink names by itself, when DWARF refers to it (dwz's
 * shared DWARF): an absolute path, or one beside the file holding the link. In a binary its
 * owner built, that can name a FIFO, whose open never returns. Such DWARF is not read unless
 * the name is in root's debug tree, where distributions put their dwz files; the symbol table
 * still names the functions. A separate debug file comes from root's tree: not checked. */
static bool altlink_outside_root(Elf *elf)
{
	Elf_Scn *scn = elf_section__named(elf, ".gnu_debugaltlink", NULL);
	const char *link;
	Elf_Data *d;

	if (!scn)
		return false;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return true;
	link = d->d_buf;
	return strnlen(link, d->d_size) == d->d_size || !in_debug_root(link);
}

/* Takes what reading elf will cost from *budget; -ENOBUFS when its compressed sections alone
 * would exceed it. Nothing is inflated or parsed before the symbol table or DWARF is first
 * read: now. The debug files libdwfl may add come from the debug path only (find_debuginfo). */
static int charge(struct sym_elf *e, Elf *elf, uint64_t *budget)
{
	struct elf_sizes sz;
	uint64_t dwarf;

	elf_section__sizes(elf, &sz);
	if (sz.inflated > *budget)
		return -ENOBUFS;
	*budget -= sz.inflated;
	if (e->no_dwarf || !sz.dwarf)
		return 0;
	dwarf = sz.dwarf > UINT64_MAX / SYM_ELF_DWARF_COST ? UINT64_MAX :
							      sz.dwarf * SYM_ELF_DWARF_COST;
	if (dwarf > *budget) {
		e->no_dwarf = e->dwarf_refused = true;
		return 0;
	}
	*budget -= dwarf;
	return 0;
}

static bool is_elf(int fd)
{
	char magic[SELFMAG];

	return pread(fd, magic, SELFMAG, 0) == SELFMAG && !memcmp(magic, ELFMAG, SELFMAG);
}

struct sym_elf *sym_elf__open(int fd, const char *path, const char *debuginfo_path,
			      uint64_t *budget)
{
	struct sym_elf *e = calloc(1, sizeof(*e));
	int err = ENOMEM;
	void **userdata;
	GElf_Addr bias;
	Elf *elf;

	if (!e)
		goto fail;
	/* Absolute directories only: an empty entry or a relative one means "beside the
	 * binary" to libdwfl. */
	e->debuginfo_path = strdup(debuginfo_path ? debuginfo_path : SYM_ELF_DEBUG_ROOT);
	if (!e->debuginfo_path)
		goto fail;
	e->cu_fns_at = u64map__new();
	if (!e->cu_fns_at)
		goto fail;
	e->cb.find_elf = dwfl_build_id_find_elf;
	e->cb.find_debuginfo = find_debuginfo;
	e->cb.section_address = dwfl_offline_section_address;
	e->cb.debuginfo_path = &e->debuginfo_path;
	e->dwfl = dwfl_begin(&e->cb);
	if (!e->dwfl)
		goto fail;
	/* libdwfl inflates a gzip, bzip2, xz or zstd file to whatever size it holds, to look for
	 * an ELF file inside: any file can be mapped executable, so one that is not ELF is not
	 * handed to it. */
	if (!is_elf(fd)) {
		err = EINVAL;
		goto fail;
	}
	/* Base 0: ET_DYN files sit at their link-time addresses; ET_EXEC ignore the base. On
	 * success libdwfl owns fd and closes it at dwfl_end. */
	e->mod = dwfl_report_elf(e->dwfl, path, path, fd, 0, false);
	if (!e->mod) {
		err = EINVAL;
		goto fail;
	}
	fd = -1;
	/* The module's userdata is for the callbacks: find_debuginfo reads the debug path. */
	dwfl_module_info(e->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = e;
	if (dwfl_report_end(e->dwfl, NULL, NULL)) {
		err = EINVAL;
		goto fail;
	}
	elf = dwfl_module_getelf(e->mod, &bias);
	e->no_dwarf = elf && altlink_outside_root(elf);
	if (budget && elf && charge(e, elf, budget)) {
		err = ENOBUFS;
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

/* Whether a page of [lo, hi) holds bytes of its own: a private file mapping's page that was
 * written (copied on write, anonymous now), per /proc/self/pagemap (bit 63: present, bit 61:
 * a page of the file). When it cannot tell: yes. */
static bool written(uintptr_t lo, uintptr_t hi, size_t page)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t ent[512];
	bool own = fd < 0;

	for (uintptr_t a = lo; !own && a < hi;) {
		size_t n = (hi - a) / page < 512 ? (hi - a) / page : 512;
		ssize_t got = pread(fd, ent, n * sizeof(*ent), (off_t)(a / page * sizeof(*ent)));

		if (got != (ssize_t)(n * sizeof(*ent))) {
			own = true;
			break;
		}
		for (size_t i = 0; i < n && !own; i++)
			own = (ent[i] >> 63 & 1) && !(ent[i] >> 61 & 1);
		a += n * page;
	}
	if (fd >= 0)
		close(fd);
	return own;
}

/* Takes the pages of elf's file out of this process's memory. libelf maps the file private
 * and writable, and writes nothing there when reading (tested: anonymous pages are none), so
 * MADV_DONTNEED leaves the page cache to hold them, and the next touch maps them again;
 * should a page have been written (libdwfl relocates ET_REL files' DWARF in place), its bytes
 * cannot go: MADV_PAGEOUT then, which drops only what the file holds. */
static void page_out(Elf *elf)
{
	size_t size = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	char *raw = elf ? elf_rawfile(elf, &size) : NULL;
	uintptr_t lo, hi;

	if (!raw)
		return;
	lo = ((uintptr_t)raw + page - 1) & ~(uintptr_t)(page - 1);
	hi = ((uintptr_t)raw + size) & ~(uintptr_t)(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo,
			      written(lo, hi, page) ? MADV_PAGEOUT : MADV_DONTNEED);
}

void sym_elf__page_out(struct sym_elf *e)
{
	const char *debugfile = NULL;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(e->mod, &bias);
	Dwarf *dw;

	page_out(elf);
	/* A separate debug file has a mapping of its own, once its DWARF was read: asking for
	 * the DWARF then reads nothing more. */
	dwfl_module_info(e->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (!debugfile || e->no_dwarf)
		return;
	dw = dwfl_module_getdwarf(e->mod, &bias);
	if (dw && dwarf_getelf(dw) != elf)
		page_out(dwarf_getelf(dw));
}

bool sym_elf__dwarf_refused(const struct sym_elf *e)
{
	return e->dwarf_refused;
}

int sym_elf__loads(struct sym_elf *e, struct sym_elf_load *out, int max)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(e->mod, &bias);
	size_t n;
	int got = 0;

	if (!elf || elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n && got < INT32_MAX; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (got < max)
			out[got] = (struct sym_elf_load){ ph.p_offset, ph.p_filesz, ph.p_vaddr + bias };
		got++;
	}
	return got;
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
	if (e->no_dwarf)
		return;
	while ((cu = dwfl_module_nextcu(e->mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (grow_array((void **)&e->ranges, &cap, e->nranges + 1, sizeof(*e->ranges), 256))
				return;
			e->ranges[e->nranges++] = (struct cu_range){ lo + bias, hi + bias, *cu, bias };
		}
	}
	if (e->nranges)		/* NULL when there is none: not for qsort */
		qsort(e->ranges, e->nranges, sizeof(*e->ranges), cmp_range);
}

/* The CU holding vaddr and its bias: through .debug_aranges, else the CUs' own ranges. */
static Dwarf_Die *find_cu(struct sym_elf *e, uint64_t vaddr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = e->no_dwarf ? NULL : dwfl_module_addrdie(e->mod, vaddr, bias);
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

/* How far a label without a size reaches at most. */
#define LABEL_MAX_BYTES 4096

/* Whether section shndx of elf holds instructions. */
static bool in_code(Elf *elf, GElf_Word shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (!elf || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* name without the symbol version that the linker writes into .symtab names since binutils
 * 2.35 (pthread_cond_wait@@GLIBC_2.3.2 for the default version, memcpy@GLIBC_2.2.5 for an
 * older one): gdb names both functions without it, and grouping frames by function must not
 * split on a link-time detail. The copy lives with e; name itself when it has no version or
 * memory runs out. */
static const char *unversioned(struct sym_elf *e, const char *name)
{
	const char *at = strchr(name, '@');
	char *plain;

	if (!at || at == name ||
	    grow_array((void **)&e->plain, &e->plain_cap, e->nplain + 1, sizeof(*e->plain), 64))
		return name;
	plain = strndup(name, (size_t)(at - name));
	if (!plain)
		return name;
	e->plain[e->nplain++] = plain;
	return plain;
}

/* gopclntab__funcs's callback: a function of a Go program's pc tables as a symbol. */
static int add_go_func(void *ctx, uint64_t lo, uint64_t hi, const char *name)
{
	struct sym_elf *e = ctx;

	if (grow_array((void **)&e->syms, &e->syms_cap, e->nsyms + 1, sizeof(*e->syms), 1024))
		return -ENOMEM;
	e->syms[e->nsyms++] = (struct func_sym){ lo + e->go_bias, hi - lo, name, 2 };
	return 0;
}

/* A Go program stripped of its symbols (-ldflags=-s: no .symtab, a .dynsym of a few cgo
 * exports at most) keeps its functions' names in its pc tables, as Go's own traceback reads
 * them: they name its frames. */
static void build_go_syms(struct sym_elf *e)
{
	Elf *elf = dwfl_module_getelf(e->mod, &e->go_bias);
	Elf_Data *pclntab = elf && !elf_section__named(elf, ".symtab", NULL) ?
			    gopclntab__find(elf) : NULL;
	size_t had = e->nsyms;

	if (pclntab && gopclntab__funcs(elf, pclntab, add_go_func, e))
		e->nsyms = had;	/* out of memory: the symbols there were */
}

static void build_syms(struct sym_elf *e)
{
	int n = dwfl_module_getsymtab(e->mod);

	e->syms_built = true;
	e->syms = n > 0 ? calloc((size_t)n, sizeof(*e->syms)) : NULL;
	if (e->syms)
		e->syms_cap = (size_t)n;
	for (int i = 0; e->syms && i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(e->mod, i, &sym, &addr, &shndx, &elf,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name)
			continue;
		name = unversioned(e, name);
		if (sym.st_size && (type == STT_FUNC || type == STT_GNU_IFUNC)) {
			e->syms[e->nsyms++] = (struct func_sym){
				addr, sym.st_size, name,
				bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0,
			};
		} else if (!sym.st_size && (type == STT_FUNC || type == STT_NOTYPE) &&
			   in_code(elf, shndx)) {
			/* A label of hand-written assembly (ld.so's _start, _dl_start_user): it
			 * reaches the next symbol, as perf names it. Sized symbols win. */
			e->syms[e->nsyms++] = (struct func_sym){ addr, 0, name, -1 };
		}
	}
	build_go_syms(e);
	if (e->nsyms)
		qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_sym);
	/* The plain names count as long as a symbol's slot: most are short. */
	e->bytes += (uint64_t)n * sizeof(*e->syms) + e->nplain * (sizeof(*e->syms) + 16);
	for (size_t i = 0; i < e->nsyms; i++) {
		struct func_sym *f = &e->syms[i];
		size_t j = i + 1;

		if (f->size)
			continue;
		while (j < e->nsyms && e->syms[j].addr == f->addr)
			j++;
		f->size = j < e->nsyms ? e->syms[j].addr - f->addr : 1;
		if (f->size > LABEL_MAX_BYTES)
			f->size = LABEL_MAX_BYTES;
	}
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

/* Counts, once, the sections of e's DWARF file that libelf inflated when libdw read them.
 * Counted from where their bytes are, not from their headers: libdw inflates them in place,
 * and a count from the headers after that found none (libc's debug file: 10 MB of the 34.5
 * MB that reading it took were not counted). */
static void count_dwarf(struct sym_elf *e)
{
	Dwarf_Aranges *aranges;
	Dwarf_Addr bias;
	size_t n = 0;
	Dwarf *dw;

	if (e->dwarf_counted)
		return;
	e->dwarf_counted = true;
	dw = dwfl_module_getdwarf(e->mod, &bias);
	if (!dw || !dwarf_getelf(dw))
		return;
	e->bytes += elf_section__dwarf_held(dwarf_getelf(dw));
	/* libdwfl finds an address's CU through libdw's address ranges of all CUs, read whole
	 * at the first lookup, and keeps one entry of its own for each. */
	if (!dwarf_getaranges(dw, &aranges, &n))
		e->bytes += (uint64_t)n * ARANGE_BYTES;
}

bool sym_elf__prepare(struct sym_elf *e, uint64_t max_bytes)
{
	const char *debugfile = NULL;
	Dwarf_Addr bias;
	struct stat st;
	size_t size = 0;
	Elf *elf;

	/* The symbol table of a stripped binary is its debug file's: finding it here tells where
	 * (and how large) the DWARF is before any of it is read. */
	if (!e->syms_built)
		build_syms(e);
	if (e->no_dwarf)
		return false;
	dwfl_module_info(e->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile) {
		if (stat(debugfile, &st))
			return false;
		size = (size_t)st.st_size;
	} else {
		elf = dwfl_module_getelf(e->mod, &bias);
		if (!elf || !elf_section__named(elf, ".debug_info", NULL) || !elf_rawfile(elf, &size))
			return false;
	}
	if (size > max_bytes || !dwfl_module_getdwarf(e->mod, &bias))
		return false;
	count_dwarf(e);
	return true;
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

/* A line table's file as libdw gives it, joined to its directory entry (DWARF 5's directory 0
 * is the compilation directory itself, DWARF 4's stands for it), made absolute with an
 * absolute DW_AT_comp_dir when the entry was relative to it (gcc's "tests/symfix" for a source
 * named so on its command line). A relative one is a build root mapped to "." (Debian's
 * "./libio"), which libdw has already put in front of the files of directory 0: joining it
 * again doubled them ("./libio/./libio/iogetline.c"), and the other relative entries are left
 * as gdb prints them ("../sysdeps/unix/sysv/linux/read.c"). Owned by e until the next
 * lookup. */
static const char *full_path(struct sym_elf *e, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;
	char *p;

	if (!file || *file == '/' || !cu ||
	    e->nowned == (int)(sizeof(e->owned) / sizeof(*e->owned)))
		return file;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir || *dir != '/' || asprintf(&p, "%s/%s", dir, file) < 0)
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

static int cmp_fn(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Adds the code ranges of every concrete function under parent: at the CU's top level for C,
 * C++ and Go, inside namespaces and types for Rust and some C++. Nested functions (a GNU C
 * extension) are left to the slow path. */
static int index_fns(struct cu_fns *f, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (tag == DW_TAG_namespace || tag == DW_TAG_module ||
		    tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
		    tag == DW_TAG_union_type) {
			if (depth < 16 && index_fns(f, cap, &child, depth + 1))
				return -ENOMEM;
			continue;
		}
		if (tag != DW_TAG_subprogram)
			continue;
		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (grow_array((void **)&f->r, cap, f->n + 1, sizeof(*f->r), 64))
				return -ENOMEM;
			f->r[f->n++] = (struct fn_range){ lo, hi, child };
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* Counts what the first lookup in cu made libdw keep: the CU's line table (parsed whole) and,
 * on the first CU of all, the DWARF file's sections libelf inflated. */
static void count_cu(struct sym_elf *e, Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	size_t n = 0;

	count_dwarf(e);
	if (dwarf_getsrclines(cu, &lines, &n))
		n = 0;
	e->bytes += CU_BYTES + (uint64_t)n * LINE_BYTES;
}

/* The function table of cu, built on first use; NULL on ENOMEM. */
static const struct cu_fns *cu_fns(struct sym_elf *e, Dwarf_Die *cu)
{
	uint64_t *slot = u64map__get(e->cu_fns_at, dwarf_dieoffset(cu));
	struct cu_fns f = { 0 };
	size_t cap = 0;
	bool added;

	if (slot)
		return &e->cu_fns[*slot - 1];
	count_cu(e, cu);
	if (grow_array((void **)&e->cu_fns, &e->cu_fns_cap, e->ncu_fns + 1, sizeof(*e->cu_fns), 64))
		return NULL;
	if (index_fns(&f, &cap, cu, 0)) {
		free(f.r);
		return NULL;
	}
	if (f.n)
		qsort(f.r, f.n, sizeof(*f.r), cmp_fn);
	slot = u64map__put(e->cu_fns_at, dwarf_dieoffset(cu), &added);
	if (!slot) {
		free(f.r);
		return NULL;
	}
	e->cu_fns[e->ncu_fns++] = f;
	*slot = e->ncu_fns;
	e->bytes += f.n * sizeof(*f.r) + 32;	/* and its map entry */
	return &e->cu_fns[e->ncu_fns - 1];
}

static bool is_block(int tag)
{
	return tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	       tag == DW_TAG_catch_block;
}

/* The function holding pc and the inlined instances nested in it down to the innermost, in
 * chain[], innermost first. Returns how many, or 0 when no indexed function holds pc. */
static int fn_chain(struct sym_elf *e, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
	const struct cu_fns *f = cu_fns(e, cu);
	Dwarf_Die outward[MAX_DEPTH], cur;
	const struct fn_range *fn = NULL;
	size_t lo;
	int n = 0;

	if (!f)
		return 0;
	lo = sym_search__upto(f->r, f->n, sizeof(*f->r), offsetof(struct fn_range, lo), pc);
	/* Functions do not overlap, but one with several ranges may start before another. */
	for (size_t i = lo; i > 0 && lo - i < 8 && !fn; i--)
		if (pc < f->r[i - 1].hi)
			fn = &f->r[i - 1];
	if (!fn)
		return 0;
	cur = fn->die;
	outward[n++] = cur;
	for (;;) {
		Dwarf_Die child;
		bool found = false;
		int tag = 0;

		if (dwarf_child(&cur, &child) == 0) {
			do {
				tag = dwarf_tag(&child);
				found = (tag == DW_TAG_inlined_subroutine || is_block(tag)) &&
					dwarf_haspc(&child, pc) > 0;
			} while (!found && dwarf_siblingof(&child, &child) == 0);
		}
		if (!found)
			break;
		cur = child;
		if (tag == DW_TAG_inlined_subroutine && n < MAX_DEPTH)
			outward[n++] = cur;
	}
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++)
		chain[i] = outward[n - 1 - i];
	return n;
}

/* The same through libdw's generic walk of the whole CU, for what the table misses. */
static int scopes_chain(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
	Dwarf_Die *scopes = NULL, inner;
	int nscopes = dwarf_getscopes(cu, pc, &scopes), n = 0;

	if (nscopes <= 0)
		return 0;
	/* dwarf_getscopes continues an inlined instance with its abstract definition's
	 * scopes; the code's real nesting (inlined into what) is the DIE's own chain. */
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	nscopes = dwarf_getscopes_die(&inner, &scopes);
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			chain[n++] = scopes[i];
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
	return n;
}

/* "NAME@plt" for an address in the procedure linkage table, as objdump and perf name its
 * entries; NULL elsewhere. Valid until the next call. */
static const char *plt_name(struct sym_elf *e, uint64_t vaddr)
{
	const char *target = NULL;
	uint64_t resolver = 0;
	GElf_Addr bias;
	Elf *elf;

	if (!e->plt_built) {
		e->plt_built = true;
		elf = dwfl_module_getelf(e->mod, &bias);
		e->plt = elf ? sym_plt__new(elf) : NULL;
	}
	switch (sym_plt__target(e->plt, vaddr, &target, &resolver)) {
	case 1:
		break;
	case 2:
		target = find_sym(e, resolver);
		if (!target)
			return NULL;
		break;
	case 3:
		return "[plt]";
	default:
		return NULL;
	}
	snprintf(e->plt_name, sizeof(e->plt_name), "%s@plt", target);
	return e->plt_name;
}

int sym_elf__frames(struct sym_elf *e, uint64_t vaddr, struct sym_elf_frame *out, int max)
{
	const char *symname, *file = NULL;
	Dwarf_Die *cu, chain[MAX_DEPTH];
	Dwarf_Addr bias = 0;
	uint64_t line = 0;
	int n = 0, nchain = 0;

	while (e->nowned)
		free(e->owned[--e->nowned]);
	if (max <= 0)
		return -EINVAL;
	symname = show(e, find_sym(e, vaddr));
	if (!symname)
		symname = plt_name(e, vaddr);
	cu = find_cu(e, vaddr, &bias);
	if (cu) {
		Dwarf_Line *dl = dwarf_getsrc_die(cu, vaddr - bias);
		int l = 0;

		if (dl && dwarf_lineno(dl, &l) == 0 && l > 0)
			line = (uint64_t)l;
		file = full_path(e, cu, dl ? dwarf_linesrc(dl, NULL, NULL) : NULL);
		nchain = fn_chain(e, cu, vaddr - bias, chain, MAX_DEPTH);
		if (!nchain)
			nchain = scopes_chain(cu, vaddr - bias, chain, MAX_DEPTH);
	}

	/* Walk out from the innermost scope: each inlined instance is a frame at the location
	 * so far, and moves the location to its call site in the next function out. */
	for (int i = 0; i < nchain && n < max; i++) {
		out[n] = (struct sym_elf_frame){ die_name(e, &chain[i]), file, line };
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) {
			/* The symbol table's name is the fully qualified one (DW_AT_name of a
			 * C++ method is not) and names the code libdwfl actually found. */
			if (symname)
				out[n].func = symname;
			n++;
			break;
		}
		call_site(cu, &chain[i], &file, &line);
		file = full_path(e, cu, file);
		n++;
	}
	if (n == 0 && symname) {
		out[0] = (struct sym_elf_frame){ symname, file, line };
		n = 1;
	}
	return n;
}

uint64_t sym_elf__bytes(const struct sym_elf *e)
{
	return e->bytes;
}

void sym_elf__free(struct sym_elf *e)
{
	if (!e)
		return;
	while (e->nowned)
		free(e->owned[--e->nowned]);
	sym_plt__free(e->plt);
	dwfl_end(e->dwfl);
	free(e->ranges);
	free(e->syms);
	while (e->nplain)
		free(e->plain[--e->nplain]);
	free(e->plain);
	for (size_t i = 0; i < e->ncu_fns; i++)
		free(e->cu_fns[i].r);
	free(e->cu_fns);
	u64map__free(e->cu_fns_at);
	free(e->debuginfo_path);
	free(e);
}
