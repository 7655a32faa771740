/* test_cfi.c - binaries' call-frame information compiled into the unwinder's rows: every row
 * agrees with what libdw says of the same address, the special rules (PLT entries, the signal
 * trampoline, the outermost frame) are recognised, rows are sorted and merged, the vDSO and a
 * mapped file's path come out right; a compile holds no more than the room it is given, and
 * inflates no compressed sections past its limit. */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/tfile.h"
#include "user/proc/mmap_path.h"
#include "user/stacks/cfi.h"
#include "user/stacks/vdso.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static int fd = -1;
static Elf *elf;
static struct cfi_table t;
static struct cfi_stats st;

static void teardown(void)
{
	cfi_table__release(&t);
	if (elf)
		elf_end(elf);
	elf = NULL;
	if (fd >= 0)
		close(fd);
	fd = -1;
}

TestSuite(cfi, .fini = teardown, .timeout = 60);

static void compile_fd(int f, const char *what)
{
	elf_version(EV_CURRENT);
	fd = f;
	cr_assert_geq(fd, 0, "%s: %s", what, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(elf, "%s: not ELF", what);
	cr_assert_eq(cfi__compile(elf, NULL, &t, &st), 0, "%s", what);
	cr_assert_gt(t.n, 0);
}

static void compile(const char *path)
{
	compile_fd(open(path, O_RDONLY | O_CLOEXEC), path);
}

/* The file offset of ELF address a (the executable PT_LOAD holding it). */
static uint64_t offset_of(uint64_t a)
{
	size_t n;

	cr_assert_eq(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    a >= ph.p_vaddr && a < ph.p_vaddr + ph.p_filesz)
			return a - ph.p_vaddr + ph.p_offset;
	}
	cr_assert_fail("%#llx is in no executable segment", (unsigned long long)a);
	return 0;
}

/* The loader cancels a compile under way when the recording ends: nothing is left half made. */
Test(cfi, a_cancelled_compile_stops_and_keeps_nothing)
{
	atomic_bool cancel = true;
	const struct cfi_limits lim = { .cancel = &cancel, .max_rows = SIZE_MAX };

	elf_version(EV_CURRENT);
	fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", LIBC, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(elf);
	cr_assert_eq(cfi__compile(elf, &lim, &t, &st), -ECANCELED);
	cr_assert_eq(t.n, 0);
	cr_assert_null(t.rows);
}

/* A crafted .eh_frame can have a row per byte: the compile stops once the rows cannot fit. */
Test(cfi, a_compile_stops_at_twice_its_room)
{
	size_t all;

	compile(LIBC);
	all = t.n;
	cfi_table__release(&t);
	cr_assert_eq(cfi__compile(elf, &(struct cfi_limits){ .max_rows = all / 4 }, &t, &st),
		     -EFBIG);
	cr_assert_eq(t.n, 0);
	cr_assert_null(t.rows);
	/* Room for the merged rows is room enough for the rows before merging. */
	cr_assert_eq(cfi__compile(elf, &(struct cfi_limits){ .max_rows = all }, &t, &st), 0);
	cr_assert_eq(t.n, all);
}

/* A program whose CFI is .debug_frame (no .eh_frame: no C runtime, no unwind tables) and
 * whose .zdebug_ranges would inflate to 512 MiB: libdw would inflate it to find the CFI. */
Test(cfi, debug_frame_is_not_read_past_the_inflate_limit, .timeout = 120)
{
	char dir[] = "/tmp/lxtrace-cfi-XXXXXX", cmd[512], path[64];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bomb", dir);
	cr_assert_eq(tfile_zsection(path, 512ull << 20), 0);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; printf 'void _start(void) { for (;;) ; }\\n' > s.c; "
		 "gcc -g -O1 -fno-asynchronous-unwind-tables -nostdlib -static -o plain s.c; "
		 "objcopy --add-section .zdebug_ranges=bomb plain bombed", dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(path, sizeof(path), "%s/plain", dir);
	compile(path);
	teardown();
	snprintf(path, sizeof(path), "%s/bombed", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(elf);
	cr_expect_eq(cfi__compile(elf, NULL, &t, &st), -ENOBUFS);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* libdw evaluates each row of an FDE from the FDE's start: one function of 60,000 one-byte
 * rows (250 KiB of .eh_frame) took 6.5 s of CPU to compile. The compile ends at its budget. */
Test(cfi, a_quadratic_fde_ends_at_the_cpu_budget, .timeout = 120)
{
	char dir[] = "/tmp/lxtrace-cfi-XXXXXX", path[64], cmd[256];
	uint64_t t0, took;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/q.s", dir);
	cr_assert_eq(tfile_costly_cfi(path, 60000), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && gcc -o q q.s", dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(path, sizeof(path), "%s/q", dir);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(elf);
	t0 = thread_cpu_ns();
	cr_expect_eq(cfi__compile(elf, NULL, &t, &st), -ETIME);
	took = thread_cpu_ns() - t0;
	cr_expect_lt(took, 1000000000ull, "the compile took %.2f s of CPU", took / 1e9);
	cr_expect_null(t.rows);
	/* The reader's own, shorter budget. */
	t0 = thread_cpu_ns();
	cr_expect_eq(cfi__compile(elf, &(struct cfi_limits){ .max_rows = SIZE_MAX,
							     .max_ns = 10000000 }, &t, &st), -ETIME);
	took = thread_cpu_ns() - t0;
	cr_expect_lt(took, 100000000ull, "the compile took %.3f s of CPU", took / 1e9);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(cfi, rows_sorted_and_merged)
{
	compile(LIBC);
	cr_log_info("libc: %llu FDEs, %llu rows in, %zu rows", (unsigned long long)st.fdes,
		    (unsigned long long)st.rows_in, t.n);
	for (size_t i = 1; i < t.n; i++) {
		cr_assert_lt(t.rows[i - 1].off, t.rows[i].off, "row %zu out of order", i);
		cr_assert(t.rows[i - 1].kind != t.rows[i].kind ||
			  t.rows[i - 1].cfa_off != t.rows[i].cfa_off ||
			  t.rows[i - 1].rbp_off != t.rows[i].rbp_off, "rows %zu and %zu are equal", i - 1, i);
	}
	cr_expect_eq(st.rows_signal, 1, "libc has one signal trampoline");
	cr_expect_geq(st.rows_plt, 1, "libc has a lazy-binding PLT");
}

/* Each address's row says what libdw's own evaluation of the CFI says: the CFA's register and
 * offset, and where rbp was saved. Every 97th byte of libc's code. */
Test(cfi, rows_agree_with_libdw)
{
	Dwarf_CFI *cfi;
	size_t checked = 0, n;

	compile(LIBC);
	cfi = dwarf_getcfi_elf(elf);
	cr_assert_not_null(cfi);
	cr_assert_eq(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (uint64_t a = ph.p_vaddr; a < ph.p_vaddr + ph.p_filesz; a += 97) {
			const struct lx_cfi_row *r = cfi_rows__find(t.rows, t.n, (uint32_t)offset_of(a));
			Dwarf_Frame *f;
			Dwarf_Op *ops, mem[3];
			size_t nops;

			if (dwarf_cfi_addrframe(cfi, a, &f))
				continue;	/* no FDE: padding, or code without CFI */
			cr_assert_not_null(r, "%#llx: no row", (unsigned long long)a);
			cr_assert_eq(dwarf_frame_cfa(f, &ops, &nops), 0);
			if (LX_CFI_KIND(r->kind) == LX_CFA_SP || LX_CFI_KIND(r->kind) == LX_CFA_BP) {
				cr_assert_eq(nops, 1);
				cr_assert_eq(ops[0].atom, DW_OP_bregx, "%#llx", (unsigned long long)a);
				cr_assert_eq(ops[0].number, LX_CFI_KIND(r->kind) == LX_CFA_SP ? 7u : 6u,
					     "%#llx: CFA register", (unsigned long long)a);
				cr_assert_eq((int64_t)ops[0].number2, (int64_t)r->cfa_off * 8,
					     "%#llx: CFA offset", (unsigned long long)a);
				cr_assert_eq(dwarf_frame_register(f, 6, mem, &ops, &nops), 0);
				if (LX_CFI_RBP(r->kind) == LX_RBP_SAME)
					cr_assert(!nops && !ops, "%#llx: rbp not kept", (unsigned long long)a);
				if (LX_CFI_RBP(r->kind) == LX_RBP_CFA)
					cr_assert(nops == 2 && (int64_t)ops[1].number == r->rbp_off * 8,
						  "%#llx: rbp's slot", (unsigned long long)a);
				checked++;
			}
			free(f);
		}
	}
	dwarf_cfi_end(cfi);
	cr_log_info("%zu addresses checked against libdw", checked);
	cr_assert_gt(checked, 10000);
}

/* read's entry: the return address is just above rsp. */
Test(cfi, function_entry_is_rsp_plus_8)
{
	const struct lx_cfi_row *r;
	GElf_Sym sym;
	bool found = false;
	Elf_Scn *scn = NULL;

	compile(LIBC);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, (int)i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), "read") && sym.st_value) {
				found = true;
				break;
			}
	}
	cr_assert(found, "no read in libc's .dynsym");
	r = cfi_rows__find(t.rows, t.n, (uint32_t)offset_of(sym.st_value));
	cr_assert_not_null(r);
	cr_expect_eq(LX_CFI_KIND(r->kind), LX_CFA_SP);
	cr_expect_eq(r->cfa_off, 1);
}

/* A program's _start has the outermost frame's rule; its PLT its own. */
Test(cfi, outermost_frame_and_plt)
{
	size_t end = 0, plt = 0;

	compile("/usr/bin/sha256sum");
	for (size_t i = 0; i < t.n; i++) {
		end += LX_CFI_KIND(t.rows[i].kind) == LX_CFA_END;
		plt += LX_CFI_KIND(t.rows[i].kind) == LX_CFA_PLT;
		if (LX_CFI_KIND(t.rows[i].kind) == LX_CFA_PLT)
			cr_expect(t.rows[i].rbp_off == 10 || t.rows[i].rbp_off == 11,
				  "PLT cut %d", t.rows[i].rbp_off);
	}
	cr_expect_eq(end, 1, "one outermost frame: _start");
	cr_expect_geq(plt, 1);
}

Test(cfi, vdso_compiles)
{
	int f = vdso__open();

	if (f == -ENOENT)
		cr_skip_test("no vDSO");
	compile_fd(f, "vdso");
	cr_expect_eq(st.rows_none, 0, "every vDSO row is usable");
}

/* The names BPF sends, leaf first, up to the root: the path in order; a walk that stopped
 * early (no "/" at the end) gives no path. */
Test(cfi, mmap_path_from_dentry_names)
{
	static const char names[] = "libc.so.6\0x86_64-linux-gnu\0lib\0usr\0/\0";
	struct lx_mmap r = { 0 };
	char path[256];

	memcpy(r.path, names, sizeof(names));
	cr_assert_eq(mmap_path__get(&r, path, sizeof(path)), 0);
	cr_expect_str_eq(path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	memset(r.path, 0, sizeof(r.path));
	memcpy(r.path, names, 20);	/* two names, no root */
	cr_expect_eq(mmap_path__get(&r, path, sizeof(path)), -ENOENT);
	cr_expect_str_eq(path, "");
	cr_expect_eq(mmap_path__get(&r, path, 8), -ENOENT);
}
