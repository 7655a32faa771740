/* test_output_file.c - the record's output file against what another user can leave at the
 * path: a symlink (at the end or on the way), a file of his that he holds open, a second
 * recording (or a flight recorder holding the path); and that a new or replaced file is 0600,
 * locked, in place and the invoker's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tfile.h"
#include "user/cli/output_file.h"

#define OTHER_UID 61234
#define ROOT_RUN ((uid_t)-1)

static char dir[64], path[128], why[512];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-output-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.trace", dir);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[0] && system(cmd))
		fprintf(stderr, "test_output_file: cannot remove %s\n", dir);
}

TestSuite(output_file, .init = setup, .fini = teardown, .timeout = 20);

static void put(const char *p, const char *text, mode_t mode)
{
	int err = tfile_write(p, text, mode);

	cr_assert_eq(err, 0, "create %s: %s", p, strerror(-err));
}

static void expect_content(const char *p, const char *text)
{
	char buf[256] = "";
	int fd = open(p, O_RDONLY | O_NOFOLLOW);

	cr_assert_geq(fd, 0, "open %s: %s", p, strerror(errno));
	cr_expect_geq(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	cr_expect_str_eq(buf, text, "%s holds \"%s\", expected \"%s\"", p, buf, text);
}

/* Opening p fails with err and a one-line reason naming p and holding phrase. */
static void expect_refused(const char *p, int err, const char *phrase)
{
	cr_expect_null(output_file__open(p, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, err);
	cr_expect(strstr(why, p) && strstr(why, phrase), "why: %s", why);
	cr_expect_null(strchr(why, '\n'));
}

/* The file at p still has its bytes, owner and mode. */
static void expect_untouched(const char *p, const char *text, uid_t uid, mode_t mode)
{
	struct stat st;

	expect_content(p, text);
	cr_assert_eq(lstat(p, &st), 0);
	cr_expect_eq(st.st_uid, uid);
	cr_expect_eq(st.st_mode & 07777, mode);
}

/* Only x.trace (and what the test put there) is left in the directory: no temp file. */
static void expect_no_leftovers(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -q lxtrace-record", dir);
	cr_expect_neq(system(cmd), 0, "a temp file was left in %s", dir);
}

/* p is 0600 and locked, as a recording's file is. */
static void expect_0600_locked(const char *p)
{
	struct stat st;
	int other;

	cr_assert_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600);
	other = open(p, O_RDONLY);
	cr_assert_geq(other, 0);
	cr_expect_neq(flock(other, LOCK_EX | LOCK_NB), 0, "%s is not locked", p);
	close(other);
}

static void write_all(struct output_file *f, const char *text)
{
	cr_assert_eq(write(output_file__fd(f), text, strlen(text)), (ssize_t)strlen(text));
}

Test(output_file, a_new_file_is_0600_locked_and_in_place_from_the_start)
{
	struct output_file *f = output_file__open(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));

	cr_assert_not_null(f, "%s", why);
	write_all(f, "trace");
	/* Before close, as after kill -9: the bytes are at the path. */
	expect_content(path, "trace");
	expect_0600_locked(path);
	cr_expect_eq(output_file__close(f), 0);
	expect_no_leftovers();
}

Test(output_file, a_second_recording_to_the_path_fails_at_once)
{
	struct output_file *first = output_file__open(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	struct output_file *second;

	cr_assert_not_null(first, "%s", why);
	write_all(first, "first");
	expect_refused(path, EBUSY, "another recording");
	expect_content(path, "first");
	output_file__close(first);
	/* Once the first one is done, the path is free again. */
	second = output_file__open(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(second, "%s", why);
	output_file__close(second);
	expect_no_leftovers();
}

/* A flight recorder holds its path: where there was nothing, an empty stand-in (0600, locked)
 * is there while it is held and gone after; a second recording of either kind is refused. */
Test(output_file, a_held_path_refuses_a_second_recording_of_either_kind)
{
	struct output_file *held = output_file__hold(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	struct output_file *f;
	struct stat st;

	cr_assert_not_null(held, "%s", why);
	cr_assert_eq(stat(path, &st), 0, "no stand-in at the path");
	cr_expect(S_ISREG(st.st_mode) && st.st_size == 0 && (st.st_mode & 07777) == 0600,
		  "stand-in: mode %o, %lld bytes", st.st_mode & 07777, (long long)st.st_size);
	expect_refused(path, EBUSY, "another recording");
	cr_expect_null(output_file__hold(path, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, EBUSY);
	cr_expect(strstr(why, path) && strstr(why, "another recording"), "why: %s", why);
	cr_expect_eq(output_file__close(held), 0);
	cr_expect_neq(lstat(path, &st), 0, "the stand-in was left at the path");
	expect_no_leftovers();

	/* A recording first: the holder is refused, and the recording's file is untouched. */
	f = output_file__open(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	write_all(f, "first");
	cr_expect_null(output_file__hold(path, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, EBUSY);
	output_file__close(f);
	expect_content(path, "first");
}

/* A file already at a held path (an earlier trace) is locked as it is: same file, same bytes,
 * same mode, and still there after. */
Test(output_file, a_held_file_is_kept_as_it_is)
{
	struct output_file *held;
	struct stat before, after;

	put(path, "old", 0644);
	cr_assert_eq(stat(path, &before), 0);
	held = output_file__hold(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(held, "%s", why);
	expect_refused(path, EBUSY, "another recording");
	cr_expect_eq(output_file__close(held), 0);
	cr_assert_eq(stat(path, &after), 0);
	cr_expect_eq(after.st_ino, before.st_ino, "the file was replaced");
	expect_untouched(path, "old", 0, 0644);
}

/* Holding follows no link and takes nothing of another user's, as opening does. */
Test(output_file, a_hold_follows_no_link_and_takes_no_users_file)
{
	char target[128];

	snprintf(target, sizeof(target), "%s/rootfile", dir);
	put(target, "precious", 0644);
	cr_assert_eq(symlink(target, path), 0);
	cr_expect_null(output_file__hold(path, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, ELOOP);
	expect_untouched(target, "precious", 0, 0644);
	if (geteuid() != 0)
		return;
	cr_assert_eq(chown(target, OTHER_UID, OTHER_UID), 0, "chown: %s", strerror(errno));
	cr_expect_null(output_file__hold(target, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, EPERM);
	cr_expect(strstr(why, "another user"), "why: %s", why);
}

Test(output_file, an_existing_file_is_replaced_not_written_into)
{
	struct output_file *f;
	char buf[16] = "";
	struct stat before, after;
	int held;

	put(path, "old", 0666);
	held = open(path, O_RDONLY);
	cr_assert_geq(held, 0);
	cr_assert_eq(fstat(held, &before), 0);
	f = output_file__open(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	write_all(f, "new");
	cr_assert_eq(stat(path, &after), 0);
	cr_expect_neq(after.st_ino, before.st_ino, "the old inode was reused");
	cr_expect_eq(after.st_mode & 07777, 0600);
	/* Whoever held the old file open reads the old bytes, not the trace. */
	cr_expect_eq(pread(held, buf, sizeof(buf) - 1, 0), 3);
	cr_expect_str_eq(buf, "old");
	close(held);
	cr_expect_eq(output_file__close(f), 0);
	expect_content(path, "new");
}

Test(output_file, links_are_refused_and_their_targets_untouched)
{
	char target[128], sub[128], via[160];

	snprintf(target, sizeof(target), "%s/rootfile", dir);
	put(target, "precious", 0644);
	cr_assert_eq(symlink(target, path), 0);
	expect_refused(path, ELOOP, "symbolic link");
	expect_untouched(target, "precious", 0, 0644);

	/* A link on the way: dir/sub -> dir, then dir/sub/new.trace. */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	cr_assert_eq(symlink(dir, sub), 0);
	snprintf(via, sizeof(via), "%s/new.trace", sub);
	expect_refused(via, ELOOP, "symbolic link");
	snprintf(via, sizeof(via), "%s/new.trace", dir);
	cr_expect_neq(access(via, F_OK), 0, "a file was created through the link");
}

Test(output_file, another_users_file_is_not_taken_and_the_invokers_is)
{
	struct output_file *f;
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("chown needs root");
	put(path, "his", 0666);
	cr_assert_eq(chown(path, OTHER_UID, OTHER_UID), 0, "chown: %s", strerror(errno));
	expect_refused(path, EPERM, "another user");
	expect_untouched(path, "his", OTHER_UID, 0666);

	/* Under sudo by that user, his file is replaced, and the new one is his. */
	f = output_file__open(path, OTHER_UID, OTHER_UID + 1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_uid, OTHER_UID);
	cr_expect_eq(st.st_gid, OTHER_UID + 1);
	cr_expect_eq(st.st_mode & 07777, 0600);
	output_file__close(f);
}

Test(output_file, devices_are_written_as_they_are_and_directories_refused)
{
	struct output_file *f = output_file__open("/dev/null", ROOT_RUN, (gid_t)-1, why, sizeof(why));

	cr_assert_not_null(f, "%s", why);
	write_all(f, "nothing");
	output_file__close(f);
	cr_expect_null(output_file__open(dir, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, EISDIR);
	cr_expect_null(output_file__open("/proc/self", ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_null(output_file__open("/proc/nope/x", ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, ENOENT);
}

/* A prepared file is at its path only once published: before, whatever was there stays, and a
 * recording that never started leaves nothing (no file, no hidden temp). */
Test(output_file, a_prepared_file_takes_the_path_only_when_published)
{
	struct output_file *f;
	struct stat st;

	put(path, "old", 0644);
	f = output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	write_all(f, "new");
	expect_untouched(path, "old", 0, 0644);
	cr_expect_eq(output_file__close(f), 0);
	expect_untouched(path, "old", 0, 0644);
	expect_no_leftovers();

	unlink(path);
	f = output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	cr_expect_neq(lstat(path, &st), 0, "a prepared file is at the path before publish");
	cr_expect_eq(output_file__close(f), 0);
	cr_expect_neq(lstat(path, &st), 0, "a start that failed left a file");
	expect_no_leftovers();

	f = output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	write_all(f, "trace");
	cr_assert_eq(output_file__publish(f, why, sizeof(why)), 0, "%s", why);
	expect_content(path, "trace");
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600);
	/* Published: the recording's from here on, as after output_file__open. */
	expect_refused(path, EBUSY, "another recording");
	cr_expect_eq(output_file__close(f), 0);
	expect_content(path, "trace");
	expect_no_leftovers();
}

/* The checks are made at once, so a bad path fails before anything is loaded, and again at
 * publish: a link put at the path while the programs loaded is not written through. */
Test(output_file, a_prepared_path_is_checked_before_and_when_published)
{
	char target[128];
	struct output_file *f;

	snprintf(target, sizeof(target), "%s/rootfile", dir);
	put(target, "precious", 0644);
	cr_assert_eq(symlink(target, path), 0);
	cr_expect_null(output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why)));
	cr_expect_eq(errno, ELOOP);
	cr_assert_eq(unlink(path), 0);

	f = output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	cr_assert_eq(symlink(target, path), 0);
	cr_expect_eq(output_file__publish(f, why, sizeof(why)), -ELOOP);
	cr_expect(strstr(why, "symbolic link"), "why: %s", why);
	output_file__close(f);
	expect_untouched(target, "precious", 0, 0644);
	expect_no_leftovers();
}

/* output_file__rewrite's copies: the file's bytes upper-cased, or a failure. */
static int upper_copy(void *ctx, int in, int out, char *why_, size_t len)
{
	char buf[64];
	ssize_t n = read(in, buf, sizeof(buf));

	(void)ctx, (void)why_, (void)len;
	for (ssize_t i = 0; i < n; i++)
		buf[i] = (char)(buf[i] >= 'a' && buf[i] <= 'z' ? buf[i] - 32 : buf[i]);
	return n > 0 && write(out, buf, (size_t)n) == n ? 0 : -EIO;
}

static int failed_copy(void *ctx, int in, int out, char *why_, size_t len)
{
	(void)ctx, (void)in;
	cr_assert_eq(write(out, "half", 4), 4);
	snprintf(why_, len, "the copy failed");
	return -EIO;
}

/* A recording's file made anew (a go1.23 file with the JIT names found at the stop): the copy is
 * at the path, 0600 and the same owner's, locked, and the file from then on; a copy that fails
 * leaves the file as it was and nothing beside it. */
Test(output_file, a_rewrite_puts_the_copy_at_the_path_or_leaves_the_file)
{
	struct output_file *f = output_file__open(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	struct stat st;

	cr_assert_not_null(f, "%s", why);
	write_all(f, "trace");
	cr_assert_eq(output_file__publish(f, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(output_file__rewrite(f, failed_copy, NULL, why, sizeof(why)), -EIO);
	cr_expect(strstr(why, path + strlen(dir) + 1) && strstr(why, "the copy failed"), "%s", why);
	expect_content(path, "trace");
	expect_no_leftovers();
	cr_assert_eq(output_file__rewrite(f, upper_copy, NULL, why, sizeof(why)), 0, "%s", why);
	expect_content(path, "TRACE");
	expect_0600_locked(path);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_uid, geteuid());
	write_all(f, "!");	/* the copy is the file written from now on */
	expect_content(path, "TRACE!");
	cr_expect_eq(output_file__close(f), 0);
	expect_no_leftovers();
}

/* A flight recorder's file made anew before it is published (its go1.23 window with the JIT
 * names found when it is written): the path keeps what it had until the copy is published; a
 * copy that fails leaves the prepared file as it was; a copy taken away leaves nothing. */
Test(output_file, a_rewrite_of_a_prepared_file_is_what_is_published)
{
	struct output_file *f;

	put(path, "old", 0644);
	f = output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	write_all(f, "window");
	cr_expect_eq(output_file__rewrite(f, failed_copy, NULL, why, sizeof(why)), -EIO);
	cr_assert_eq(output_file__rewrite(f, upper_copy, NULL, why, sizeof(why)), 0, "%s", why);
	expect_untouched(path, "old", 0, 0644);
	cr_assert_eq(output_file__publish(f, why, sizeof(why)), 0, "%s", why);
	expect_content(path, "WINDOW");
	expect_0600_locked(path);
	cr_expect_eq(output_file__close(f), 0);
	expect_no_leftovers();

	unlink(path);
	f = output_file__prepare(path, ROOT_RUN, (gid_t)-1, why, sizeof(why));
	cr_assert_not_null(f, "%s", why);
	write_all(f, "window");
	cr_assert_eq(output_file__rewrite(f, upper_copy, NULL, why, sizeof(why)), 0, "%s", why);
	output_file__remove(f);
	cr_expect_neq(access(path, F_OK), 0, "a file taken away is at the path");
	expect_no_leftovers();
}
