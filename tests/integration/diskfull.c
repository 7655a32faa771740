/* diskfull.c - a disk that fills up mid-recording: the recorder says so in one line and
 * exits non-zero, and the file it leaves is still a trace both Go parsers accept (the
 * writer's contract, format/writer.h: after a write error nothing more is written, so the
 * file stays a valid prefix). The disk is a 256 KiB tmpfs mounted for the test only. */
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
		umount2(dir, MNT_DETACH);
		mounted = false;
	}
	if (dir[0])
		rmdir(dir);
	dir[0] = '\0';
}

TestSuite(diskfull, .fini = diskfull_fini, .timeout = 120);

Test(diskfull, enospc_mid_recording_leaves_a_parsable_file)
{
	char path[128], why[4096];
	const char *err, *last;
	struct stat st;

	itest_require_root();
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-test-XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=256k"), 0,
		     "mount tmpfs on %s: %s", dir, strerror(errno));
	mounted = true;
	snprintf(path, sizeof(path), "%s/trace", dir);

	itest_start((const char *[]){ "-o", path, NULL });
	itest_run("stress", (const char *[]){ "1000", "2", "4", NULL }, 30);
	itest_stop(SIGINT, 1);

	/* The last line on stderr is the error, naming the file and the cause. */
	err = recorder__stderr(it.rec);
	last = err + strlen(err);
	while (last > err && last[-1] == '\n')
		last--;
	while (last > err && last[-1] != '\n')
		last--;
	cr_assert(strstr(last, path) && strstr(last, strerror(ENOSPC)),
		  "last line of stderr does not name %s and ENOSPC:\n%s", path, err);

	cr_assert_eq(stat(path, &st), 0, "the trace file is gone");
	cr_assert_gt(st.st_size, GT_HEADER_LEN, "only the header was written");
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "file left at %lld bytes: %s",
		  (long long)st.st_size, why);
}
