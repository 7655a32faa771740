/* diskfull.c - a disk that fills up mid-recording: the recorder says so in one line and
 * exits non-zero, and the file it leaves is a trace both Go parsers and both viewers open, no
 * repair needed: the writer stops before a write the disk cannot take while a reserve of
 * blocks it allocated still holds what closes the trace (format/go119/close.h), even when someone
 * else took the disk's last byte. The disk is a tmpfs mounted for the test only. */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"

static char dir[64];
static bool mounted;

static void diskfull_fini(void)
{
	char path[128];

	itest_fini();
	if (mounted) {
		snprintf(path, sizeof(path), "%s/trace", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/filler", dir);
		unlink(path);
		umount2(dir, MNT_DETACH);
		mounted = false;
	}
	if (dir[0])
		rmdir(dir);
	dir[0] = '\0';
}

TestSuite(diskfull, .fini = diskfull_fini, .timeout = 120);

static void mount_disk(const char *size, char *path, size_t len)
{
	char opts[32];

	itest_require_root();
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-test-XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(opts, sizeof(opts), "size=%s", size);
	cr_assert_eq(mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts), 0,
		     "mount tmpfs on %s: %s", dir, strerror(errno));
	mounted = true;
	snprintf(path, len, "%s/trace", dir);
}

/* The recorder stopped on ENOSPC: its last line on stderr says so, naming the file; the file
 * opens in both parsers and both viewers as it is, tells in a log event what was lost, and
 * leaves `lxtrace repair` nothing to do. */
static void expect_closed_file(const char *path)
{
	const char *argv[] = { record__build_path("lxtrace"), "repair", path, NULL };
	char why[4096], *out = NULL;
	const char *err, *last;
	struct gt_trace *t;
	struct stat st;
	size_t notes = 0;
	int rc;

	err = recorder__stderr(it.rec);
	last = err + strlen(err);
	while (last > err && last[-1] == '\n')
		last--;
	while (last > err && last[-1] != '\n')
		last--;
	cr_assert(strstr(last, path) && strstr(last, strerror(ENOSPC)) && strstr(last, "closed"),
		  "last line of stderr does not name %s, ENOSPC and the closing:\n%s", path, err);

	cr_assert_eq(stat(path, &st), 0, "the trace file is gone");
	cr_assert_gt(st.st_size, GT_HEADER_LEN, "only the header was written");
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "file left at %lld bytes: %s",
		  (long long)st.st_size, why);
	cr_assert(goparse_views_ok(path, why, sizeof(why)), "file left at %lld bytes: %s",
		  (long long)st.st_size, why);
	cr_assert_eq(gt_trace__load(path, &t, why, sizeof(why)), 0, "%s", why);
	for (size_t i = 0; i < gt_trace__nevents(t); i++) {
		const struct gt_event *e = &gt_trace__events(t)[i];

		notes += e->type == GT_EV_USER_LOG && memmem(e->msg, e->msg_len, "events not written", 18);
	}
	gt_trace__free(t);
	cr_assert_eq(notes, 1, "the file says %zu times what it lost", notes);
	rc = run_capture(argv, 60, &out, NULL);
	cr_assert(rc == 0 && out && strstr(out, "nothing to do"), "lxtrace repair: exit %d: %s", rc,
		  out ? out : "");
	free(out);
}

Test(diskfull, enospc_mid_recording_leaves_a_closed_file)
{
	char path[128];

	mount_disk("256k", path, sizeof(path));
	itest_start((const char *[]){ "-o", path, NULL });
	itest_run("stress", (const char *[]){ "1000", "2", "4", NULL }, 30);
	itest_stop(SIGINT, 1);
	expect_closed_file(path);
}

/* Another process takes every byte the disk has left while the recorder writes. */
Test(diskfull, a_disk_with_no_byte_left)
{
	static char block[4096];
	char path[128], filler[128];
	struct stat st;
	long filled = 0;
	int fd;

	mount_disk("2m", path, sizeof(path));
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	itest_start((const char *[]){ "-o", path, NULL });
	it.wl = workload__start("stress", (const char *[]){ "10000", "2", "4", NULL });
	cr_assert(it.wl, "cannot start the load: %s", strerror(errno));
	/* Once the trace has some batches, fill the disk to its last byte. */
	for (int i = 0; i < 100 && (stat(path, &st) || st.st_size < 200 * 1024); i++)
		usleep(50 * 1000);
	fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0, "%s: %s", filler, strerror(errno));
	for (ssize_t n; (n = write(fd, block, sizeof(block))) > 0;)
		filled += n;
	for (ssize_t n; (n = write(fd, block, 1)) > 0;)
		filled += n;
	cr_assert_eq(errno, ENOSPC, "filling the disk: %s", strerror(errno));
	close(fd);
	cr_log_info("the filler took the disk's last %ld bytes", filled);
	/* The recorder writes on into the blocks it allocated ahead (up to 1 MiB), then stops
	 * by itself. */
	cr_assert_eq(recorder__stop(it.rec, 0, 30), 0);
	cr_assert_eq(recorder__status(it.rec), 1, "recorder exited with status %d; stderr:\n%s",
		     recorder__status(it.rec), recorder__stderr(it.rec));
	workload__free(it.wl);
	it.wl = NULL;
	expect_closed_file(path);
}
