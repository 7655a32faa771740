/* test_foreign_file.c - what another user can put at a path, and what lib/foreign_file.h makes
 * of it: symlinks (to /dev/zero, to a root-only file, through a directory), a FIFO with no
 * writer, hard links, someone else's file, a huge sparse file, a mount on the file; the line
 * reader's bounds; which files are used in place rather than copied. Each case runs in a fresh directory; the mount case needs root. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "tests/lib/tfile.h"

#define OTHER_UID 61234

static char dir[64];
static int dfd = -1;
static bool mounted;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-foreign-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dfd, 0);
}

static void teardown(void)
{
	char cmd[128];

	if (mounted)
		umount2(dir, MNT_DETACH), umount2(dir, MNT_DETACH);
	if (dfd >= 0)
		close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[0] && system(cmd))
		fprintf(stderr, "test_foreign_file: cannot remove %s\n", dir);
	dfd = -1;
	mounted = false;
}

TestSuite(foreign_file, .init = setup, .fini = teardown, .timeout = 20);

static void put(const char *name, const char *text, mode_t mode)
{
	char path[128];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = tfile_write(path, text, mode);
	cr_assert_eq(err, 0, "create %s: %s", path, strerror(-err));
}

static int try_open(const char *name, const struct foreign_rules *r)
{
	int fd = foreign_file__open(dfd, name, r, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

static const struct foreign_rules strict = {
	.sz = sizeof(strict), .resolve = FOREIGN_RESOLVE_STRICT, .owner = OTHER_UID,
	.single_link = true, .max_bytes = 1 << 20,
};

Test(foreign_file, a_plain_file_opens_with_its_stat)
{
	struct stat st;
	int fd;

	put("map", "1000 10 f\n", 0644);
	fd = foreign_file__open(dfd, "map", &strict, &st);
	cr_assert_geq(fd, 0, "%s", foreign_file__why(fd));
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_size, 10);
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	cr_expect_eq(try_open("absent", &strict), -ENOENT);
}

Test(foreign_file, symlinks_are_refused_at_the_end_and_on_the_way)
{
	char path[128];

	put("secret", "0 ffffffff SECRET\n", 0600);
	cr_assert_eq(symlinkat("secret", dfd, "link"), 0);
	cr_assert_eq(symlinkat("/dev/zero", dfd, "zero"), 0);
	cr_assert_eq(mkdirat(dfd, "sub", 0755), 0);
	cr_assert_eq(symlinkat(".", dfd, "sub/up"), 0);
	cr_expect_eq(try_open("link", &strict), -ELOOP);
	cr_expect_eq(try_open("zero", &strict), -ELOOP);
	cr_expect_eq(try_open("sub/up/secret", &strict), -ELOOP);
	/* The final component is never followed, with no resolve flags at all either. */
	cr_expect_eq(try_open("link", &(struct foreign_rules){ .sz = sizeof(struct foreign_rules) }), -ELOOP);
	/* Strict rules keep the path below dirfd. */
	snprintf(path, sizeof(path), "%s/secret", dir);
	cr_expect_eq(try_open(path, &strict), -EXDEV);
	cr_expect_eq(try_open("../secret", &strict), -EXDEV);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

Test(foreign_file, a_fifo_without_writer_is_refused_at_once)
{
	double t0;

	cr_assert_eq(mkfifoat(dfd, "fifo", 0666), 0);
	t0 = now_s();
	cr_expect_eq(try_open("fifo", &strict), -ENXIO);
	cr_expect_lt(now_s() - t0, 1.0, "the open waited for a writer");
	/* A device, reached without a link, is no regular file either. */
	cr_expect_eq(foreign_file__open(AT_FDCWD, "/dev/zero", NULL, NULL), -ENXIO);
	cr_expect_eq(try_open(".", &strict), -ENXIO);
}

Test(foreign_file, owner_rule_is_root_or_the_given_user)
{
	put("mine", "x\n", 0644);
	put("theirs", "x\n", 0644);
	if (geteuid() != 0)
		cr_skip_test("chown needs root");
	cr_assert_eq(fchownat(dfd, "mine", OTHER_UID, OTHER_UID, 0), 0);
	cr_assert_eq(fchownat(dfd, "theirs", OTHER_UID + 1, OTHER_UID + 1, 0), 0);
	cr_expect_eq(try_open("mine", &strict), 0);
	cr_expect_eq(try_open("theirs", &strict), -EPERM);
	cr_expect_eq(try_open("theirs", &(struct foreign_rules){ .sz = sizeof(struct foreign_rules),
							       .owner = FOREIGN_ANY_OWNER }), 0);
}

Test(foreign_file, hard_links_and_size_bounds)
{
	char path[128];
	int fd;

	put("file", "x\n", 0644);
	cr_assert_eq(linkat(dfd, "file", dfd, "hard", 0), 0);
	cr_expect_eq(try_open("hard", &strict), -EMLINK);
	cr_expect_eq(try_open("file", &strict), -EMLINK, "both names are links to one file");

	snprintf(path, sizeof(path), "%s/sparse", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1ll << 30), 0);
	close(fd);
	cr_expect_eq(try_open("sparse", &strict), -EFBIG);
}

Test(foreign_file, a_mount_on_the_file_is_refused)
{
	char src[128], dst[128];

	if (geteuid() != 0)
		cr_skip_test("mounting needs root");
	put("real", "x\n", 0644);
	put("target", "y\n", 0644);
	snprintf(src, sizeof(src), "%s/real", dir);
	snprintf(dst, sizeof(dst), "%s/target", dir);
	cr_assert_eq(mount(src, dst, NULL, MS_BIND, NULL), 0, "bind mount: %s", strerror(errno));
	cr_expect_eq(try_open("target", &strict), -EXDEV);
	cr_expect_eq(umount2(dst, 0), 0);
}

Test(foreign_file, in_root_keeps_absolute_links_inside)
{
	struct foreign_rules in_root = { .sz = sizeof(in_root), .resolve = RESOLVE_IN_ROOT,
					 .follow = true, .owner = FOREIGN_ANY_OWNER };
	char buf[16] = "";
	int fd;

	/* In the fake root, /lib.so -> /inside; outside it, /inside does not exist. */
	put("inside", "in\n", 0644);
	cr_assert_eq(symlinkat("/inside", dfd, "lib.so"), 0);
	cr_assert_eq(symlinkat("/etc/passwd", dfd, "escape"), 0);
	cr_assert_eq(mkdirat(dfd, "usr", 0755), 0);
	cr_assert_eq(symlinkat("../../../../inside", dfd, "usr/dots"), 0);
	fd = foreign_file__open(dfd, "/lib.so", &in_root, NULL);
	cr_assert_geq(fd, 0, "%s", foreign_file__why(fd));
	cr_expect_eq(read(fd, buf, sizeof(buf) - 1), 3);
	cr_expect_str_eq(buf, "in\n");
	close(fd);
	cr_expect_eq(try_open("/escape", &in_root), -ENOENT, "an absolute link left the root");
	cr_expect_eq(try_open("usr/dots", &in_root), 0, "'..' above the root stays at the root");
	in_root.follow = false;
	cr_expect_eq(try_open("/lib.so", &in_root), -ELOOP);
}

Test(foreign_file, a_magic_link_names_the_mapped_file)
{
	struct foreign_rules magic = { .sz = sizeof(magic), .follow = true,
				       .owner = FOREIGN_ANY_OWNER };
	char path[128], line[512];
	unsigned long lo, hi;
	bool found = false;
	struct stat st, exe;
	FILE *maps;
	int fd;

	if (geteuid() != 0)
		cr_skip_test("map_files needs root");
	/* The mapping of this test's own program, as the symbolizer opens a process's binaries. */
	cr_assert_eq(stat("/proc/self/exe", &exe), 0);
	maps = fopen("/proc/self/maps", "r");
	cr_assert_not_null(maps);
	while (!found && fgets(line, sizeof(line), maps)) {
		unsigned long ino;

		found = sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &ino) == 3 && ino == exe.st_ino;
	}
	fclose(maps);
	cr_assert(found);
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", lo, hi);
	fd = foreign_file__open(AT_FDCWD, path, &magic, &st);
	cr_assert_geq(fd, 0, "%s", foreign_file__why(fd));
	cr_expect_eq(st.st_ino, exe.st_ino);
	close(fd);
	magic.follow = false;
	cr_expect_eq(foreign_file__open(AT_FDCWD, path, &magic, NULL), -ELOOP);
	magic.follow = true;
	magic.resolve = RESOLVE_NO_MAGICLINKS;
	cr_expect_eq(foreign_file__open(AT_FDCWD, path, &magic, NULL), -ELOOP);
}

struct seen {
	char text[4][32];
	uint64_t off[4];
	int n, stop_after;
};

static int collect(void *ctx, char *line, size_t len, uint64_t off)
{
	struct seen *s = ctx;

	cr_assert_eq(strlen(line), len);
	if (s->n < 4) {
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s", line);
		s->off[s->n] = off;
	}
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 1 : 0;
}

Test(foreign_file, lines_leave_an_unfinished_line_for_the_next_read)
{
	struct seen s = { 0 };
	uint64_t end = 0;
	int fd;

	put("map", "a 1 f\nbb 2 g\ncc 3 part", 0644);
	fd = foreign_file__open(dfd, "map", &strict, NULL);
	cr_assert_geq(fd, 0);
	cr_expect_eq(foreign_file__lines(fd, 0, 0, 64, collect, &s, &end), 0);
	cr_expect_eq(s.n, 2);
	cr_expect_str_eq(s.text[0], "a 1 f");
	cr_expect_str_eq(s.text[1], "bb 2 g");
	cr_expect_eq(s.off[1], 6);
	cr_expect_eq(end, 13);
	close(fd);

	/* The writer finishes its line: the next read starts there. */
	put("map", "a 1 f\nbb 2 g\ncc 3 partial\n", 0644);
	fd = foreign_file__open(dfd, "map", &strict, NULL);
	memset(&s, 0, sizeof(s));
	cr_expect_eq(foreign_file__lines(fd, end, 0, 64, collect, &s, &end), 0);
	cr_expect_eq(s.n, 1);
	cr_expect_str_eq(s.text[0], "cc 3 partial");
	cr_expect_eq(s.off[0], 13);
	cr_expect_eq(end, 26);

	/* A limit inside a line stops before it; a stop from fn is after its line. */
	memset(&s, 0, sizeof(s));
	cr_expect_eq(foreign_file__lines(fd, 0, 8, 64, collect, &s, &end), 0);
	cr_expect_eq(s.n, 1);
	cr_expect_eq(end, 6);
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	cr_expect_eq(foreign_file__lines(fd, 0, 0, 64, collect, &s, &end), 0);
	cr_expect_eq(s.n, 2);
	cr_expect_eq(end, 13);
	close(fd);
}

Test(foreign_file, an_endless_line_is_given_up_after_the_bound)
{
	struct seen s = { 0 };
	char path[128];
	uint64_t end = 1;
	int fd;

	/* A gigabyte of zeros, as a sparse file would be: given up after max_line bytes. */
	snprintf(path, sizeof(path), "%s/zeros", dir);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1ll << 30), 0);
	cr_expect_eq(foreign_file__lines(fd, 0, 0, 4096, collect, &s, &end), -E2BIG);
	cr_expect_eq(s.n, 0);
	cr_expect_eq(end, 0);
	cr_assert_eq(pwrite(fd, "ok\n", 3, 0), 3);
	cr_expect_eq(foreign_file__lines(fd, 0, 0, 4096, collect, &s, &end), -E2BIG);
	cr_expect_eq(s.n, 1);
	cr_expect_eq(end, 3);
	close(fd);
}

struct check {
	int i;
	uint64_t off;
};

static int check_line(void *ctx, char *l, size_t len, uint64_t o)
{
	struct check *c = ctx;
	int i = atoi(l);

	cr_assert_eq(i, c->i, "line %d read as %d", c->i, i);
	cr_assert_eq(o, c->off, "line %d at %llu, expected %llu", i, (unsigned long long)o,
		     (unsigned long long)c->off);
	cr_assert_eq(len, strlen(l));
	c->i++;
	c->off += len + 1;
	return 0;
}

Test(foreign_file, lines_across_chunks_keep_their_offsets)
{
	struct check c = { 0, 0 };
	char path[128], pad[151];
	uint64_t end, total = 0;
	FILE *f;
	int fd, n = 5000;

	/* Lines of changing length cross every 64 KiB chunk boundary somewhere. */
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/long", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < n; i++)
		total += (uint64_t)fprintf(f, "%d %.*s\n", i, i % 150, pad);
	fclose(f);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(foreign_file__lines(fd, 0, 0, 256, check_line, &c, &end), 0);
	cr_expect_eq(c.i, n);
	cr_expect_eq(end, total);
	close(fd);
}

/* What l prints, malloc'd. */
static char *log_text(const struct foreign_log *l)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	foreign_log__print(l, f, "  refused:");
	fclose(f);
	return text;
}

/* Before: an entry with an empty path printed "  refused: : not a regular file". */
Test(foreign_file, a_file_without_a_path_is_named_so)
{
	struct foreign_log *l = foreign_log__new(2);
	char *text;

	cr_assert_not_null(l);
	foreign_log__note(l, "", -ENXIO);
	foreign_log__note(l, NULL, -ELOOP);
	text = log_text(l);
	cr_expect_str_eq(text, "  refused: (a file without a path): not a regular file\n"
			       "  refused: (a file without a path): a symbolic link\n");
	free(text);
	foreign_log__free(l);
}

Test(foreign_file, the_log_counts_all_and_names_the_first)
{
	struct foreign_log *l = foreign_log__new(2);
	char *text;

	cr_assert_not_null(l);
	text = log_text(l);
	cr_expect_str_eq(text, "");
	free(text);
	foreign_log__note(l, "/tmp/perf-1.map", -ELOOP);
	foreign_log__note(l, "/tmp/perf-2.map", -ENXIO);
	foreign_log__note(l, "/tmp/perf-3.map", -EPERM);
	cr_expect_eq(foreign_log__count(l), 3);
	text = log_text(l);
	cr_expect_str_eq(text, "  refused: /tmp/perf-1.map: a symbolic link\n"
			       "  refused: /tmp/perf-2.map: not a regular file\n"
			       "  refused: ... and 1 more\n");
	free(text);
	foreign_log__free(l);
}

/* A file of a local filesystem is used in place only when root alone can write it; a file the
 * list does not name as local (procfs here, FUSE or NFS in life) is always copied. */
Test(foreign_file, only_a_root_file_on_a_local_filesystem_is_used_in_place)
{
	struct stat st;
	int fd, same;

	put("lib", "ELF", 0755);
	fd = foreign_file__open(dfd, "lib", NULL, &st);
	cr_assert_geq(fd, 0);
	cr_assert(foreign_file__local(fd), "%s is not local", dir);
	same = foreign_file__private(fd, &st, true, 1 << 20);
	cr_expect_eq(same, fd, "a root-only file of a local filesystem was copied");
	fd = foreign_file__private(same, &st, false, 1 << 20);
	cr_assert_geq(fd, 0);
	cr_expect_neq(fd, same, "a root-only file of a remote filesystem was used in place");
	close(fd);
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_expect_not(foreign_file__local(fd), "procfs is on the list");
	close(fd);
}

/* A copy the system writes short (here: past RLIMIT_FSIZE, with SIGXFSZ ignored, as memfd
 * writes can be) is an error, never a copy cut short taken for the file. */
Test(foreign_file, a_copy_written_short_is_an_error)
{
	char *text = malloc(200001);
	struct stat st;
	int status;
	pid_t pid;

	cr_assert(text);
	memset(text, 'x', 200000);
	text[200000] = '\0';
	put("big", text, 0644);
	free(text);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		struct rlimit lim = { 100000, 100000 };
		int fd = foreign_file__open(dfd, "big", NULL, &st), copy;

		signal(SIGXFSZ, SIG_IGN);
		if (fd < 0 || setrlimit(RLIMIT_FSIZE, &lim))
			_exit(2);
		copy = foreign_file__private(fd, &st, false, 1 << 20);
		/* 0: refused; 1: a copy of the wrong size. */
		_exit(copy < 0 ? 0 : lseek(copy, 0, SEEK_END) == 200000 ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a short copy was taken (%d)",
		  status);
}
