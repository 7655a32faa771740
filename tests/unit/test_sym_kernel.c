/* test_sym_kernel.c - kernel addresses to names, from fake kallsyms files and the real one. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/stacks/sym_kernel.h"
#include "user/stacks/symbolize.h"

static char path[64];

static void fake_kallsyms(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/lxtrace-kallsyms-%d", getpid());
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void cleanup(void)
{
	unlink(path);
}

TestSuite(sym_kernel, .fini = cleanup);

static const char fake[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81001000 t helper\n"
	"ffffffff81002000 D some_data\n"
	"ffffffff81003000 T ksys_read\n"
	"ffffffffc0001000 t ext4_read\t[ext4]\n"
	"ffffffffc0002000 t ext4_write\t[ext4]\n"
	"ffffffffc0100000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n";

Test(sym_kernel, table_from_a_fake_kallsyms)
{
	struct sym_kernel *k;
	const char *mod;

	fake_kallsyms(fake);
	k = sym_kernel__load(path);
	cr_assert_not_null(k);
	cr_expect_eq(sym_kernel__count(k), 7, "data symbols are left out");
	cr_expect_str_eq(sym_kernel__find(k, 0xffffffff81000000, &mod), "_stext");
	cr_expect_null(mod);
	cr_expect_str_eq(sym_kernel__find(k, 0xffffffff81002010, &mod), "helper");
	cr_expect_str_eq(sym_kernel__find(k, 0xffffffff81003004, &mod), "ksys_read");
	cr_expect_str_eq(sym_kernel__find(k, 0xffffffffc0001fff, &mod), "ext4_read");
	cr_expect_str_eq(mod, "ext4");
	cr_expect_str_eq(sym_kernel__find(k, 0xffffffffc0100040, &mod),
			 "bpf_prog_6deef7357e7b4530_sd_fw_ingress");
	cr_expect_str_eq(mod, "bpf");
	cr_expect_null(sym_kernel__find(k, 0xffffffff80000000, &mod));
	cr_expect_null(sym_kernel__find(k, 0xffffffffc0200000, &mod), "too far past the last");
	sym_kernel__free(k);
}

Test(sym_kernel, hidden_addresses_are_refused)
{
	fake_kallsyms("0000000000000000 T _stext\n0000000000000000 T ksys_read\n");
	cr_expect_null(sym_kernel__load(path));
	cr_expect_eq(errno, EPERM);
	cr_expect_null(sym_kernel__load("/nonexistent/kallsyms"));
	cr_expect_eq(errno, ENOENT);
}

/* A symbolizer reading a fake kallsyms of these lines. */
static struct symbolizer *symbolizer_of(const char *text)
{
	struct symbolizer_opts o = { .sz = sizeof(o), .kallsyms = path };
	struct symbolizer *s;

	fake_kallsyms(text);
	s = symbolizer__new(&o);
	cr_assert_not_null(s);
	return s;
}

Test(sym_kernel, symbolizer_frames)
{
	struct symbolizer *s = symbolizer_of(fake);
	struct sym_frame f[4];

	cr_assert_eq(symbolizer__kernel(s, 0xffffffff81003004, false, f, 4), 1);
	cr_expect_str_eq(f[0].func, "ksys_read");
	cr_expect_str_eq(f[0].file, "[kernel]");
	cr_expect_eq(f[0].pc, 0xffffffff81003004);
	cr_assert_eq(symbolizer__kernel(s, 0xffffffffc0100001, true, f, 4), 1);
	cr_expect_str_eq(f[0].file, "[bpf]");
	cr_expect_eq(f[0].pc, 0xffffffffc0100000, "a return address is looked up at addr - 1");
	cr_assert_eq(symbolizer__kernel(s, 0xffffffff80000000, false, f, 4), 1);
	cr_expect_str_eq(f[0].func, "[unknown] 0xffffffff80000000");
	symbolizer__free(s);
}

Test(sym_kernel, read_ahead_before_the_first_frame)
{
	struct symbolizer *s = symbolizer_of(fake);
	struct symbolizer_stats st;
	struct sym_frame f[4];

	symbolizer__prepare(s, true, 0);
	symbolizer__stats(s, &st);
	cr_expect_eq(st.prepared_kernel, 1);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(symbolizer__kernel(s, 0xffffffff81003004, false, f, 4), 1);
	cr_expect_str_eq(f[0].func, "ksys_read", "kallsyms was read ahead, before it went");
	symbolizer__free(s);
}

Test(sym_kernel, hidden_kallsyms_gives_unknown_frames)
{
	struct symbolizer *s = symbolizer_of("0000000000000000 T ksys_read\n");
	struct sym_frame f[4];

	cr_assert_eq(symbolizer__kernel(s, 0xffffffff81003004, false, f, 4), 1);
	cr_expect_str_eq(f[0].func, "[unknown] 0xffffffff81003004");
	symbolizer__free(s);
}

/* The real table, when this process may see kernel addresses. */
Test(sym_kernel, running_kernel)
{
	struct symbolizer *s;
	struct sym_frame f[4];
	unsigned long long addr = 0;
	char line[512], name[256], type;
	FILE *k = fopen("/proc/kallsyms", "r");

	cr_assert_not_null(k);
	while (!addr && fgets(line, sizeof(line), k))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    strcmp(name, "ksys_read"))
			addr = 0;
	fclose(k);
	if (!addr)
		cr_skip_test("ksys_read's address is hidden (kptr_restrict, not root)");
	s = symbolizer__new(NULL);
	cr_assert_not_null(s);
	cr_assert_eq(symbolizer__kernel(s, addr + 4, false, f, 4), 1);
	cr_expect_str_eq(f[0].func, "ksys_read");
	cr_expect_str_eq(f[0].file, "[kernel]");
	symbolizer__free(s);
}
