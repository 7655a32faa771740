/* lifecycle.c - every way a recording ends leaves a file both Go parsers accept and no BPF
 * program behind: SIGTERM, the -d duration, and even SIGKILL (what was written by then is a
 * prefix ending on a batch boundary, which the writer keeps valid); one that never started
 * leaves nothing. */
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"
#include "tests/lib/tcgroup.h"
#include "tests/lib/tfile.h"

TestSuite(lifecycle, .fini = itest_fini, .timeout = 120);

Test(lifecycle, sigterm_stops_cleanly)
{
	itest_start(NULL);
	itest_run("sleeper", (const char *[]){ "5", NULL }, 30);
	itest_stop(SIGTERM, 0);
	cr_assert(strstr(recorder__stderr(it.rec), "records lost:"), "no summary after SIGTERM:\n%s",
		  recorder__stderr(it.rec));
	itest_load();
}

/* A closed terminal or SSH session sends SIGHUP: the recording ends as at Ctrl-C, with its
 * summary and a whole file. Before: killed by it, status 129, no summary, a file the 1.19
 * viewer could not open until `repair`. */
Test(lifecycle, sighup_stops_cleanly)
{
	char why[4096];

	itest_start(NULL);
	itest_run("sleeper", (const char *[]){ "5", NULL }, 30);
	itest_stop(SIGHUP, 0);
	cr_assert(strstr(recorder__stderr(it.rec), "records lost:"), "no summary after SIGHUP:\n%s",
		  recorder__stderr(it.rec));
	itest_load();
	cr_assert(goparse_views_ok(recorder__path(it.rec), why, sizeof(why)), "%s", why);
}

Test(lifecycle, duration_ends_the_recording)
{
	const struct gt_event *ev;
	size_t n;
	double span;

	itest_start((const char *[]){ "-d", "1", NULL });
	itest_run("sleeper", (const char *[]){ "5", NULL }, 30);
	itest_stop(0, 0);
	itest_load();
	ev = gt_trace__events(it.trace);
	n = gt_trace__nevents(it.trace);
	cr_assert_gt(n, 1, "empty trace");
	span = tq_ns(it.trace, ev[0].ts, ev[n - 1].ts) / 1e9;
	cr_assert(span >= 0.9 && span <= 10, "a 1 s recording spans %.3f s", span);
}

Test(lifecycle, sigkill_leaves_a_parsable_prefix)
{
	struct stat st;

	itest_start(NULL);
	/* Enough load to fill many batches before the kill. */
	itest_run("stress", (const char *[]){ "1500", "2", "4", NULL }, 30);
	itest_stop(SIGKILL, 128 + SIGKILL);
	cr_assert_eq(stat(recorder__path(it.rec), &st), 0, "no trace file");
	cr_assert_gt(st.st_size, GT_HEADER_LEN, "nothing written but the header after 1.5 s of load");
	itest_load();
}

/* A quiet machine fills no batch buffer for many seconds; the recorder writes what it has
 * every second (FLUSH_PERIOD_NS), so a kill -9 loses at most the last one. Before: a 3 s
 * recording of a sleeper killed so was its 16-byte header. */
Test(lifecycle, sigkill_on_a_quiet_machine_keeps_all_but_the_last_second)
{
	const struct gt_event *ev;
	size_t n, sleeps = 0;
	char sleeper[4096];

	/* As a command, so that nothing else the machine runs fills the buffers. */
	snprintf(sleeper, sizeof(sleeper), "%s", record__build_path("tests/workloads/sleeper"));
	itest_start((const char *[]){ "--", sleeper, "300", NULL });
	usleep(3000 * 1000);
	itest_stop(SIGKILL, 128 + SIGKILL);
	itest_load();
	ev = gt_trace__events(it.trace);
	n = gt_trace__nevents(it.trace);
	for (size_t i = 0; i < n; i++)
		sleeps += ev[i].type == GT_EV_GO_SLEEP;
	cr_log_info("killed after 3 s: %zu events, %zu sleeps of the sleeper (10 ms each)", n,
		    sleeps);
	/* Written at least up to 1.x s before the kill: over 100 of its sleeps. */
	cr_assert_geq(sleeps, 100, "only %zu sleeps of 10 ms in the file of a 3 s recording",
		      sleeps);
}

/* What the recording writes to or records from, removed under it, is said at once: the
 * trace's directory (what is written goes nowhere), the cgroup recorded. Before: nothing. */
Test(lifecycle, a_removed_output_directory_or_cgroup_is_said)
{
	char dir[] = "/tmp/lxtrace-gone-XXXXXX", path[64], cgroup[640], cmd[96];
	int err;

	itest_require_root();
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.trace", dir);
	itest_start((const char *[]){ "-o", path, NULL });
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	usleep(1500 * 1000);
	itest_stop(SIGINT, 0);
	cr_expect(strstr(recorder__stderr(it.rec), "was removed while recording"), "%s",
		  recorder__stderr(it.rec));
	itest_fini();

	err = tcgroup_make(cgroup, sizeof(cgroup));
	if (err == -ENOENT)
		cr_skip_test("no cgroup2 mount");
	cr_assert_eq(err, 0, "cannot make a cgroup: %s", strerror(-err));
	itest_start((const char *[]){ "--cgroup", cgroup, NULL });
	err = tcgroup_remove(cgroup);
	cr_assert_eq(err, 0, "cannot remove %s: %s", cgroup, strerror(-err));
	usleep(1500 * 1000);
	itest_stop(SIGINT, 0);
	cr_expect(strstr(recorder__stderr(it.rec), "was removed: no thread is left"), "%s",
		  recorder__stderr(it.rec));
}

/* A recording that fails to start (here: an annotation file without probes, refused after the
 * programs loaded) leaves the path as it was: an earlier trace untouched, no file where there
 * was none, no hidden temp beside it. */
Test(lifecycle, a_failed_start_leaves_the_path_as_it_was)
{
	char dir[] = "/tmp/lxtrace-start-XXXXXX", path[64], cmd[128], buf[32] = "";
	const char *argv[] = { record__build_path("lxtrace"), "record", "-o", path, "-d", "1",
			       "--usdt", "/bin/true", NULL };
	struct stat st;
	int fd, status;

	itest_require_root();
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/old.trace", dir);
	cr_assert_eq(tfile_write(path, "an earlier trace", 0644), 0);
	status = run_capture(argv, 60, NULL, NULL);
	cr_expect_eq(status, 1, "lxtrace record --usdt /bin/true: status %d", status);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "the earlier trace is gone");
	cr_expect_gt(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	cr_expect_str_eq(buf, "an earlier trace");

	snprintf(path, sizeof(path), "%s/new.trace", dir);
	status = run_capture(argv, 60, NULL, NULL);
	cr_expect_eq(status, 1);
	cr_expect_neq(lstat(path, &st), 0, "a failed start left %s", path);
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -q lxtrace-record", dir);
	cr_expect_neq(system(cmd), 0, "a temp file was left in %s", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/* --ready-fd, as a script uses it: the line is read from a FIFO, the command run right after it
 * is in the trace from its exec. Before, scripts watched stderr for "recording". */
Test(lifecycle, a_script_reading_the_ready_fd_records_what_it_runs_next)
{
	static const char script[] =
		"set -e\n"
		"d=$(mktemp -d)\n"
		"mkfifo \"$d/ready\"\n"
		"\"$0\" record -o \"$1\" --ready-fd 3 3>\"$d/ready\" 2>/dev/null &\n"
		"rec=$!\n"
		"read -r line <\"$d/ready\"\n"
		"rm -r \"$d\"\n"
		"echo \"ready: $line\"\n"
		"\"$2\" 1\n"
		"kill -INT $rec\n"
		"wait $rec\n";
	char path[64], prog[4096], *out = NULL, *err = NULL;
	int rc, status;
	pid_t pid;

	itest_require_root();
	rc = record__tmpfile(path, sizeof(path), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	snprintf(prog, sizeof(prog), "%s", record__workload_path("sleeper"));
	status = run_capture((const char *[]){ "/bin/sh", "-c", script, record__build_path("lxtrace"),
					       path, prog, NULL }, 60, &out, &err);
	cr_expect_eq(status, 0, "the script: status %d, stderr:\n%s", status, err ? err : "");
	cr_expect(out && strstr(out, "ready: ready\n"), "the script did not read the line:\n%s",
		  out ? out : "");
	it.wl = workload__from_output(out, status);
	free(out);
	free(err);
	cr_assert(it.wl, "reading the workload's report: %s", strerror(errno));
	pid = workload__pid(it.wl);
	itest_load_file(path);
	unlink(path);
	cr_assert_eq(tq_count_created(it.trace, pid, itest_program("sleeper")), 1,
		     "the sleeper run after the ready line (pid %d): no goroutine of its exec", pid);
}

/* README's first command ends in `make demo`: its trace must hold the workloads it runs. The
 * script started them 0.5 s after the recorder; on a freshly booted machine the recorder's
 * first start took longer, and demo.trace held none of them. */
Test(lifecycle, the_demo_trace_holds_its_workloads)
{
	static const char *const progs[] = { "pingpong", "sleeper", "futex_contend" };
	char path[64], *out = NULL, *err = NULL;
	int rc, status;

	itest_require_root();
	rc = record__tmpfile(path, sizeof(path), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	status = run_capture((const char *[]){ "/bin/bash", "scripts/demo.sh",
					       record__build_path("lxtrace"), path, NULL },
			     60, &out, &err);
	cr_expect_eq(status, 0, "scripts/demo.sh: status %d, stderr:\n%s", status, err ? err : "");
	free(out);
	free(err);
	itest_load_file(path);
	unlink(path);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		cr_expect_geq(tq_count_created(it.trace, TQ_ANY_THREAD, itest_program(progs[i])), 1,
			      "demo.trace has no thread of %s", progs[i]);
	cr_expect_eq(tq_count_frame(it.trace, TQ_BIT(GT_EV_GO_SLEEP), TQ_ANY_THREAD, "sleeper"), 20,
		     "the sleeper's 20 sleeps are not all in demo.trace");
}
