/* test_sym_user.c - user addresses of live and exited fixture processes to frames: inlined
 * calls, return addresses, C++ names, libc, Go binaries, perf maps, unknowns and PCs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "tests/unit/test_sym_fixture.h"
#include "user/stacks/sym_elf.h"
#include "user/stacks/symbolize.h"

static struct symfix fix, fix2;
static struct symbolizer *sym;
static char perfdir[64];

static void setup(void)
{
	struct symbolizer_opts o = { .sz = sizeof(o), .perfmap_dir = perfdir };

	snprintf(perfdir, sizeof(perfdir), "/tmp/lxtrace-symtest-XXXXXX");
	cr_assert_not_null(mkdtemp(perfdir));
	sym = symbolizer__new(&o);
	cr_assert_not_null(sym);
}

static void teardown(void)
{
	char cmd[128];

	symfix__stop(&fix);
	symfix__stop(&fix2);
	symbolizer__free(sym);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", perfdir);
	if (system(cmd))
		fprintf(stderr, "test_sym_user: cannot remove %s\n", perfdir);
}

TestSuite(sym_user, .init = setup, .fini = teardown);

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static int resolve(pid_t pid, uint64_t addr, bool ret, struct sym_frame *out, int max)
{
	int n = symbolizer__user(sym, pid, addr, ret, out, max);

	cr_assert_gt(n, 0, "symbolizer__user(%d, %#lx): %d", pid, (unsigned long)addr, n);
	for (int i = 0; i < n; i++)
		cr_log_info("  #%d pc=%#lx %s %s:%lu", i, (unsigned long)out[i].pc, out[i].func,
			    out[i].file, (unsigned long)out[i].line);
	return n;
}

static void check_inlined_chain(const struct sym_frame *f, int n, uint64_t probe_ret)
{
	cr_assert_geq(n, 2);
	cr_expect_str_eq(f[0].func, "hot_inner");
	cr_expect(ends_with(f[0].file, "tests/symfix/hot.c"), "file %s", f[0].file);
	cr_expect_eq(f[0].line, symfix__marker_line(f[0].file, "inner_call"));
	cr_expect_eq(f[0].pc, probe_ret - 1, "the innermost frame keeps the looked-up address");
	cr_expect_str_eq(f[1].func, "hot_middle");
	cr_expect_str_eq(f[1].file, f[0].file);
	cr_expect_eq(f[1].line, symfix__marker_line(f[0].file, "middle_call"),
		     "the caller of an inlined call is at the call site");
	cr_expect_eq(f[1].pc, SYM_PC_SYNTHETIC | 1ull << 47 | (probe_ret - 1));
	cr_expect_eq(n, 2, "hot_middle is a real function: the expansion ends there");
}

Test(sym_user, inlined_call_is_its_own_frame_with_the_call_site_line)
{
	struct sym_frame f[16], again[16];
	int n;

	symfix__start(&fix, "hot");
	cr_assert_eq(symbolizer__note_process(sym, fix.pid), 0);
	n = resolve(fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 16);
	check_inlined_chain(f, n, symfix__addr(&fix, "probe_ret"));
	/* The same address gives the same frames and PCs, now from the binary's cache. */
	cr_assert_eq(resolve(fix.pid, symfix__addr(&fix, "probe_ret"), true, again, 16), n);
	for (int i = 0; i < n; i++) {
		cr_expect_eq(again[i].pc, f[i].pc);
		cr_expect_eq(again[i].func, f[i].func, "strings are interned, stable pointers");
		cr_expect_eq(again[i].line, f[i].line);
	}
}

Test(sym_user, max_cuts_the_expansion_at_its_innermost_frames)
{
	struct sym_frame f[1];

	symfix__start(&fix, "hot");
	cr_assert_eq(symbolizer__user(sym, fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 1), 1);
	cr_expect_str_eq(f[0].func, "hot_inner");
	cr_expect_eq(symbolizer__user(sym, fix.pid, 1, true, f, 0), -EINVAL);
}

Test(sym_user, return_address_resolves_to_the_call_line)
{
	struct sym_frame f[16];
	int n;

	symfix__start(&fix, "hot");
	n = resolve(fix.pid, symfix__addr(&fix, "middle_ret"), true, f, 16);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(f[0].func, "hot_outer");
	cr_expect_eq(f[0].line, symfix__marker_line(f[0].file, "outer_call"));
	n = resolve(fix.pid, symfix__addr(&fix, "hot_outer"), false, f, 16);
	cr_expect_str_eq(f[0].func, "hot_outer");
	cr_expect_eq(f[0].pc, symfix__addr(&fix, "hot_outer"));
}

Test(sym_user, exited_process_still_resolves)
{
	struct symbolizer_stats st;
	struct sym_frame f[16];
	uint64_t probe_ret, getppid_addr;
	pid_t pid;
	int n;

	symfix__start(&fix, "hot");
	pid = fix.pid;
	probe_ret = symfix__addr(&fix, "probe_ret");
	getppid_addr = symfix__addr(&fix, "getppid");
	cr_assert_eq(symbolizer__note_process(sym, pid), 0);
	symfix__stop(&fix);
	cr_assert_neq(kill(pid, 0), 0, "the fixture is gone");
	n = resolve(pid, probe_ret, true, f, 16);
	check_inlined_chain(f, n, probe_ret);
	resolve(pid, getppid_addr, false, f, 16);
	cr_expect_str_eq(f[0].func, "getppid");
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.modules_failed, 0);
	cr_expect_eq(st.maps_reads, 1, "no /proc read after the note");
}

static void run(const char *cmd)
{
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* A stripped binary whose symbols and DWARF are in a separate file found through its
 * .gnu_debuglink under a debug root laid out like /usr/lib/debug. */
/* The fixture "hot" (src), stripped into bin with its DWARF in a separate debug file under the
 * debug root root, named by a .gnu_debuglink. */
static void strip_hot(char *src, char *bin, char *root)
{
	char cmd[4 * PATH_MAX];

	symfix__path("hot", src, PATH_MAX);
	snprintf(bin, PATH_MAX, "%s/hot-stripped", perfdir);
	snprintf(root, PATH_MAX, "%s/dbg", perfdir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; mkdir -p 'dbg%s'; objcopy --only-keep-debug '%s' 'dbg%s/hot.debug'; "
		 "objcopy --strip-all --add-gnu-debuglink='dbg%s/hot.debug' '%s' '%s'",
		 perfdir, perfdir, src, perfdir, perfdir, src, bin);
	run(cmd);
}

Test(sym_user, separate_debug_file)
{
	struct symbolizer_opts o = { .sz = sizeof(o) };
	char src[PATH_MAX], bin[PATH_MAX], root[PATH_MAX];
	struct symbolizer *s;
	struct sym_frame f[16];
	int n;

	strip_hot(src, bin, root);
	o.debuginfo_path = root;
	s = symbolizer__new(&o);
	cr_assert_not_null(s);
	symfix__start_path(&fix, bin);
	n = symbolizer__user(s, fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 16);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(f[0].func, "hot_inner");
	cr_expect_str_eq(f[1].func, "hot_middle");
	cr_expect_eq(f[1].line, symfix__marker_line(f[0].file, "middle_call"));
	cr_assert_eq(symbolizer__user(s, fix.pid, symfix__addr(&fix, "hot_outer"), false, f, 16), 1);
	cr_expect_str_eq(f[0].func, "hot_outer", "the symbol table comes from the debug file too");
	symbolizer__free(s);
}

/* Reading ahead inflates DWARF only from a file no larger than its limit, whether the binary
 * holds it or a separate debug file does. */
Test(sym_user, dwarf_is_read_ahead_only_from_files_within_the_limit)
{
	char src[PATH_MAX], bin[PATH_MAX], root[PATH_MAX];
	const char *paths[] = { src, bin };
	struct sym_elf *e;

	strip_hot(src, bin, root);
	for (int i = 0; i < 2; i++) {
		e = sym_elf__open(open(paths[i], O_RDONLY), paths[i], root, NULL);
		cr_assert_not_null(e, "%s", paths[i]);
		cr_expect_not(sym_elf__prepare(e, 1000), "%s: its DWARF is larger", paths[i]);
		sym_elf__free(e);
		e = sym_elf__open(open(paths[i], O_RDONLY), paths[i], root, NULL);
		cr_assert_not_null(e, "%s", paths[i]);
		cr_expect(sym_elf__prepare(e, 1ull << 30), "%s: its DWARF is read ahead", paths[i]);
		sym_elf__free(e);
	}
}

Test(sym_user, libc_of_a_pie_process)
{
	struct sym_frame f[16];
	uint64_t a;

	symfix__start(&fix, "hot");
	a = symfix__addr(&fix, "getppid");
	resolve(fix.pid, a + 2, false, f, 16);
	cr_expect_str_eq(f[0].func, "getppid");
	/* The file is libc's when it has no debug file, else its source (libc6-dbg). */
	cr_expect(f[0].file[0] != '\0');
	cr_expect_eq(f[0].pc, a + 2);
}

Test(sym_user, binaries_are_cached_across_processes)
{
	struct symbolizer_stats one, two;
	struct sym_frame f[16];

	symfix__start(&fix, "hot");
	symfix__start(&fix2, "hot");
	cr_assert_eq(symbolizer__note_process(sym, fix.pid), 0);
	resolve(fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 16);
	symbolizer__stats(sym, &one);
	cr_assert_eq(symbolizer__note_process(sym, fix2.pid), 0);
	resolve(fix2.pid, symfix__addr(&fix2, "probe_ret"), true, f, 16);
	symbolizer__stats(sym, &two);
	cr_expect_eq(two.modules, one.modules, "the second process opens no file");
	cr_expect_eq(two.cache_hits, one.cache_hits + 1);
	cr_expect_eq(two.processes, 2);
	cr_expect_str_eq(f[0].func, "hot_inner");
	symbolizer__forget_process(sym, fix.pid);
	symbolizer__forget_process(sym, 999999999);
	symbolizer__stats(sym, &two);
	cr_expect_eq(two.processes, 1);
	resolve(fix2.pid, symfix__addr(&fix2, "hot_outer"), false, f, 16);
	cr_expect_str_eq(f[0].func, "hot_outer");
}

/* A binary whose ELF no lookup needed during a whole sweep (SWEEP_LOOKUPS, a million lookups)
 * has it closed; its cached addresses are named without it, a new address reads it again. */
Test(sym_user, a_binary_left_unused_is_closed_and_read_again)
{
	struct sym_frame f[16], again[16];
	struct symbolizer_stats st;
	uint64_t libc;
	int n;

	symfix__start(&fix, "hot");
	cr_assert_eq(symbolizer__note_process(sym, fix.pid), 0);
	n = resolve(fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 16);
	libc = symfix__addr(&fix, "getppid") + 2;
	/* Two sweeps of lookups of one libc address: all but the first answered from its cache,
	 * so the second sweep closes both ELFs. */
	for (uint32_t i = 0; i < 2u << 20; i++)
		cr_assert_gt(symbolizer__user(sym, fix.pid, libc, false, again, 16), 0);
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.modules_closed, 2, "the fixture's binary and libc closed");
	cr_assert_eq(resolve(fix.pid, symfix__addr(&fix, "probe_ret"), true, again, 16), n);
	for (int i = 0; i < n; i++) {
		cr_expect_str_eq(again[i].func, f[i].func);
		cr_expect_str_eq(again[i].file, f[i].file);
		cr_expect_eq(again[i].line, f[i].line);
		cr_expect_eq(again[i].pc, f[i].pc);
	}
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.modules_reread, 0, "a cached address reads nothing");
	cr_assert_eq(resolve(fix.pid, symfix__addr(&fix, "middle_ret"), true, f, 16), 1);
	cr_expect_str_eq(f[0].func, "hot_outer");
	cr_expect_eq(f[0].line, symfix__marker_line(f[0].file, "outer_call"));
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.modules_reread, 1);
}

/* A process gone without an exit record (one lost in a full ring) has its snapshot forgotten
 * once two sweeps, 10 s apart, found it gone: the stacks it made before it went come before. */
Test(sym_user, a_process_gone_without_its_exit_is_forgotten, .timeout = 60)
{
	uint64_t self = (uint64_t)getpid(), libc;
	struct symbolizer_stats st;
	struct sym_frame f[16];

	symfix__start(&fix, "hot");
	cr_assert_eq(symbolizer__note_process(sym, fix.pid), 0);
	libc = symfix__addr(&fix, "getppid") + 2;
	resolve(fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 16);
	symfix__stop(&fix);
	/* The first sweep comes with the 4,096th lookup, the next 10 s later. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 4096; i++)
			cr_assert_gt(symbolizer__user(sym, self, libc, false, f, 16), 0);
		symbolizer__stats(sym, &st);
		cr_expect_eq(st.processes_swept, (uint64_t)round, "after sweep %d", round + 1);
		cr_expect_eq(st.processes, 2u - (unsigned)round, "this process and the fixture's");
		if (!round)
			sleep(10);
	}
}

/* Past the budget of open binaries the least recently used is closed: its frames stay cached,
 * and a new address in it reads it again, named as before. */
Test(sym_user, binaries_past_the_budget_close_the_least_recently_used)
{
	struct symbolizer_opts o = { .sz = sizeof(o), .elf_budget = 1 };
	struct sym_frame f[16], again[16];
	struct symbolizer_stats st;
	struct symbolizer *s;
	int n;

	s = symbolizer__new(&o);
	cr_assert_not_null(s);
	symfix__start(&fix, "hot");
	n = symbolizer__user(s, fix.pid, symfix__addr(&fix, "probe_ret"), true, f, 16);
	check_inlined_chain(f, n, symfix__addr(&fix, "probe_ret"));
	symbolizer__stats(s, &st);
	cr_expect_eq(st.modules_closed, 0, "the one binary open is the one in use");
	cr_assert_gt(symbolizer__user(s, fix.pid, symfix__addr(&fix, "getppid") + 2, false,
				      again, 16), 0);
	cr_expect_str_eq(again[0].func, "getppid");
	symbolizer__stats(s, &st);
	cr_expect_eq(st.modules_over_budget, 1, "libc's symbols pass a byte: the fixture closed");
	cr_expect_eq(st.modules_closed, 1);
	/* A cached address reads nothing. */
	cr_assert_eq(symbolizer__user(s, fix.pid, symfix__addr(&fix, "probe_ret"), true, again, 16),
		     n);
	check_inlined_chain(again, n, symfix__addr(&fix, "probe_ret"));
	symbolizer__stats(s, &st);
	cr_expect_eq(st.modules_reread, 0);
	/* A new one reads the fixture again, closing libc. */
	cr_assert_eq(symbolizer__user(s, fix.pid, symfix__addr(&fix, "middle_ret"), true, f, 16), 1);
	cr_expect_str_eq(f[0].func, "hot_outer");
	cr_expect_eq(f[0].line, symfix__marker_line(f[0].file, "outer_call"));
	symbolizer__stats(s, &st);
	cr_expect_eq(st.modules_reread, 1);
	cr_expect_eq(st.modules_over_budget, 2);
	symbolizer__free(s);
}

Test(sym_user, reading_ahead_prepares_every_binary_within_its_budget)
{
	struct symbolizer_stats st;
	struct sym_frame f[16];

	symfix__start(&fix, "hot");
	cr_assert_eq(symbolizer__note_process(sym, fix.pid), 0);
	symbolizer__prepare(sym, false, 0);
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.prepared, 0, "no budget, nothing read");
	symbolizer__prepare(sym, false, 10000000000ull);
	symbolizer__stats(sym, &st);
	/* The program, libc and ld.so at least, and every binary it maps that could be opened. */
	cr_expect_geq(st.prepared, 3);
	cr_expect_eq(st.prepared, st.modules - st.modules_failed);
	cr_expect_eq(st.lookups, 0, "reading ahead looks nothing up");
	resolve(fix.pid, symfix__addr(&fix, "hot_outer"), false, f, 16);
	cr_expect_str_eq(f[0].func, "hot_outer");
}

Test(sym_user, cxx_template_in_a_namespace_is_demangled)
{
	struct sym_frame f[16];

	symfix__start(&fix, "cxx");
	resolve(fix.pid, symfix__addr(&fix, "scale"), false, f, 16);
	cr_expect_str_eq(f[0].func, "int symfix::scale<int>(int)");
	cr_expect(ends_with(f[0].file, "tests/symfix/cxx.cc"), "file %s", f[0].file);
	cr_expect_gt(f[0].line, 0);
}

Test(sym_user, rust_legacy_names_lose_their_hash)
{
	char *s = sym_elf__demangle("_ZN4core3fmt5write17h0123456789abcdefE");

	cr_assert_not_null(s);
	cr_expect_str_eq(s, "core::fmt::write");
	free(s);
	cr_expect_null(sym_elf__demangle("main.spin"));
	cr_expect_null(sym_elf__demangle("_Znot valid"));
}

static void check_go(const char *fixture)
{
	struct sym_frame f[16];
	uint64_t a;

	symfix__start(&fix, fixture);
	a = symfix__addr(&fix, "spin");
	resolve(fix.pid, a, false, f, 16);
	cr_expect_str_eq(f[0].func, "main.spin");
	cr_expect(ends_with(f[0].file, "tests/symfix/spin.go"), "file %s", f[0].file);
	cr_expect_gt(f[0].line, 0);
}

Test(sym_user, go_1_19_binary)
{
	check_go("spin-go1.19");
}

Test(sym_user, go_1_23_binary)
{
	check_go("spin-go1.23");
}

static void write_perfmap(pid_t pid, const char *mode, uint64_t start, uint64_t size,
			  const char *name)
{
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/perf-%d.map", perfdir, pid);
	fp = fopen(path, mode);
	cr_assert_not_null(fp);
	fprintf(fp, "%lx %lx %s\n", (unsigned long)start, (unsigned long)size, name);
	fclose(fp);
}

Test(sym_user, perf_map_names_jit_code)
{
	struct sym_frame f[16];
	uint64_t jit;

	symfix__start(&fix, "hot");
	jit = symfix__addr(&fix, "jit");
	write_perfmap(fix.pid, "w", jit, 0x40, "LazyCompile:*hot_loop app.js:12");
	resolve(fix.pid, jit + 0x10, false, f, 16);
	cr_expect_str_eq(f[0].func, "LazyCompile:*hot_loop app.js:12");
	cr_expect(ends_with(f[0].file, "perf-%d.map") || strstr(f[0].file, "perf-"), "file %s",
		  f[0].file);
	/* Code emitted later is appended; the file is read again. */
	sleep(0);
	write_perfmap(fix.pid, "a", jit + 0x100, 0x20, "Interpreter");
	resolve(fix.pid, jit + 0x104, false, f, 16);
	cr_expect_str_eq(f[0].func, "Interpreter");
	resolve(fix.pid, jit + 0x80, false, f, 16);
	cr_expect(!strncmp(f[0].func, "[unknown] ", 10), "func %s", f[0].func);
}

/* The start reads a process before attaching and again once attached: its perf map, refused
 * (here a symbolic link), is named once in the summary, not once a reading. */
Test(sym_user, a_process_read_twice_has_its_refused_map_named_once)
{
	struct symbolizer_stats st;
	struct sym_frame f[16];
	char path[128];
	uint64_t jit;

	symfix__start(&fix, "hot");
	jit = symfix__addr(&fix, "jit");
	snprintf(path, sizeof(path), "%s/perf-%d.map", perfdir, fix.pid);
	cr_assert_eq(symlink("/dev/zero", path), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(symbolizer__note_process(sym, fix.pid), 0);
		resolve(fix.pid, jit + 0x10, false, f, 16);
		cr_expect(!strncmp(f[0].func, "[unknown] ", 10), "func %s", f[0].func);
	}
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.files_refused, 1, "the map was named %llu times",
		     (unsigned long long)st.files_refused);
}

/* A map written after the lookups (the JVM's at its exit, or on jcmd's request), the process
 * gone: the addresses left unnamed are named from it, with PCs of their own. */
Test(sym_user, jit_code_unnamed_when_looked_up_is_named_from_the_map_written_later)
{
	struct sym_frame f[4], late, named, other;
	pid_t pid;
	uint64_t jit;
	char link[128];

	symfix__start(&fix, "hot");
	symfix__start(&fix2, "hot");
	pid = fix.pid;
	jit = symfix__addr(&fix, "jit");
	resolve(pid, jit + 0x10, false, f, 4);
	cr_expect(f[0].late_jit, "%s is not JIT code to name later", f[0].func);
	resolve(fix2.pid, jit + 0x10, false, f, 4);
	symbolizer__forget_process(sym, pid);
	symfix__stop(&fix);
	write_perfmap(pid, "w", jit, 0x40, "void Hot.loop()");
	cr_assert_eq(symbolizer__late_jit(sym, pid, jit + 0x10, true, &named), 1);
	cr_expect_str_eq(named.func, "void Hot.loop()");
	cr_expect_neq(named.pc, jit + 0x10, "the PC of the unnamed frame");
	cr_expect_eq(symbolizer__late_jit(sym, pid, jit + 0x80, true, &late), 0);
	/* The map of a process no lookup left unnamed code of, and a map that is a link, are not
	 * read. */
	cr_expect_eq(symbolizer__late_jit(sym, 4242424, jit + 0x10, true, &other), 0);
	snprintf(link, sizeof(link), "%s/perf-%d.map", perfdir, fix2.pid);
	cr_assert_eq(symlink("/etc/passwd", link), 0);
	cr_expect_eq(symbolizer__late_jit(sym, fix2.pid, jit + 0x10, true, &other), 0);
	cr_expect_geq(foreign_log__count(symbolizer__refused(sym)), 1, "the link is not named");
}

/* A flight recorder's window names the late JIT frames before the end: a map not written yet
 * then is looked for again at the next window and at the end, not given up. */
Test(sym_user, jit_map_absent_at_a_window_is_looked_for_again)
{
	struct sym_frame f[4], named;
	uint64_t jit;

	symfix__start(&fix, "hot");
	jit = symfix__addr(&fix, "jit");
	resolve(fix.pid, jit + 0x10, false, f, 4);
	cr_assert(f[0].late_jit, "%s is not JIT code to name later", f[0].func);
	cr_expect_eq(symbolizer__late_jit(sym, fix.pid, jit + 0x10, false, &named), 0);
	write_perfmap(fix.pid, "w", jit, 0x40, "void Hot.loop()");
	cr_assert_eq(symbolizer__late_jit(sym, fix.pid, jit + 0x10, false, &named), 1);
	cr_expect_str_eq(named.func, "void Hot.loop()");
	/* Code the map names later is read as it is appended. */
	write_perfmap(fix.pid, "a", jit + 0x100, 0x20, "void Hot.later()");
	cr_assert_eq(symbolizer__late_jit(sym, fix.pid, jit + 0x104, true, &named), 1);
	cr_expect_str_eq(named.func, "void Hot.later()");
}

Test(sym_user, unknown_addresses_name_their_mapping_or_address)
{
	struct sym_frame f[16];
	char want[64];

	symfix__start(&fix, "hot");
	resolve(fix.pid, 0x10, false, f, 16);
	cr_expect_str_eq(f[0].func, "[unknown] 0x10");
	cr_expect_eq(f[0].pc, 0x10);
	resolve(fix.pid, symfix__addr(&fix, "vdso") + 0x20, false, f, 16);
	cr_expect(!strncmp(f[0].func, "[unknown] [vdso]+0x", 19), "func %s", f[0].func);
	/* A process that never existed: the address alone. */
	resolve(999999999, 0x7f0000001234, false, f, 16);
	snprintf(want, sizeof(want), "[unknown] 0x%lx", 0x7f0000001234ul);
	cr_expect_str_eq(f[0].func, want);
	cr_expect_eq(symbolizer__note_process(sym, 999999999), -ENOENT);
}

Test(sym_user, one_pc_one_frame_across_processes)
{
	struct sym_frame a[4], b[4], a2[4];

	symfix__start(&fix, "hot");
	symfix__start(&fix2, "hot");
	/* Both processes have code at the same address (unmapped here), named differently. */
	write_perfmap(fix.pid, "w", 0x100000, 0x100, "jit_a");
	write_perfmap(fix2.pid, "w", 0x100000, 0x100, "jit_b");
	resolve(fix.pid, 0x100010, false, a, 4);
	resolve(fix2.pid, 0x100010, false, b, 4);
	cr_expect_str_eq(a[0].func, "jit_a");
	cr_expect_str_eq(b[0].func, "jit_b");
	cr_expect_eq(a[0].pc, 0x100010);
	cr_expect_neq(b[0].pc, a[0].pc);
	cr_expect_eq(b[0].pc & (SYM_PC_SYNTHETIC | SYM_PC_REMAPPED),
		     SYM_PC_SYNTHETIC | SYM_PC_REMAPPED);
	resolve(fix2.pid, 0x100010, false, a2, 4);
	cr_expect_eq(a2[0].pc, b[0].pc, "a remapped PC is stable");
}

/* What heap glibc's malloc has handed out, small blocks and mapped ones. */
static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* A whole machine brings new unknown addresses all the time (short processes' anonymous
 * memory): what their frames take stays bounded, and a frame still in use keeps its PC. Before
 * the generations (sym_unknowns.h), 786,432 such addresses took 216 MiB. */
Test(sym_user, unknown_addresses_are_held_in_bounded_memory, .timeout = 300)
{
	const size_t warm = 1 << 18, n = 1 << 20;
	struct sym_frame f, used;
	struct symbolizer_stats st;
	size_t before = 0;
	char want[64];

	symfix__start(&fix, "hot");
	resolve(fix.pid, 0x10, false, &used, 1);
	for (size_t i = 0; i < n; i++) {
		if (i == warm)
			before = heap_in_use();
		cr_assert_eq(symbolizer__user(sym, fix.pid, 0x100000 + i * 16, false, &f, 1), 1);
		if (i % 4096 == 0) {
			cr_assert_eq(symbolizer__user(sym, fix.pid, 0x10, false, &f, 1), 1);
			cr_assert_str_eq(f.func, "[unknown] 0x10");
			cr_assert_eq(f.pc, used.pc, "a frame in use keeps its PC");
		}
	}
	cr_expect_lt(heap_in_use() - before, 4u << 20, "%zu unknown addresses took %zu bytes more",
		     n - warm, heap_in_use() - before);
	symbolizer__stats(sym, &st);
	cr_expect_eq(st.unknown, n + n / 4096 + 1);
	cr_expect_leq(st.unknown_held, 1u << 15);
	/* One forgotten long ago is named again, the same. */
	resolve(fix.pid, 0x100000, false, &f, 1);
	snprintf(want, sizeof(want), "[unknown] 0x%x", 0x100000);
	cr_expect_str_eq(f.func, want);
}
