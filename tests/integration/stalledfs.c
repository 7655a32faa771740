/* stalledfs.c - a program runs from a FUSE filesystem whose server then stops answering
 * (tests/workloads/stallfs): issue 23's "a stalled filesystem freezes it". Every page of the
 * program is in memory and it spins on; the first read of its file that is not (lxtrace's,
 * to symbolize its samples or compile its unwind rows) waits for the server, forever. Such a
 * read happens in the file worker (lib/file_worker.h): the recording ends on time, exits 0,
 * writes a file both parsers take, and names the file in its summary, whether the server
 * stalls reads or opens (an open the server took outlasts even SIGKILL: the worker process,
 * not lxtrace, is left waiting), or fails them.
 *
 * Whole-machine recordings see the program too: so the stall lasts one recording, and the
 * teardown kills the server first (which ends every wait on its files), then the program, and
 * unmounts.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/integration/itest.h"

/* Before the file worker a recording beside a stalled filesystem never ended: one that does
 * not end in this long is stalled. How soon it ends is bench/load.sh's to measure. */
#define STOP_TIMEOUT_S 30

static char dir[64], mnt[96], prog[128];
static struct workload *fs, *spin;

static void fs_fini(void)
{
	char cmd[128];

	workload__free(fs);	/* SIGKILL: the kernel fails every request it leaves */
	fs = NULL;
	itest_fini();
	workload__free(spin);
	spin = NULL;
	if (mnt[0])
		umount2(mnt, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[0] && system(cmd))
		fprintf(stderr, "stalledfs: cannot remove %s\n", dir);
	dir[0] = mnt[0] = '\0';
}

TestSuite(stalledfs, .fini = fs_fini, .timeout = 120);

/* Serves a copy of hotspin from a new FUSE mount, whose requests `op` ("open" or "read") stall
 * on SIGUSR1 and fail on SIGUSR2, runs it from there, and lets it spin a little. */
static void serve_and_run(const char *op)
{
	const char *cp[] = { "/bin/cp", record__workload_path("hotspin"), NULL, NULL };
	char copy[96];
	struct stat st;
	int i;

	itest_require_root();
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(copy, sizeof(copy), "%s/hotspin", dir);
	cp[2] = copy;
	cr_assert_eq(run_capture(cp, 10, NULL, NULL), 0, "cannot copy hotspin to %s", copy);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	fs = workload__start("stallfs", (const char *[]){ copy, mnt, op, NULL });
	cr_assert(fs, "cannot start stallfs: %s", strerror(errno));
	snprintf(prog, sizeof(prog), "%s/hotspin", mnt);
	for (i = 0; i < 100 && stat(prog, &st); i++)
		usleep(50 * 1000);
	cr_assert_lt(i, 100, "stallfs did not serve %s (needs /dev/fuse)", prog);
	spin = workload__start(prog, (const char *[]){ "chain", "60000", NULL });
	cr_assert(spin, "cannot run %s: %s", prog, strerror(errno));
	usleep(300 * 1000);
}

/* From now on the server's `op` requests stall (SIGUSR1) or fail (SIGUSR2). */
static void switch_fs(int sig)
{
	cr_assert_eq(kill(workload__pid(fs), sig), 0);
}

/* Stops the recorder (sig, or 0 for its -d) and asserts it ended, exit 0, with a file both
 * parsers take. Returns its stderr. */
static const char *ended(int sig)
{
	const char *err;

	cr_assert_eq(recorder__stop(it.rec, sig, STOP_TIMEOUT_S), 0);
	err = recorder__stderr(it.rec);
	cr_assert_eq(recorder__status(it.rec), 0, "status %d (137: killed after %d s):\n%s",
		     recorder__status(it.rec), STOP_TIMEOUT_S, err);
	itest_load();
	return err;
}

static void expect_named_stalled(const char *err)
{
	char line[160];

	snprintf(line, sizeof(line), "%s: read stalled", prog);
	cr_expect(strstr(err, line), "the summary does not say \"%s\":\n%s", line, err);
}

Test(stalledfs, a_whole_machine_recording_ends_on_time_when_reads_stall)
{
	serve_and_run("read");
	switch_fs(SIGUSR1);
	itest_start((const char *[]){ "-F", "999", "-d", "3", NULL });
	expect_named_stalled(ended(0));
}

Test(stalledfs, a_recording_of_the_process_ends_on_time_when_opens_stall)
{
	char pid[16];

	serve_and_run("open");
	switch_fs(SIGUSR1);
	snprintf(pid, sizeof(pid), "%d", (int)workload__pid(spin));
	itest_start((const char *[]){ "-F", "999", "-d", "3", "-p", pid, NULL });
	expect_named_stalled(ended(0));
}

Test(stalledfs, sigint_ends_a_recording_while_reads_stall)
{
	serve_and_run("read");
	switch_fs(SIGUSR1);
	itest_start((const char *[]){ "-F", "999", NULL });
	usleep(1500 * 1000);
	expect_named_stalled(ended(SIGINT));
}

Test(stalledfs, a_recording_ends_on_time_when_reads_fail)
{
	serve_and_run("read");
	switch_fs(SIGUSR2);
	itest_start((const char *[]){ "-F", "999", "-d", "3", NULL });
	ended(0);
}
