/* dump.c - `lxtrace dump` prints every event of a real recording, one line each (stack
 * frames indented below), and exits 0; it refuses endless garbage at its first bad byte, in
 * constant memory. A go1.23 file is dumped (from a file and from a pipe), repaired and cut
 * by the same commands. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/integration/itest.h"
#include "tests/lib/go123story.h"

TestSuite(dump, .fini = itest_fini, .timeout = 120);

Test(dump, prints_every_event_of_a_recording)
{
	const char *argv[] = { NULL, "dump", NULL, NULL };
	size_t lines = 0, sleeps = 0;
	char *out = NULL, *err = NULL;
	int status;

	itest_record(NULL, "sleeper", (const char *[]){ "3", NULL }, 30);
	argv[0] = record__build_path("lxtrace");
	argv[2] = recorder__path(it.rec);
	status = run_capture(argv, 60, &out, &err);
	cr_assert_eq(status, 0, "lxtrace dump exited %d: %s", status, err ? err : "");
	for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (*l != ' ' && *l != '\n')
			lines++;
	}
	cr_assert_eq(lines, gt_trace__nevents(it.trace), "dump printed %zu event lines for %zu events",
		     lines, gt_trace__nevents(it.trace));
	for (char *l = out; l && (l = strstr(l, " GoSleep")); l++)
		sleeps++;
	cr_assert_geq(sleeps, 3, "dump shows %zu GoSleep, the workload slept 3 times", sleeps);
	free(out);
	free(err);
}

/* Runs `lxtrace dump path`, its output thrown away but its last stderr line kept in err;
 * returns its exit status, its peak resident memory in KiB (*rss_kib) and how long it took. */
static int dump_rusage(const char *path, long *rss_kib, double *secs, char *err, size_t errlen)
{
	char errfile[64];
	struct rusage ru;
	struct timespec a, b;
	int status, fd, rc;
	pid_t pid;
	ssize_t n;

	rc = record__tmpfile(errfile, sizeof(errfile), ".err");
	cr_assert_eq(rc, 0, "temp file: %s", strerror(-rc));
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		int out = open("/dev/null", O_WRONLY), e = open(errfile, O_WRONLY | O_TRUNC);

		dup2(out, STDOUT_FILENO);
		dup2(e, STDERR_FILENO);
		execl(record__build_path("lxtrace"), "lxtrace", "dump", path, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*secs = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	*rss_kib = ru.ru_maxrss;
	fd = open(errfile, O_RDONLY);
	n = fd >= 0 ? read(fd, err, errlen - 1) : -1;
	err[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(errfile);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Issue 12: 2 GB of zeros after a valid header took 2.1 GB and 12.8 s to be refused, and
 * /dev/zero was OOM-killed; Go's parser refuses both in 0.06 s with 9 MB. The file is sparse,
 * so making it costs nothing. Time is printed, not asserted (bench/readers.sh measures it). */
Test(dump, endless_zeros_are_refused_in_constant_memory)
{
	const char *inputs[] = { NULL, "/dev/zero" };
	char path[64], err[512];
	double secs;
	long rss;
	int fd, rc;

	rc = record__tmpfile(path, sizeof(path), ".trace");
	cr_assert_eq(rc, 0, "temp file: %s", strerror(-rc));
	fd = open(path, O_WRONLY);
	cr_assert(fd >= 0 && write(fd, GT_HEADER, GT_HEADER_LEN) == GT_HEADER_LEN);
	cr_assert_eq(ftruncate(fd, GT_HEADER_LEN + (2ll << 30)), 0);
	close(fd);
	inputs[0] = path;
	for (size_t i = 0; i < 2; i++) {
		rc = dump_rusage(inputs[i], &rss, &secs, err, sizeof(err));
		cr_log_info("lxtrace dump %s: exit %d in %.3f s, peak RSS %ld KiB: %s", inputs[i], rc,
			    secs, rss, err);
		cr_expect_eq(rc, 1, "%s: exit status %d", inputs[i], rc);
		cr_expect(strstr(err, i ? "offset 0: not a go1.19 trace" : "offset 16: unknown event"),
			  "%s: %s", inputs[i], err);
		cr_expect_lt(rss, 50 * 1024, "%s: peak RSS %ld KiB", inputs[i], rss);
	}
	unlink(path);
}

/* Event lines (not indented frames) of a dump. */
static size_t event_lines(const char *out)
{
	size_t lines = 0;

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		lines += *l != ' ' && *l != '\n';
	return lines;
}

static void go123_takes(const char *path)
{
	struct goparse_result r;

	cr_assert_eq(goparse_123(path, &r), 0);
	cr_assert(r.ok, "go 1.23 trace -d=1 %s: %s", path, r.error);
}

Test(dump, go123_files_dumped_repaired_and_cut)
{
	const char *lx = record__build_path("lxtrace");
	char path[64], cut[80], pipe_cmd[256], why[256], err[512];
	struct go123_writer_stats st;
	char *out = NULL, *errs = NULL;
	double secs;
	long rss;
	int status, fd;

	cr_assert_eq(record__tmpfile(path, sizeof(path), ".trace"), 0);
	snprintf(cut, sizeof(cut), "%s.cut", path);
	cr_assert_eq(go123story__write(path, 30, 5000, &st, why, sizeof(why)), 0, "%s", why);

	/* Every event a line, from the file and from a pipe. */
	status = run_capture((const char *[]){ lx, "dump", path, NULL }, 60, &out, &errs);
	cr_assert_eq(status, 0, "dump exited %d: %s", status, errs ? errs : "");
	cr_assert_eq(event_lines(out), st.events);
	cr_assert(strstr(out, " GoBlock reason=\"futex\" stack="));
	free(out);
	free(errs);
	snprintf(pipe_cmd, sizeof(pipe_cmd), "cat %s | %s dump -", path, lx);
	status = run_capture((const char *[]){ "/bin/sh", "-c", pipe_cmd, NULL }, 60, &out, &errs);
	cr_assert_eq(status, 0, "dump - exited %d: %s", status, errs ? errs : "");
	cr_assert_eq(event_lines(out), st.events);
	free(out);
	free(errs);

	/* A window of whole generations. */
	status = run_capture((const char *[]){ lx, "cut", path, "--from", "20us", "--to", "30us",
					       "-o", cut, NULL }, 60, &out, &errs);
	cr_assert_eq(status, 0, "cut exited %d: %s", status, errs ? errs : "");
	cr_assert(strstr(out, "generations "), "%s", out);
	go123_takes(cut);
	free(out);
	free(errs);

	/* Cut short in the middle, repaired in place. */
	cr_assert_eq(truncate(path, (off_t)st.bytes * 2 / 3), 0);
	status = run_capture((const char *[]){ lx, "dump", path, NULL }, 60, &out, &errs);
	cr_assert_eq(status, 1, "dump of a cut file exited %d", status);
	cr_assert(errs && strstr(errs, "has no Frequency") && strchr(errs, '\n')[1] == '\0',
		  "%s", errs ? errs : "");
	free(out);
	free(errs);
	status = run_capture((const char *[]){ lx, "repair", path, NULL }, 60, &out, &errs);
	cr_assert_eq(status, 0, "repair exited %d: %s", status, errs ? errs : "");
	cr_assert(strstr(out, "whole generations"), "%s", out);
	go123_takes(path);
	free(out);
	free(errs);

	/* 2 GB of zeros after the header: refused at once, in constant memory. */
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert(fd >= 0 && write(fd, GO123_HEADER, GO123_HEADER_LEN) == GO123_HEADER_LEN);
	cr_assert_eq(ftruncate(fd, GO123_HEADER_LEN + (2ll << 30)), 0);
	close(fd);
	status = dump_rusage(path, &rss, &secs, err, sizeof(err));
	cr_log_info("lxtrace dump (go123 header, 2 GB of zeros): exit %d in %.3f s, peak RSS %ld KiB",
		    status, secs, rss);
	cr_expect_eq(status, 1);
	cr_expect(strstr(err, "offset 16: expected a batch, found type 0"), "%s", err);
	cr_expect_lt(rss, 50 * 1024);
	unlink(path);
	unlink(cut);
}
