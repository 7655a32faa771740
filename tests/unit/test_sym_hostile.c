/* test_sym_hostile.c - binaries whose owner wants the symbolizer to hang or grow: a FIFO where a
 * debug file is looked for (beside the binary, in its .debug directory, or up a debuglink with
 * "../" in it), DWARF whose .gnu_debugaltlink names a FIFO, and compressed data that would
 * inflate to half a GiB: a section, MiniDebugInfo, a gzip file mapped executable. The
 * symbolizer answers at once (the suite's timeout is the hang), from the symbol table where
 * DWARF is refused, and no bomb is inflated. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "tests/lib/tfile.h"
#include "tests/unit/test_sym_fixture.h"
#include "user/stacks/symbolize.h"

static char dir[64];
static struct symfix fix;
static struct symbolizer *sym;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-symhostile-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
}

static void teardown(void)
{
	char cmd[128];

	symfix__stop(&fix);
	symbolizer__free(sym);
	sym = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "test_sym_hostile: cannot remove %s\n", dir);
}

/* Hangs fail by the timeout: nothing here may take more than a moment. */
TestSuite(sym_hostile, .init = setup, .fini = teardown, .timeout = 30);

static void run(const char *cmd)
{
	cr_assert_eq(system(cmd), 0, "command failed: %s", cmd);
}

/* The hot fixture's frames at its probe_ret (a return address in inlined code). */
static int resolve_probe(struct sym_frame *f, int max)
{
	int n = symbolizer__user(sym, fix.pid, symfix__addr(&fix, "probe_ret"), true, f, max);

	cr_assert_gt(n, 0, "symbolizer__user: %s", strerror(-n));
	return n;
}

/* Runs the shell script (a printf format given dir and the fixture's path, in that order) that
 * makes DIR/hot from the fixture hot, then starts DIR/hot under a symbolizer with opts (NULL:
 * the defaults). */
static void start_crafted_with(const char *script, const struct symbolizer_opts *opts)
{
	char src[PATH_MAX], cmd[4 * PATH_MAX], bin[PATH_MAX];

	symfix__path("hot", src, sizeof(src));
	snprintf(bin, sizeof(bin), "%s/hot", dir);
	snprintf(cmd, sizeof(cmd), script, dir, src);
	run(cmd);
	sym = symbolizer__new(opts);
	cr_assert_not_null(sym);
	symfix__start_path(&fix, bin);
}

static void start_crafted(const char *script)
{
	start_crafted_with(script, NULL);
}

/* The stripped binary is looked up at once: its address, unknown, by file offset. */
static void expect_unknown_at_once(void)
{
	struct sym_frame f[16];

	resolve_probe(f, 16);
	cr_expect(!strncmp(f[0].func, "[unknown] hot+0x", 16), "func %s", f[0].func);
}

Test(sym_hostile, fifos_where_debug_files_are_looked_for)
{
	/* A stripped binary whose debuglink names keep.debug, which is a FIFO beside it and in
	 * its .debug directory. */
	start_crafted("set -e; cd '%1$s'; objcopy --only-keep-debug '%2$s' keep.debug; "
		      "objcopy --strip-all --add-gnu-debuglink=keep.debug '%2$s' hot; rm keep.debug; "
		      "mkfifo keep.debug; mkdir .debug; mkfifo .debug/keep.debug; chmod 755 hot");
	expect_unknown_at_once();
}

Test(sym_hostile, a_debuglink_with_slashes_is_not_followed)
{
	/* objcopy records a link's base name only: the section is written by hand, the name
	 * padded to 4 bytes and followed by a CRC word, climbing from any directory to the FIFO
	 * (32 bytes of "../" are more than the test directory is deep). */
	start_crafted("set -e; cd '%1$s'; mkfifo trap; "
		      "n=../../../../../../../../../..%1$s/trap; "
		      "{ printf '%%s' \"$n\"; head -c $(( 8 - ${#n} %% 4 )) /dev/zero; } > link; "
		      "objcopy --strip-all --add-section .gnu_debuglink=link '%2$s' hot; chmod 755 hot");
	expect_unknown_at_once();
}

Test(sym_hostile, dwarf_whose_altlink_names_a_fifo_is_not_read)
{
	struct sym_frame f[16];

	/* .gnu_debugaltlink: the alternate file's name, NUL, then its build id (20 bytes). */
	start_crafted("set -e; cd '%1$s'; mkfifo alt; "
		      "{ printf '%%s\\0' '%1$s/alt'; head -c 20 /dev/zero; } > altlink; "
		      "objcopy --add-section .gnu_debugaltlink=altlink '%2$s' hot; chmod 755 hot");
	cr_assert_eq(resolve_probe(f, 16), 1, "inlined frames come from DWARF, which was read");
	/* The symbol table still names the function; no line without DWARF. */
	cr_expect_str_eq(f[0].func, "hot_middle");
	cr_expect_eq(f[0].line, 0);
}

/* Peak RSS of this process, KiB. */
static long maxrss_kb(void)
{
	struct rusage ru;

	cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* The crafted binary was refused whole: named in the summary, its address unknown, its
 * compressed data not inflated (this process's peak RSS grew by less than max_mib since
 * before). */
static void expect_refused_unread(long before, long max_mib)
{
	struct sym_frame f[16];

	resolve_probe(f, 16);
	cr_expect(!strncmp(f[0].func, "[unknown] hot+0x", 16), "func %s", f[0].func);
	cr_expect_lt(maxrss_kb() - before, max_mib * 1024, "peak RSS grew by %ld KiB",
		     maxrss_kb() - before);
	cr_expect(foreign_log__count(symbolizer__refused(sym)) == 1, "the binary is not named");
}

Test(sym_hostile, a_compressed_section_past_the_budget_is_not_inflated, .timeout = 60)
{
	char bomb[PATH_MAX];
	long before;

	/* Another user's binary whose .zdebug_info declares 512 MiB: its DWARF would be read for
	 * lines and inlines. */
	snprintf(bomb, sizeof(bomb), "%s/bomb", dir);
	cr_assert_eq(tfile_zsection(bomb, 512ull << 20), 0);
	before = maxrss_kb();
	start_crafted("set -e; cd '%1$s'; objcopy --strip-debug --add-section .zdebug_info=bomb "
		      "'%2$s' hot; chown 61234 hot; chmod 755 hot");
	expect_refused_unread(before, 64);
}

Test(sym_hostile, compressed_debug_sections_within_the_budget_are_read)
{
	struct sym_frame f[16];

	/* The same user's binary built the way `gcc -gz` builds: every DWARF line still read. */
	start_crafted("set -e; cd '%1$s'; objcopy --compress-debug-sections=zlib '%2$s' hot; "
		      "chown 61234 hot; chmod 755 hot");
	cr_assert_gt(resolve_probe(f, 16), 1, "no inlined frames: DWARF was not read");
	cr_expect_gt(f[0].line, 0);
	cr_expect_eq(foreign_log__count(symbolizer__refused(sym)), 0);
}

Test(sym_hostile, minidebuginfo_of_another_user_is_not_read)
{
	long before = maxrss_kb();

	/* A stripped binary whose .gnu_debugdata (an xz-compressed ELF file: libdwfl reads its
	 * symbol table when the binary has none) is 64 MiB of zeros, which xz stores in 10 KiB. */
	start_crafted("set -e; cd '%1$s'; python3 -c 'import lzma, sys; "
		      "sys.stdout.buffer.write(lzma.compress(bytes(64 << 20)))' > mini.xz; "
		      "objcopy --strip-all --add-section .gnu_debugdata=mini.xz '%2$s' hot; "
		      "chown 61234 hot; chmod 755 hot");
	expect_refused_unread(before, 32);
}

Test(sym_hostile, a_mapped_file_that_is_not_elf_is_not_inflated, .timeout = 60)
{
	char path[PATH_MAX];
	struct sym_frame f[4];
	struct stat st;
	long before;
	void *at;
	int fd, n;

	/* Any file can be mapped executable; libdwfl would inflate a gzip one, looking for ELF. */
	snprintf(path, sizeof(path), "%s/zeros.gz", dir);
	cr_assert_eq(tfile_gzip_zeros(path, 512ull << 20), 0);
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0 && !fstat(fd, &st));
	at = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	cr_assert_neq(at, MAP_FAILED, "mmap: %s", strerror(errno));
	sym = symbolizer__new(NULL);
	cr_assert_not_null(sym);
	before = maxrss_kb();
	n = symbolizer__user(sym, (uint64_t)getpid(), (uint64_t)at + 64, false, f, 4);
	cr_assert_eq(n, 1, "symbolizer__user: %d", n);
	cr_expect(!strncmp(f[0].func, "[unknown] zeros.gz+0x", 21), "func %s", f[0].func);
	cr_expect_lt(maxrss_kb() - before, 64 * 1024, "peak RSS grew by %ld KiB",
		     maxrss_kb() - before);
	munmap(at, (size_t)st.st_size);
}

/* 3 MiB of DWARF would take ~400 MiB at SYM_ELF_DWARF_COST: another user's binary keeps its
 * symbols, not its DWARF; the user who gets the trace has his read. */
#define BIG_DWARF "set -e; cd '%1$s'; head -c 3M /dev/zero > mac; " \
		  "objcopy --add-section .debug_macinfo=mac '%2$s' hot; chown 61234 hot; chmod 755 hot"

Test(sym_hostile, dwarf_past_the_budget_leaves_the_symbols)
{
	struct sym_frame f[16];

	start_crafted(BIG_DWARF);
	cr_assert_eq(resolve_probe(f, 16), 1, "inlined frames come from DWARF, which was read");
	cr_expect_str_eq(f[0].func, "hot_middle");
	cr_expect_eq(f[0].line, 0);
	cr_expect_eq(foreign_log__count(symbolizer__refused(sym)), 1, "the binary is not named");
}

Test(sym_hostile, the_invoking_users_dwarf_is_read_whatever_its_size)
{
	struct sym_frame f[16];

	start_crafted_with(BIG_DWARF, &(struct symbolizer_opts){
		.sz = sizeof(struct symbolizer_opts), .trusted_uid = 61234 });
	cr_assert_gt(resolve_probe(f, 16), 1, "no inlined frames: DWARF was not read");
	cr_expect_gt(f[0].line, 0);
	cr_expect_eq(foreign_log__count(symbolizer__refused(sym)), 0);
}
