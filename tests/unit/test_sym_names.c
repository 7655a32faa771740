/* test_sym_names.c - function names as gdb prints them: without the symbol versions the
 * linker writes into .symtab. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/test_sym_fixture.h"
#include "user/stacks/sym_elf.h"

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
