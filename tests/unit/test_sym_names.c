/* test_sym_names.c - function names and source paths as gdb prints them: without the symbol
 * versions the linker writes into .symtab, and with a relative compilation directory (how
 * Debian builds libc) not joined to paths the line table already starts with it. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test_sym_fixture.h"
#include "user/stacks/sym_elf.h"
#include "user/stacks/symbolize.h"

static void *lib;
static struct sym_elf *elf;
static uintptr_t lib_base;

static void setup(void)
{
	char path[PATH_MAX];
	Dl_info info;

	symfix__path("libversioned.so", path, sizeof(path));
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(lib, "%s", dlerror());
	cr_assert(dladdr(dlsym(lib, "vfunc"), &info));
	lib_base = (uintptr_t)info.dli_fbase;
	elf = sym_elf__open(open(path, O_RDONLY), path, NULL, NULL);
	cr_assert_not_null(elf, "%s", path);
}

static void teardown(void)
{
	sym_elf__free(elf);
	if (lib)
		dlclose(lib);
}

TestSuite(sym_names, .init = setup, .fini = teardown);

/* The one frame of version ver of vfunc, looked up at its entry by ELF address. */
static struct sym_elf_frame vfunc_frame(const char *ver)
{
	void *fn = dlvsym(lib, "vfunc", ver);
	struct sym_elf_frame f[4];
	int n;

	cr_assert_not_null(fn, "vfunc@%s: %s", ver, dlerror());
	n = sym_elf__frames(elf, (uintptr_t)fn - lib_base, f, 4);
	cr_assert_eq(n, 1, "vfunc@%s: %d frames", ver, n);
	cr_log_info("vfunc@%s: %s %s:%lu", ver, f[0].func, f[0].file, (unsigned long)f[0].line);
	return f[0];
}

Test(sym_names, symbol_versions_are_not_part_of_the_name)
{
	cr_expect_str_eq(vfunc_frame("V_2").func, "vfunc", "the default version, vfunc@@V_2");
	cr_expect_str_eq(vfunc_frame("V_1").func, "vfunc", "a compatibility version, vfunc@V_1");
}

Test(sym_names, a_relative_comp_dir_is_not_joined_twice)
{
	struct sym_elf_frame f = vfunc_frame("V_2");

	/* DW_AT_comp_dir "./tests/symfix" is also the line table's directory 0, which libdw has
	 * already put in front of "versioned.c". */
	cr_assert_not_null(f.file);
	cr_expect_str_eq(f.file, "./tests/symfix/versioned.c");
	cr_expect_eq(f.line, symfix__marker_line(LXTRACE_SRCDIR "/tests/symfix/versioned.c",
						  "vfunc_v2"));
}

/* This process's libc, through the whole symbolizer, at the entries of functions the issue
 * names: versioned in .symtab, and with Debian's debug file (libc6-dbg) in sources that sit
 * in the compilation directory (./libio/iogetline.c) or beside it (../sysdeps/...). What gdb
 * prints for them: tests/integration/names.c. */
Test(sym_names, libc_frames_as_gdb_names_them)
{
	static const struct { const char *sym, *func, *file; } want[] = {
		{ "pthread_cond_wait", "pthread_cond_wait", "./nptl/pthread_cond_wait.c" },
		{ "__libc_start_main", "__libc_start_main", "../csu/libc-start.c" },
		{ "_IO_getline", "_IO_getline", "./libio/iogetline.c" },
		{ "read", "read", "../sysdeps/unix/sysv/linux/read.c" },
	};
	struct symbolizer *s = symbolizer__new(NULL);
	/* libc's own, not what interposes on it first (AddressSanitizer's read in make
	 * sanitize-test). */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct sym_frame f[16];
	bool have_dwarf = true;

	cr_assert_not_null(s);
	cr_assert_not_null(libc, "%s", dlerror());
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		void *fn = dlsym(libc, want[i].sym);
		int n;

		cr_assert_not_null(fn, "%s", want[i].sym);
		n = symbolizer__user(s, (uint64_t)getpid(), (uintptr_t)fn, false, f, 16);
		cr_assert_gt(n, 0, "%s: %d", want[i].sym, n);
		for (int j = 0; j < n; j++)
			cr_log_info("%s: #%d %s %s:%lu", want[i].sym, j, f[j].func, f[j].file,
				    (unsigned long)f[j].line);
		cr_expect_str_eq(f[n - 1].func, want[i].func);
		if (!f[n - 1].line)
			have_dwarf = false;
		else
			cr_expect_str_eq(f[n - 1].file, want[i].file, "%s", want[i].sym);
	}
	symbolizer__free(s);
	dlclose(libc);
	if (!have_dwarf)
		cr_skip_test("libc has no debug file here (libc6-dbg): its paths were not checked");
}

/* Resident kB of the private mapping of the whole file at path that libelf made (offset 0,
 * writable: the loader maps no segment that way), from /proc/self/smaps; -1 when none. */
static long elf_map_rss_kb(const char *path)
{
	char line[PATH_MAX + 128], perms[8];
	unsigned long long off;
	bool in = false;
	long kb = -1, v;
	FILE *f = fopen("/proc/self/smaps", "re");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');
		int n = 0;

		if (sscanf(line, "%*x-%*x %7s %llx %*s %*u %n", perms, &off, &n) >= 2 && n) {
			line[strcspn(line, "\n")] = '\0';
			in = name && !strcmp(name, path) && !strcmp(perms, "rw-p") && !off;
		} else if (in && sscanf(line, "Rss: %ld kB", &v) == 1) {
			kb = v;
		}
	}
	fclose(f);
	return kb;
}

/* Reading a file touches its pages (symbols, DWARF), which count in the recorder's RSS; given
 * back, a lookup reads them again: the same frame. */
Test(sym_names, a_binarys_pages_given_back_are_read_again)
{
	struct sym_elf_frame f = vfunc_frame("V_2");
	char path[PATH_MAX], func[64], file[PATH_MAX];
	uint64_t line = f.line;
	long rss, paged;

	/* The frame's strings last until the next lookup. */
	snprintf(func, sizeof(func), "%s", f.func);
	snprintf(file, sizeof(file), "%s", f.file ? f.file : "");
	symfix__path("libversioned.so", path, sizeof(path));
	rss = elf_map_rss_kb(path);
	cr_assert_gt(rss, 0, "libelf's mapping of %s: %ld kB resident", path, rss);
	sym_elf__page_out(elf);
	paged = elf_map_rss_kb(path);
	cr_log_info("%s: %ld kB resident, %ld after giving them back", path, rss, paged);
	cr_expect_lt(paged, rss);
	f = vfunc_frame("V_2");
	cr_expect_str_eq(f.func, func);
	cr_expect_str_eq(f.file ? f.file : "", file);
	cr_expect_eq(f.line, line);
}

#ifdef __SANITIZE_ADDRESS__
/* ASan's allocator replaces glibc's, whose mallinfo2 then says nothing (GCC 12 has no header
 * for this libasan call). */
size_t __sanitizer_get_current_allocated_bytes(void);

static size_t heap_in_use(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
/* What glibc's malloc has handed out, small blocks and mapped ones. */
static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}
#endif

/* The budget of open binaries (docs/symbolize.md, "Caching and memory") is only as good as
 * sym_elf__bytes: what it counts must be what reading the binary took. Looked up every 64
 * bytes of its code, so that every CU's tables are read: path's count against the heap. */
static void check_counted(const char *path)
{
	struct sym_elf_load loads[16];
	struct sym_elf_frame f[16];
	size_t before = heap_in_use(), real;
	struct sym_elf *e = sym_elf__open(open(path, O_RDONLY), path, NULL, NULL);
	uint64_t counted;
	int n;

	cr_assert_not_null(e, "%s", path);
	n = sym_elf__loads(e, loads, 16);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n && i < 16; i++)
		for (uint64_t a = loads[i].vaddr; a < loads[i].vaddr + loads[i].size; a += 64)
			sym_elf__frames(e, a, f, 16);
	real = heap_in_use() - before;
	counted = sym_elf__bytes(e);
	cr_log_info("%s: counted %.1f MiB, the heap grew %.1f MiB", path, counted / 1048576.0,
		    real / 1048576.0);
	cr_expect_geq(counted, real / 20 * 19, "%s: counted %lu of %zu bytes", path,
		      (unsigned long)counted, real);
	cr_expect_leq(counted, real / 2 * 3, "%s: counted %lu of %zu bytes", path,
		      (unsigned long)counted, real);
	sym_elf__free(e);
}

Test(sym_names, what_reading_a_binary_takes_is_counted, .timeout = 300)
{
	Dl_info info;

	cr_assert(dladdr((void *)&printf, &info));
	check_counted(info.dli_fname);
	check_counted("/proc/self/exe");
}

/* A binary with no separate debug file under the debug path is read without one: libdwfl's
 * search would go on to a debuginfod server, loading libdebuginfod and with it libcurl,
 * gnutls and kerberos (~7 MB of the recorder's memory), and with DEBUGINFOD_URLS in root's
 * environment fetch the file over the network. /bin/true is stripped; the debug path an
 * empty directory. */
Test(sym_debug, a_binary_without_a_debug_file_loads_no_debuginfod_client)
{
	char dir[] = "/tmp/lxtrace-debugpath.XXXXXX";
	struct sym_elf_load loads[8];
	struct sym_elf_frame f[8];
	struct sym_elf *e;
	int n;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_null(dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD));
	e = sym_elf__open(open("/bin/true", O_RDONLY), "/bin/true", dir, NULL);
	cr_assert_not_null(e);
	n = sym_elf__loads(e, loads, 8);
	cr_assert_gt(n, 0);
	/* Every lookup asks for DWARF, which asks for the debug file first. */
	for (int i = 0; i < n && i < 8; i++)
		for (uint64_t a = loads[i].vaddr; a < loads[i].vaddr + loads[i].size; a += 512)
			sym_elf__frames(e, a, f, 8);
	cr_expect_null(dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD),
		       "looking up /bin/true loaded libdebuginfod");
	sym_elf__free(e);
	rmdir(dir);
}
