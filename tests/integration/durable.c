/* durable.c - every file lxtrace writes is on the disk whole before its name points at it, and
 * a write that fails leaves the old file (or none) and names its errno. What strace sees each
 * command do is the truth of the order: the data synced (fdatasync) before the rename that puts
 * the file at its path, the directory synced (fsync) after it. */
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"

TestSuite(durable, .fini = itest_fini, .timeout = 120);

/* Runs lxtrace ARGS under strace, which logs the calls that order a file's way to the disk
 * into log; the exit code. */
static int traced_run(const char *const *args, const char *log, char **err)
{
	const char *argv[24] = { "/usr/bin/strace", "-f", "-qq", "-o", log, "-e",
				 "trace=fdatasync,fsync,rename,renameat,renameat2",
				 record__build_path("lxtrace") };
	size_t n = 8;

	for (; *args && n < 23; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return run_capture(argv, 60, NULL, err);
}

/* Positions in the strace log: the first fdatasync, the rename onto name, the fsync after it. */
static void expect_synced_then_renamed(const char *log, const char *name)
{
	char line[512];
	long sync_at = -1, rename_at = -1, dir_at = -1, i = 0;
	FILE *f = fopen(log, "r");

	cr_assert(f, "%s: %s", log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "fdatasync(") && sync_at < 0 && !strstr(line, "= -1"))
			sync_at = i;
		else if (strstr(line, "rename") && strstr(line, name) && rename_at < 0)
			rename_at = i;
		else if (strstr(line, "fsync(") && rename_at >= 0 && dir_at < 0)
			dir_at = i;
		i++;
	}
	fclose(f);
	cr_expect_geq(sync_at, 0, "no fdatasync of the file");
	cr_expect_gt(rename_at, sync_at, "the file was put at its name before its data was synced");
	cr_expect_gt(dir_at, rename_at, "the directory was not synced after the rename");
}

Test(durable, repair_cut_and_pprof_sync_before_the_rename)
{
	char out[64], log[64], *err = NULL;
	const char *base;
	int rc;

	itest_record(NULL, "sleeper", (const char *[]){ "20", NULL }, 30);
	cr_assert_eq(record__tmpfile(out, sizeof(out), ".out"), 0);
	cr_assert_eq(record__tmpfile(log, sizeof(log), ".strace"), 0);
	base = strrchr(out, '/') + 1;
	rc = traced_run((const char *[]){ "repair", recorder__path(it.rec), "-o", out, NULL }, log,
			&err);
	cr_assert_eq(rc, 0, "repair: exit %d: %s", rc, err ? err : "");
	expect_synced_then_renamed(log, base);
	free(err);
	err = NULL;
	rc = traced_run((const char *[]){ "cut", recorder__path(it.rec), "--from", "0", "-o", out,
					  NULL }, log, &err);
	cr_assert_eq(rc, 0, "cut: exit %d: %s", rc, err ? err : "");
	expect_synced_then_renamed(log, base);
	free(err);
	err = NULL;
	rc = traced_run((const char *[]){ "pprof", "--offcpu", recorder__path(it.rec), "-o", out,
					  NULL }, log, &err);
	cr_assert_eq(rc, 0, "pprof: exit %d: %s", rc, err ? err : "");
	expect_synced_then_renamed(log, base);
	free(err);
	unlink(out);
	unlink(log);
}

/* The recorder's own file: synced before the summary says it is written. */
Test(durable, the_recording_is_synced_before_it_ends)
{
	char out[64], log[64], *err = NULL;
	FILE *f;
	char line[512];
	bool synced = false;
	int rc;

	itest_require_root();
	cr_assert_eq(record__tmpfile(out, sizeof(out), ".trace"), 0);
	cr_assert_eq(record__tmpfile(log, sizeof(log), ".strace"), 0);
	rc = traced_run((const char *[]){ "record", "-o", out, "--", "true", NULL }, log, &err);
	cr_assert_eq(rc, 0, "record: exit %d: %s", rc, err ? err : "");
	f = fopen(log, "r");
	cr_assert(f);
	/* The last fdatasync is the file's, after the data: at the start it was published empty. */
	while (fgets(line, sizeof(line), f))
		synced |= strstr(line, "fdatasync(") && !strstr(line, "= -1");
	fclose(f);
	cr_expect(synced, "the recording's file was never synced");
	free(err);
	unlink(out);
	unlink(log);
}

/* A full output (/dev/full: ENOSPC on every write) is named for what it is, not EIO. */
Test(durable, a_full_output_says_enospc)
{
	char cmd[512], *err = NULL;
	int rc;

	itest_record(NULL, "sleeper", (const char *[]){ "20", NULL }, 30);
	snprintf(cmd, sizeof(cmd), "exec %s pprof --offcpu --folded %s >/dev/full",
		 record__build_path("lxtrace"), recorder__path(it.rec));
	rc = run_capture((const char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, NULL, &err);
	cr_expect_neq(rc, 0, "pprof to a full output exited 0");
	cr_expect(err && strstr(err, strerror(ENOSPC)), "pprof did not say ENOSPC: %s",
		  err ? err : "");
	free(err);
}
