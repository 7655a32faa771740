/* test_cfi_cache.c - unwind rows kept across recordings (user/stacks/cfi_cache.h): libc's rows
 * come back whole from the cache; a file changed in place, even with its size and mtime put
 * back, is a miss; a file someone else could change, or a copy, has no key; rows the unwinder
 * could not search are dropped as corrupt. The cache is a private directory under /tmp. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/stacks/cfi.h"
#include "user/stacks/cfi_cache.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static char base[64];
static struct disk_cache *cache;

static void setup(void)
{
	char dir[96];

	snprintf(base, sizeof(base), "/tmp/lxtrace-test-cfi-cache-XXXXXX");
	cr_assert_not_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/cache", base);
	cache = disk_cache__open(dir, 64 << 20);
	cr_assert_not_null(cache, "%s", strerror(errno));
	elf_version(EV_CURRENT);
}

static void teardown(void)
{
	char cmd[128];

	disk_cache__free(cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(cfi_cache, .init = setup, .fini = teardown, .timeout = 60);

static void compile(int fd, struct cfi_table *t)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	cr_assert_not_null(elf);
	cr_assert_eq(cfi__compile(elf, NULL, t, NULL), 0);
	elf_end(elf);
}

/* The key of the file open as fd, which must have one. */
static struct cfi_cache_key key_of(int fd, bool *settled)
{
	struct cfi_cache_key k;
	struct stat st;

	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert(cfi_cache__key(fd, st.st_dev, st.st_ino, &k, settled), "no key");
	return k;
}

static bool has_key(int fd)
{
	struct cfi_cache_key k;
	struct stat st;
	bool settled;

	cr_assert_eq(fstat(fd, &st), 0);
	return cfi_cache__key(fd, st.st_dev, st.st_ino, &k, &settled);
}

static void need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: only root's files have keys");
}

Test(cfi_cache, libc_rows_come_back_whole)
{
	struct cfi_table t = { 0 }, back = { 0 };
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	struct cfi_cache_key k;
	bool settled;

	cr_assert_geq(fd, 0);
	if (!has_key(fd))
		cr_skip_test(LIBC " is not root's alone on a local filesystem here");
	k = key_of(fd, &settled);
	cr_expect(settled, "libc changed in the last seconds?");
	compile(fd, &t);
	cr_expect_eq(cfi_cache__get(cache, &k, &back), 0, "hit in an empty cache");
	cr_assert_eq(cfi_cache__put(cache, &k, t.rows, t.n), 0);
	cr_assert_eq(cfi_cache__get(cache, &k, &back), 1);
	cr_assert_eq(back.n, t.n);
	cr_expect_arr_eq(back.rows, t.rows, t.n * sizeof(*t.rows));
	cfi_table__release(&back);
	cr_expect(cfi_cache__same(fd, &k));
	cfi_table__release(&t);
	close(fd);
}

/* A root-only copy of libc at base/name, opened. */
static int copy_of_libc(const char *name, char *path, size_t len)
{
	char cmd[256];

	snprintf(path, len, "%s/%s", base, name);
	snprintf(cmd, sizeof(cmd), "cp " LIBC " '%s' && chmod 0755 '%s'", path, path);
	cr_assert_eq(system(cmd), 0);
	return open(path, O_RDONLY | O_CLOEXEC);
}

Test(cfi_cache, a_file_changed_in_place_misses_even_with_its_mtime_put_back)
{
	struct cfi_table t = { 0 }, back = { 0 };
	struct cfi_cache_key before, after;
	char path[160];
	struct stat st;
	bool settled;
	int fd, wfd;

	need_root();
	fd = copy_of_libc("lib.so", path, sizeof(path));
	cr_assert_geq(fd, 0);
	before = key_of(fd, &settled);
	cr_expect_not(settled, "a file written now is settled");
	compile(fd, &t);
	cr_assert_eq(cfi_cache__put(cache, &before, t.rows, t.n), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	/* One byte changed, the size the same, the mtime put back: only the ctime tells. */
	usleep(20 * 1000);
	wfd = open(path, O_WRONLY | O_CLOEXEC);
	cr_assert_eq(pwrite(wfd, "X", 1, 4096), 1);
	close(wfd);
	cr_assert_eq(utimensat(AT_FDCWD, path, (struct timespec[]){ st.st_atim, st.st_mtim }, 0),
		     0);
	cr_expect_not(cfi_cache__same(fd, &before), "the change went unseen");
	after = key_of(fd, &settled);
	cr_expect_neq(memcmp(&before, &after, sizeof(after)), 0);
	cr_expect_eq(cfi_cache__get(cache, &after, &back), 0, "a changed file hit");
	cfi_table__release(&t);
	close(fd);
}

Test(cfi_cache, files_others_could_change_and_copies_have_no_key)
{
	char path[160];
	int fd, mfd;

	need_root();
	fd = copy_of_libc("lib.so", path, sizeof(path));
	cr_assert_geq(fd, 0);
	cr_assert(has_key(fd));
	cr_assert_eq(chmod(path, 0775), 0);
	cr_expect_not(has_key(fd), "a file its group may write");
	cr_assert_eq(chmod(path, 0757), 0);
	cr_expect_not(has_key(fd), "a file anyone may write");
	cr_assert_eq(chmod(path, 0755), 0);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	cr_expect_not(has_key(fd), "another user's file");
	close(fd);
	/* A private copy (memfd) named as the file it copies. */
	mfd = memfd_create("copy", MFD_CLOEXEC);
	cr_assert_geq(mfd, 0);
	{
		struct cfi_cache_key k;
		struct stat st;
		bool settled;

		cr_assert_eq(stat(path, &st), 0);
		cr_expect_not(cfi_cache__key(mfd, st.st_dev, st.st_ino, &k, &settled),
			      "a copy keyed as its file");
	}
	close(mfd);
}

Test(cfi_cache, rows_the_unwinder_cannot_search_are_dropped)
{
	struct lx_cfi_row rows[3] = { { .off = 16 }, { .off = 8 }, { .off = 32 } };
	struct cfi_cache_key k = { .dev = 1, .ino = 2, .size = 3 };
	struct cfi_table back = { 0 };
	struct disk_cache_stats st;

	cr_assert_eq(cfi_cache__put(cache, &k, rows, 3), 0);
	cr_expect_eq(cfi_cache__get(cache, &k, &back), 0, "unsorted rows taken");
	disk_cache__stats(cache, &st);
	cr_expect_eq(st.corrupt, 1);
	/* A part of a row. */
	cr_assert_eq(disk_cache__put(cache, &k, sizeof(k), rows, sizeof(rows) - 3), 0);
	cr_expect_eq(cfi_cache__get(cache, &k, &back), 0, "a part of a row taken");
	/* No rows at all is an answer: a file without usable CFI. */
	cr_assert_eq(cfi_cache__put(cache, &k, NULL, 0), 0);
	cr_expect_eq(cfi_cache__get(cache, &k, &back), 1);
	cr_expect_eq(back.n, 0);
	cr_expect_null(back.rows);
}
