/* test_gopclntab.c - a Go program's unwind rows from its pc tables: every rule agrees with the
 * .debug_frame Go's linker writes from the same tables (when not stripped), a stripped build
 * gets the very same rows, a frameless leaf's caller is at rsp and a framed function saves rbp
 * at CFA - 16 (Go 1.19's prologue and 1.21's). */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test_sym_fixture.h"
#include "user/stacks/cfi.h"
#include "user/stacks/gopclntab.h"

struct bin {
	int fd;
	Elf *elf;
	struct cfi_table t;
};

static void open_bin(const char *name, struct bin *b)
{
	char path[4096];

	elf_version(EV_CURRENT);
	symfix__path(name, path, sizeof(path));
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(b->fd, 0, "%s: %s", path, strerror(errno));
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(b->elf);
	cr_assert_eq(cfi__compile(b->elf, NULL, &b->t, NULL), 0, "%s", path);
	cr_assert_gt(b->t.n, 1000, "%s: %zu rows", path, b->t.n);
}

static void close_bin(struct bin *b)
{
	cfi_table__release(&b->t);
	elf_end(b->elf);
	close(b->fd);
}

/* ELF address a's file offset in b (its executable segment). */
static uint64_t offset_of(const struct bin *b, uint64_t a)
{
	size_t n;

	cr_assert_eq(elf_getphdrnum(b->elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(b->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && a >= ph.p_vaddr && a < ph.p_vaddr + ph.p_filesz)
			return a - ph.p_vaddr + ph.p_offset;
	}
	cr_assert_fail("%#llx is in no executable segment", (unsigned long long)a);
	return 0;
}

/* The address of symbol name, and the next symbol's (its end, as Go lays functions out). */
static void symbol(const struct bin *b, const char *name, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = NULL;

	*lo = *hi = 0;
	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) &&
			    !strcmp(elf_strptr(b->elf, sh.sh_link, s.st_name), name)) {
				*lo = s.st_value;
				*hi = s.st_value + s.st_size;
			}
		}
	}
	cr_assert(*lo && *hi > *lo, "no %s", name);
}

/* Every 7th byte of the text: where Go's .debug_frame has an FDE, the row's CFA is rsp plus
 * the same offset (rows of functions that switch stacks or end them are frame-pointer steps
 * and ends, and the signal restorer's reads the signal frame, which .debug_frame does not
 * tell; a frame too large for a row has none). */
static void agrees_with_debug_frame(const char *name)
{
	struct bin b;
	Dwarf *dw;
	Dwarf_CFI *cfi;
	size_t checked = 0, n;

	open_bin(name, &b);
	dw = dwarf_begin_elf(b.elf, DWARF_C_READ, NULL);
	cfi = dw ? dwarf_getcfi(dw) : NULL;
	cr_assert_not_null(cfi, "%s: no .debug_frame", name);
	cr_assert_eq(elf_getphdrnum(b.elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(b.elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (uint64_t a = ph.p_vaddr; a < ph.p_vaddr + ph.p_filesz; a += 7) {
			const struct lx_cfi_row *r = cfi_rows__find(b.t.rows, b.t.n,
								    (uint32_t)offset_of(&b, a));
			Dwarf_Frame *f;
			Dwarf_Op *ops;
			size_t nops;

			if (dwarf_cfi_addrframe(cfi, a, &f))
				continue;
			cr_assert_not_null(r, "%#llx: no row", (unsigned long long)a);
			cr_assert_eq(dwarf_frame_cfa(f, &ops, &nops), 0);
			if (LX_CFI_KIND(r->kind) == LX_CFA_SP) {
				cr_assert(nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == 7,
					  "%#llx: CFA not from rsp", (unsigned long long)a);
				cr_assert_eq((int64_t)ops[0].number2, (int64_t)r->cfa_off * 8,
					     "%#llx: CFA offset", (unsigned long long)a);
				checked++;
			} else {
				/* A frame past a row's 512 KiB (runtime.call524288...): no rule. */
				bool huge = nops == 1 && ops[0].number2 / 8 > UINT16_MAX;

				cr_assert(LX_CFI_KIND(r->kind) == LX_CFA_SWITCH ||
					  LX_CFI_KIND(r->kind) == LX_CFA_END ||
					  LX_CFI_KIND(r->kind) == LX_CFA_SIGNAL ||
					  (LX_CFI_KIND(r->kind) == LX_CFA_NONE && huge),
					  "%#llx: row of kind %d", (unsigned long long)a,
					  LX_CFI_KIND(r->kind));
			}
			free(f);
		}
	}
	cr_log_info("%s: %zu rows, %zu addresses checked against .debug_frame", name, b.t.n,
		    checked);
	cr_assert_gt(checked, 50000);
	dwarf_end(dw);
	close_bin(&b);
}

Test(gopclntab, go119_rows_agree_with_debug_frame, .timeout = 120)
{
	agrees_with_debug_frame("gostacks-go1.19");
}

Test(gopclntab, go123_rows_agree_with_debug_frame, .timeout = 120)
{
	agrees_with_debug_frame("gostacks-go1.23");
}

/* -ldflags='-s -w' drops symbols and DWARF, not the pc tables nor the code's place. */
Test(gopclntab, a_stripped_build_has_the_same_rows)
{
	struct bin full, stripped;

	open_bin("gostacks-go1.23", &full);
	open_bin("gostacks-stripped-go1.23", &stripped);
	cr_assert_eq(stripped.t.n, full.t.n);
	cr_assert_eq(memcmp(stripped.t.rows, full.t.rows, full.t.n * sizeof(*full.t.rows)), 0);
	close_bin(&stripped);
	close_bin(&full);
}

/* main.leaf has no frame: its caller's return address is at rsp throughout, rbp untouched.
 * main.cpuLoop has one: once its prologue saved rbp (1.19: sub, then mov %rbp; 1.21+: push
 * %rbp), the caller's is at CFA - 16, with the CFA 24 bytes above rsp at its call. */
static void leaf_and_caller(const char *name)
{
	const struct lx_cfi_row *r;
	uint64_t lo, hi;
	struct bin b;
	bool saved = false;

	open_bin(name, &b);
	symbol(&b, "main.leaf", &lo, &hi);
	for (uint64_t a = lo; a < hi; a++) {
		r = cfi_rows__find(b.t.rows, b.t.n, (uint32_t)offset_of(&b, a));
		cr_assert(r && r->kind == LX_CFI_MAKE_KIND(LX_CFA_SP, LX_RBP_SAME) && r->cfa_off == 1,
			  "%s: main.leaf+%#llx: not the caller at rsp", name,
			  (unsigned long long)(a - lo));
	}
	symbol(&b, "main.cpuLoop", &lo, &hi);
	r = cfi_rows__find(b.t.rows, b.t.n, (uint32_t)offset_of(&b, lo));
	cr_assert(r->kind == LX_CFI_MAKE_KIND(LX_CFA_SP, LX_RBP_SAME) && r->cfa_off == 1);
	for (uint64_t a = lo; a < hi; a++) {
		r = cfi_rows__find(b.t.rows, b.t.n, (uint32_t)offset_of(&b, a));
		saved |= r->kind == LX_CFI_MAKE_KIND(LX_CFA_SP, LX_RBP_CFA) && r->rbp_off == -2 &&
			 r->cfa_off == 3;
	}
	cr_assert(saved, "%s: main.cpuLoop never has rbp saved at CFA - 16", name);
	close_bin(&b);
}

/* A Go handler's stack goes on through the signal frame, as gdb shows it (Go 1.20 renamed its
 * restorer for gdb to): sigtramp, which Go flags as a stack's top, has the caller at rsp plus
 * its frame, not an end; the restorer it returns to reads the interrupted registers from the
 * ucontext at rsp. */
static void signal_frame(const char *name, const char *restorer)
{
	const struct lx_cfi_row *r;
	uint64_t lo, hi;
	struct bin b;

	open_bin(name, &b);
	symbol(&b, "runtime.sigtramp.abi0", &lo, &hi);
	for (uint64_t a = lo; a < hi; a++) {
		r = cfi_rows__find(b.t.rows, b.t.n, (uint32_t)offset_of(&b, a));
		cr_assert(r && LX_CFI_KIND(r->kind) == LX_CFA_SP, "%s: runtime.sigtramp+%#llx: not "
			  "from rsp", name, (unsigned long long)(a - lo));
	}
	symbol(&b, restorer, &lo, &hi);
	for (uint64_t a = lo; a < hi; a++) {
		r = cfi_rows__find(b.t.rows, b.t.n, (uint32_t)offset_of(&b, a));
		cr_assert(r && LX_CFI_KIND(r->kind) == LX_CFA_SIGNAL, "%s: %s+%#llx: not the signal "
			  "frame", name, restorer, (unsigned long long)(a - lo));
	}
	close_bin(&b);
}

Test(gopclntab, go119_signal_frame)
{
	signal_frame("gostacks-go1.19", "runtime.sigreturn.abi0");
}

Test(gopclntab, go123_signal_frame)
{
	signal_frame("gostacks-go1.23", "runtime.sigreturn__sigaction.abi0");
}

Test(gopclntab, go119_leaf_and_caller)
{
	leaf_and_caller("gostacks-go1.19");
}

Test(gopclntab, go123_leaf_and_caller)
{
	leaf_and_caller("gostacks-go1.23");
}

/* gopclntab__funcs's callback: checks each function against the unstripped build's symbol. */
struct named {
	const struct bin *full;
	size_t n, checked;
};

static int check_func(void *ctx, uint64_t lo, uint64_t hi, const char *name)
{
	struct named *c = ctx;
	uint64_t slo, shi;

	c->n++;
	if (strncmp(name, "main.", 5))
		return 0;
	symbol(c->full, name, &slo, &shi);
	cr_expect_eq(lo, slo, "%s begins at %#llx, its symbol at %#llx", name,
		     (unsigned long long)lo, (unsigned long long)slo);
	cr_expect_geq(hi, shi, "%s ends at %#llx, before its symbol's end", name,
		      (unsigned long long)hi);
	c->checked++;
	return 0;
}

/* A build stripped of its symbols (-ldflags=-s) names its functions from its pc tables: each
 * main.* function where the unstripped build's symbol table puts it. */
Test(gopclntab, a_stripped_build_names_its_functions)
{
	struct bin full, stripped;
	struct named c = { &full, 0, 0 };

	open_bin("gostacks-go1.23", &full);
	open_bin("gostacks-stripped-go1.23", &stripped);
	cr_assert_eq(gopclntab__funcs(stripped.elf, gopclntab__find(stripped.elf), check_func, &c), 0);
	cr_expect_gt(c.n, 1000, "%zu functions", c.n);
	cr_expect_geq(c.checked, 4, "%zu main.* functions", c.checked);
	close_bin(&stripped);
	close_bin(&full);
}
