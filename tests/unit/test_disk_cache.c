/* test_disk_cache.c - the cache kept across runs (lib/disk_cache.h): what is stored comes back,
 * a corrupt or truncated entry is a counted miss and goes, the bound evicts the least recently
 * used, and a directory or an entry someone else could have made is refused. Each test works in
 * a private directory under /tmp. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/disk_cache.h"

static char base[64], dir[96];

static void setup(void)
{
	snprintf(base, sizeof(base), "/tmp/lxtrace-test-cache-XXXXXX");
	cr_assert_not_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/cache", base);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(disk_cache, .init = setup, .fini = teardown, .timeout = 30);

/* The path of the one entry in dir (the test stores one). */
static void only_entry(char *path, size_t len)
{
	char cmd[160];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -v '^\\.'", dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_eq(fscanf(p, "%63s", cmd), 1, "no entry in %s", dir);
	pclose(p);
	snprintf(path, len, "%s/%s", dir, cmd);
}

static struct disk_cache_stats stats(struct disk_cache *c)
{
	struct disk_cache_stats st;

	disk_cache__stats(c, &st);
	return st;
}

Test(disk_cache, stored_data_comes_back_under_its_key_alone)
{
	struct disk_cache *c = disk_cache__open(dir, 1 << 20);
	void *data = NULL;
	struct stat st;
	size_t len = 0;

	cr_assert_not_null(c, "%s", strerror(errno));
	cr_assert_eq(stat(dir, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0700, "created %o", st.st_mode & 0777);
	cr_expect_eq(disk_cache__get(c, "key-a", 5, &data, &len), 0, "empty cache hit");
	cr_assert_eq(disk_cache__put(c, "key-a", 5, "rows of a", 9), 0);
	cr_assert_eq(disk_cache__get(c, "key-a", 5, &data, &len), 1);
	cr_expect_eq(len, 9);
	cr_expect_arr_eq(data, "rows of a", 9);
	free(data);
	cr_expect_eq(disk_cache__get(c, "key-b", 5, &data, &len), 0);
	cr_expect_eq(disk_cache__get(c, "key-", 4, &data, &len), 0);
	/* Replaced whole; empty data is data too. */
	cr_assert_eq(disk_cache__put(c, "key-a", 5, "", 0), 0);
	cr_assert_eq(disk_cache__get(c, "key-a", 5, &data, &len), 1);
	cr_expect_eq(len, 0);
	free(data);
	cr_expect_eq(stats(c).hits, 2);
	cr_expect_eq(stats(c).misses, 3);
	cr_expect_eq(stats(c).corrupt, 0);
	disk_cache__free(c);

	/* The next run finds it. */
	c = disk_cache__open(dir, 1 << 20);
	cr_assert_not_null(c);
	cr_expect_eq(disk_cache__get(c, "key-a", 5, &data, &len), 1);
	free(data);
	disk_cache__free(c);
}

/* Changes one byte at off of the only entry (off < 0: from its end), or cuts it to len. */
static void damage(long off, long cut)
{
	char path[320];
	int fd;

	only_entry(path, sizeof(path));
	fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	if (cut >= 0) {
		cr_assert_eq(ftruncate(fd, cut), 0);
	} else {
		struct stat st;
		unsigned char b;

		cr_assert_eq(fstat(fd, &st), 0);
		if (off < 0)
			off += st.st_size;
		cr_assert_eq(pread(fd, &b, 1, off), 1);
		b ^= 0x40;
		cr_assert_eq(pwrite(fd, &b, 1, off), 1);
	}
	close(fd);
}

static void corrupt_is_a_counted_miss(long off, long cut, const char *what)
{
	struct disk_cache *c = disk_cache__open(dir, 1 << 20);
	char rows[256];
	void *data = NULL;
	size_t len = 0;

	cr_assert_not_null(c);
	for (size_t i = 0; i < sizeof(rows); i++)
		rows[i] = (char)i;
	cr_assert_eq(disk_cache__put(c, "libc", 4, rows, sizeof(rows)), 0);
	damage(off, cut);
	cr_expect_eq(disk_cache__get(c, "libc", 4, &data, &len), 0, "%s: read as good", what);
	cr_expect_eq(stats(c).corrupt, 1, "%s: not counted", what);
	/* Gone: the next look is a plain miss, and a new store is good again. */
	cr_expect_eq(disk_cache__get(c, "libc", 4, &data, &len), 0);
	cr_expect_eq(stats(c).corrupt, 1, "%s: counted twice", what);
	cr_assert_eq(disk_cache__put(c, "libc", 4, rows, sizeof(rows)), 0);
	cr_expect_eq(disk_cache__get(c, "libc", 4, &data, &len), 1);
	free(data);
	disk_cache__free(c);
}

Test(disk_cache, a_flipped_bit_in_the_data_is_a_counted_miss)
{
	corrupt_is_a_counted_miss(-7, -1, "flipped data");
}

Test(disk_cache, a_flipped_bit_in_the_header_is_a_counted_miss)
{
	corrupt_is_a_counted_miss(13, -1, "flipped header");
}

Test(disk_cache, a_truncated_entry_is_a_counted_miss)
{
	corrupt_is_a_counted_miss(0, 100, "truncated");
	corrupt_is_a_counted_miss(0, 3, "header cut");
	corrupt_is_a_counted_miss(0, 0, "empty");
}

/* Sets the mtime (the cache's last use) of the entry of key k. */
static void age(struct disk_cache *c, const char *k, time_t when)
{
	void *data = NULL;
	size_t len;
	char cmd[160], path[320];
	FILE *p;

	/* The entry is the file a get touches: find it by its mtime right after. */
	cr_assert_eq(disk_cache__get(c, k, strlen(k), &data, &len), 1, "%s", k);
	free(data);
	snprintf(cmd, sizeof(cmd), "ls -t '%s' | head -1", dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_eq(fscanf(p, "%63s", cmd), 1);
	pclose(p);
	snprintf(path, sizeof(path), "%s/%s", dir, cmd);
	cr_assert_eq(utimensat(AT_FDCWD, path,
			       (struct timespec[]){ { when, 0 }, { when, 0 } }, 0), 0);
}

Test(disk_cache, the_bound_evicts_the_least_recently_used)
{
	struct disk_cache *c = disk_cache__open(dir, 10000);
	static char huge[20000];
	char big[1800] = { 0 }, k[16];
	void *data = NULL;
	size_t len;

	cr_assert_not_null(c);
	cr_expect_eq(disk_cache__put(c, "huge", 4, huge, sizeof(huge)), -EFBIG);
	for (int i = 0; i < 4; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		cr_assert_eq(disk_cache__put(c, k, strlen(k), big, sizeof(big)), 0);
		age(c, k, 1000000 + i * 100);
	}
	/* k0 used last: it stays; k1 and k2 are now the oldest. */
	age(c, "k0", 2000000);
	cr_assert_eq(disk_cache__put(c, "k4", 2, big, sizeof(big)), 0);
	cr_expect_eq(stats(c).evicted, 0, "under the bound: nothing goes");
	cr_assert_eq(disk_cache__put(c, "k5", 2, big, sizeof(big)), 0);
	cr_expect_geq(stats(c).evicted, 2);
	cr_expect_leq(stats(c).bytes, 7500, "%llu bytes left", (unsigned long long)stats(c).bytes);
	cr_expect_eq(disk_cache__get(c, "k1", 2, &data, &len), 0, "the oldest stayed");
	cr_expect_eq(disk_cache__get(c, "k2", 2, &data, &len), 0, "the second oldest stayed");
	cr_expect_eq(disk_cache__get(c, "k0", 2, &data, &len), 1, "the recently used went");
	free(data);
	cr_expect_eq(disk_cache__get(c, "k5", 2, &data, &len), 1, "the new entry went");
	free(data);
	disk_cache__free(c);
}

Test(disk_cache, a_directory_others_may_enter_is_refused)
{
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_expect_null(disk_cache__open(dir, 1 << 20));
	cr_expect_eq(errno, EPERM);
	cr_assert_eq(chmod(dir, 0700), 0);
	disk_cache__free(disk_cache__open(dir, 1 << 20));
	if (geteuid() == 0) {
		cr_assert_eq(chown(dir, 65534, 65534), 0);
		cr_expect_null(disk_cache__open(dir, 1 << 20), "another user's directory taken");
		cr_expect_eq(errno, EPERM);
	}
}

Test(disk_cache, links_to_the_directory_or_on_its_path_are_refused)
{
	char target[128], via[128];

	snprintf(target, sizeof(target), "%s/real", base);
	cr_assert_eq(mkdir(target, 0700), 0);
	cr_assert_eq(symlink(target, dir), 0);
	cr_expect_null(disk_cache__open(dir, 1 << 20), "a symlink to the directory taken");
	cr_expect_eq(errno, ELOOP);
	snprintf(via, sizeof(via), "%s/cache/sub", base);
	cr_expect_null(disk_cache__open(via, 1 << 20), "a symlink on the path taken");
	cr_expect_eq(errno, ELOOP);
	cr_expect_eq(rmdir(target), 0, "a directory made behind the link");
	cr_assert_eq(unlink(dir), 0);
	cr_assert_eq(symlink("/nonexistent-lxtrace-cache", dir), 0);
	cr_expect_null(disk_cache__open(dir, 1 << 20), "a dangling symlink taken");
	cr_expect_eq(access("/nonexistent-lxtrace-cache", F_OK), -1, "made at the link's target");
	/* Only the directory itself is made, not its parents. */
	snprintf(via, sizeof(via), "%s/missing/cache", base);
	cr_expect_null(disk_cache__open(via, 1 << 20));
	cr_expect_eq(errno, ENOENT);
}

Test(disk_cache, an_entry_that_is_a_link_is_refused_and_its_target_untouched)
{
	struct disk_cache *c = disk_cache__open(dir, 1 << 20);
	char path[320], target[128];
	void *data = NULL;
	size_t len;

	cr_assert_not_null(c);
	cr_assert_eq(disk_cache__put(c, "k", 1, "good", 4), 0);
	only_entry(path, sizeof(path));
	/* A copy of a good entry, reached by a symlink, then by a second hard link. */
	snprintf(target, sizeof(target), "%s/elsewhere", base);
	cr_assert_eq(rename(path, target), 0);
	cr_assert_eq(symlink(target, path), 0);
	cr_expect_eq(disk_cache__get(c, "k", 1, &data, &len), 0, "read through a symlink");
	cr_expect_eq(stats(c).corrupt, 1);
	cr_expect_eq(access(target, F_OK), 0, "the link's target removed");
	cr_assert_eq(link(target, path), 0);
	cr_expect_eq(disk_cache__get(c, "k", 1, &data, &len), 0, "read with another link");
	cr_expect_eq(stats(c).corrupt, 2);
	cr_expect_eq(access(target, F_OK), 0, "the other link removed");
	disk_cache__free(c);
}

Test(disk_cache, a_crashed_runs_temporary_files_go_once_stale)
{
	char stale[192], fresh[192];
	struct disk_cache *c = disk_cache__open(dir, 1 << 20);

	cr_assert_not_null(c);
	disk_cache__free(c);
	snprintf(stale, sizeof(stale), "%s/.tmp.1.0", dir);
	snprintf(fresh, sizeof(fresh), "%s/.tmp.1.1", dir);
	close(open(stale, O_WRONLY | O_CREAT, 0600));
	close(open(fresh, O_WRONLY | O_CREAT, 0600));
	cr_assert_eq(utimensat(AT_FDCWD, stale, (struct timespec[]){ { 1000, 0 }, { 1000, 0 } }, 0),
		     0);
	c = disk_cache__open(dir, 1 << 20);
	cr_assert_not_null(c);
	cr_expect_eq(access(stale, F_OK), -1, "a stale temporary file stayed");
	cr_expect_eq(access(fresh, F_OK), 0, "a run's file being written went");
	cr_expect_eq(stats(c).bytes, 0, "temporary files counted as entries");
	disk_cache__free(c);
}
