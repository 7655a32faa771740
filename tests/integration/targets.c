/* targets.c - recording a target instead of the machine: a command and its children (-- CMD),
 * running processes (-p), a cgroup v2 (--cgroup); what lands in the trace, what stays out, the
 * exit status, the heap counter, and the one-line errors for targets that do not exist. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"
#include "tests/lib/tcgroup.h"
#include "user/model/model.h"

#define BUSY_LOOP "while :; do :; done"

static struct {
	char trace[64];			/* a trace written by an lxtrace run_capture'd here */
	struct workload *busy;		/* a process outside the target, busy all along */
	struct workload *target;	/* a process to attach to */
	char cgroup[640];		/* created by the test, removed in the teardown */
	char files[2][64];		/* temp files a test made */
} tt;

static void targets_fini(void)
{
	workload__free(tt.busy);
	workload__free(tt.target);
	if (tt.cgroup[0])
		tcgroup_remove(tt.cgroup);
	if (tt.trace[0])
		unlink(tt.trace);
	for (int i = 0; i < 2; i++)
		if (tt.files[i][0])
			unlink(tt.files[i]);
	memset(&tt, 0, sizeof(tt));
	itest_fini();
}

TestSuite(targets, .fini = targets_fini, .timeout = 180);

/* Runs `lxtrace record -o tt.trace ARGS...` to completion; returns its exit status, *err its
 * stderr (the caller frees it). */
static int record_run(const char *const *args, char **err)
{
	const char *argv[32] = { record__build_path("lxtrace"), "record", "-o", tt.trace };
	size_t n = 4;
	int rc, status;

	if (!tt.trace[0]) {
		rc = record__tmpfile(tt.trace, sizeof(tt.trace), ".trace");
		cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	}
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	status = run_capture(argv, 120, NULL, err);
	cr_assert_geq(status, 0, "cannot run lxtrace: %s", strerror(-status));
	return status;
}

static void write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd >= 0 ? write(fd, text, strlen(text)) : -1;

	cr_assert_eq(n, (ssize_t)strlen(text), "writing '%s' to %s: %s", text, path, strerror(errno));
	close(fd);
}

static void start_busy(void)
{
	tt.busy = workload__start("/bin/sh", (const char *[]){ "-c", BUSY_LOOP, NULL });
	cr_assert(tt.busy, "cannot start the busy process: %s", strerror(errno));
}

static void expect_absent(pid_t pid, const char *what)
{
	size_t n = tq_count(it.trace, ~0ULL, (uint32_t)pid);

	cr_assert_eq(n, 0, "%s (pid %d) is outside the target but has %zu events", what, (int)pid, n);
}

/* Whether event e is of a stand-in for what holds a CPU untraced (docs/model.md): its own, or
 * its creation or wakeup, whose stack names that holder. */
static bool of_standin(const struct gt_event *e)
{
	return model__standin(e->g) ||
	       ((e->type == GT_EV_GO_CREATE || e->type == GT_EV_GO_UNBLOCK) &&
		model__standin(e->args[0]));
}

/* Every goroutine the trace creates, lxtrace's own and the stand-ins aside, is of program prog,
 * and every stack with a process frame names process pid. */
static void expect_only_process(pid_t pid, const char *prog)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	char part[32];

	snprintf(part, sizeof(part), " (pid %d)", (int)pid);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *name = tq_process(ev[i].stack);

		if (of_standin(&ev[i]))
			continue;
		cr_assert(!name || !strncmp(name, "[", 1) || strstr(name, part),
			  "an event of goroutine %llu names '%s', not the target%s",
			  (unsigned long long)ev[i].g, name, part);
		if (ev[i].type != GT_EV_GO_CREATE || ev[i].args[0] == 0xffffffffull)
			continue;
		name = tq_outermost(tq_create_stack(it.trace, &ev[i]));
		cr_assert(name && !strcmp(name, prog), "goroutine %llu is '%s', not of the target's program %s",
			  (unsigned long long)ev[i].args[0], name ? name : "(unnamed)", prog);
	}
}

/* Each thread the workload reported appears: created once, named after its program, ended. */
static void expect_threads(const struct workload *w, const char *prog)
{
	const char *role;
	pid_t tid;
	size_t k;

	for (k = 0; workload__thread(w, k, &role, &tid); k++) {
		const struct gt_event *create;
		const char *name;
		size_t i = 0;

		create = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_CREATE), tid);
		itest_expect(create, tid, "%s thread %d was never created", role, tid);
		name = tq_outermost(tq_create_stack(it.trace, create));
		itest_expect(name && !strcmp(name, prog), tid, "%s thread %d is named '%s', expected '%s'",
			     role, tid, name ? name : "(none)", prog);
		itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_END), tid) == 1, tid,
			     "%s thread %d: %zu GoEnd, expected 1", role, tid,
			     tq_count(it.trace, TQ_BIT(GT_EV_GO_END), tid));
	}
	cr_assert_gt(k, 1, "the workload reported no threads:\n%s", workload__stdout(w));
}

/* The target workload (tgroup) started and waiting with all its first threads. */
static void start_target(const char *nearly, const char *nlate)
{
	char path[64];
	long want = atol(nearly) + 1;

	tt.target = workload__start("tgroup", (const char *[]){ nearly, nlate, NULL });
	cr_assert(tt.target, "cannot start tgroup: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)workload__pid(tt.target));
	for (int i = 0; i < 500; i++) {
		char line[128];
		long threads = 0;
		FILE *f = fopen(path, "r");

		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "Threads: %ld", &threads);
		if (f)
			fclose(f);
		if (threads == want)
			return;
		usleep(10000);
	}
	cr_assert_fail("tgroup never had %ld threads", want);
}

static void release_target(void)
{
	int rc = workload__send(tt.target, "go\n");

	cr_assert_eq(rc, 0, "writing to tgroup: %s", strerror(-rc));
	rc = workload__finish(tt.target, 60);
	cr_assert_eq(rc, 0, "waiting for tgroup: %s", strerror(-rc));
	cr_assert_eq(workload__status(tt.target), 0, "tgroup exited with %d", workload__status(tt.target));
}

Test(targets, command_and_its_children)
{
	const struct gt_event *ev;
	size_t trues = 0;
	char *err = NULL;
	int status;

	itest_require_root();
	start_busy();
	status = record_run((const char *[]){ "--", "sh", "-c",
					       "for i in $(seq 50); do /bin/true; done", NULL }, &err);
	cr_assert_eq(status, 0, "lxtrace exited %d:\n%s", status, err);
	free(err);
	itest_load_file(tt.trace);

	/* Each /bin/true is a child process of the shell that execs: a goroutine forked (named
	 * after sh), ended at its exec, which creates the one named "true", ended at its exit. */
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *name = tq_outermost(tq_create_stack(it.trace, &ev[i]));
		uint32_t tid = (uint32_t)ev[i].args[0];

		if (ev[i].type != GT_EV_GO_CREATE || !name || strcmp(name, "true"))
			continue;
		trues++;
		itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_CREATE), tid) == 2 &&
			     tq_count(it.trace, TQ_BIT(GT_EV_GO_END), tid) == 2, tid,
			     "/bin/true (tid %u): %zu GoCreate, %zu GoEnd, expected 2 each (fork, exec)", tid,
			     tq_count(it.trace, TQ_BIT(GT_EV_GO_CREATE), tid),
			     tq_count(it.trace, TQ_BIT(GT_EV_GO_END), tid));
	}
	cr_assert_eq(trues, 50, "%zu execs of /bin/true in the trace, expected 50", trues);
	expect_absent(workload__pid(tt.busy), "the busy shell");
}

Test(targets, command_exit_status)
{
	static const struct {
		const char *script;
		int status;
	} cases[] = {
		{ "exit 0", 0 },
		{ "exit 3", 3 },
		{ "kill -TERM $$", 128 + SIGTERM },
		{ "kill -KILL $$", 128 + SIGKILL },
	};

	itest_require_root();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL, why[4096];
		int status = record_run((const char *[]){ "--", "sh", "-c", cases[i].script, NULL }, &err);

		cr_assert_eq(status, cases[i].status, "sh -c '%s': lxtrace exited %d, expected %d:\n%s",
			     cases[i].script, status, cases[i].status, err);
		free(err);
		cr_assert(goparse_both_ok(tt.trace, why, sizeof(why)), "sh -c '%s': %s", cases[i].script, why);
	}
}

/* Two lines would mean the error was reported twice, or a summary followed it. */
static void expect_one_line(const char *what, const char *err, const char *needle)
{
	const char *nl = err ? strchr(err, '\n') : NULL;

	cr_assert(nl && nl[1] == '\0', "%s: expected one line on stderr, got:\n%s", what, err);
	cr_assert(strstr(err, needle), "%s: stderr does not say '%s':\n%s", what, needle, err);
}

/* A temp file with text in it and mode `mode`, named in tt.files[i]. */
static const char *text_file(int i, mode_t mode)
{
	int rc = record__tmpfile(tt.files[i], sizeof(tt.files[i]), ".txt");

	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	write_text(tt.files[i], "not a program\n");
	cr_assert_eq(chmod(tt.files[i], mode), 0, "chmod %s: %s", tt.files[i], strerror(errno));
	return tt.files[i];
}

/* Found and not executable: caught before anything is loaded. Executable but not a program:
 * only exec finds out, once recording runs; still one line and 127. */
Test(targets, command_that_cannot_run)
{
	struct {
		const char *cmd, *says;
	} cases[] = {
		{ "lxtrace-no-such-command", "No such file or directory" },
		{ "/nonexistent/cmd", "No such file or directory" },
		{ text_file(0, 0644), "Permission denied" },
		{ text_file(1, 0755), "Exec format error" },
	};

	itest_require_root();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL, says[256];
		int status = record_run((const char *[]){ "--", cases[i].cmd, NULL }, &err);

		cr_assert_eq(status, 127, "%s: lxtrace exited %d, expected 127:\n%s", cases[i].cmd, status, err);
		snprintf(says, sizeof(says), "lxtrace record: %s: %s", cases[i].cmd, cases[i].says);
		expect_one_line(cases[i].cmd, err, says);
		free(err);
	}
}

Test(targets, pid_threads_before_and_during)
{
	pid_t pid;

	itest_require_root();
	start_busy();
	start_target("4", "4");
	pid = workload__pid(tt.target);
	{
		char arg[32];

		snprintf(arg, sizeof(arg), "%d", (int)pid);
		itest_start((const char *[]){ "-p", arg, NULL });
	}
	release_target();
	/* The process is gone: the recorder stops by itself, with a valid file. */
	itest_stop(0, 0);
	cr_assert(strstr(recorder__stderr(it.rec), "every target process has exited"),
		  "the recorder did not say why it stopped:\n%s", recorder__stderr(it.rec));
	itest_load();
	expect_threads(tt.target, "tgroup");
	expect_only_process(pid, "tgroup");
	expect_absent(workload__pid(tt.busy), "the busy shell");
}

Test(targets, cgroup_only_its_threads)
{
	pid_t pid;
	int err;

	itest_require_root();
	err = tcgroup_make(tt.cgroup, sizeof(tt.cgroup));
	if (err == -ENOENT)
		cr_skip_test("no cgroup2 mount");
	cr_assert_eq(err, 0, "cannot make a cgroup: %s", strerror(-err));
	start_busy();
	start_target("2", "3");
	pid = workload__pid(tt.target);
	err = tcgroup_move(tt.cgroup, pid);
	cr_assert_eq(err, 0, "cannot move %d to %s: %s", (int)pid, tt.cgroup, strerror(-err));

	itest_start((const char *[]){ "--cgroup", tt.cgroup, NULL });
	release_target();
	itest_stop(SIGINT, 0);
	itest_load();
	expect_threads(tt.target, "tgroup");
	expect_only_process(pid, "tgroup");
	expect_absent(workload__pid(tt.busy), "the busy shell");
}

Test(targets, heap_follows_resident_memory)
{
	const struct gt_event *ev;
	uint64_t max = 0, last = 0;
	size_t rises = 0;
	char *err = NULL, allocator[4096];
	int status;

	itest_require_root();
	snprintf(allocator, sizeof(allocator), "%s", record__build_path("tests/workloads/allocator"));
	status = record_run((const char *[]){ "--", allocator, "10", "20", "50", NULL }, &err);
	cr_assert_eq(status, 0, "lxtrace exited %d:\n%s", status, err);
	free(err);
	itest_load_file(tt.trace);
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		if (ev[i].type != GT_EV_HEAP_ALLOC)
			continue;
		rises += ev[i].args[0] > last;
		last = ev[i].args[0];
		if (last > max)
			max = last;
	}
	cr_assert_geq(max, 200ull << 20, "the heap counter peaked at %llu bytes, expected >= 200 MiB",
		      (unsigned long long)max);
	cr_assert_geq(rises, 10, "the heap counter rose %zu times, expected at least once per step", rises);
	/* The viewers draw a counter up to its last value: it is written again at the end. */
	for (size_t i = gt_trace__nevents(it.trace); i-- > 0;) {
		if (ev[i].type != GT_EV_HEAP_ALLOC)
			continue;
		cr_assert_eq(ev[i].ts, ev[gt_trace__nevents(it.trace) - 1].ts,
			     "the heap counter's last value is at %.3f s, the trace ends at %.3f s",
			     tq_ns(it.trace, ev[0].ts, ev[i].ts) / 1e9,
			     tq_ns(it.trace, ev[0].ts, ev[gt_trace__nevents(it.trace) - 1].ts) / 1e9);
		break;
	}
}

Test(targets, bad_targets_are_one_line_errors)
{
	static const struct {
		const char *opt, *arg, *says;
	} cases[] = {
		{ "-p", "2147483647", "lxtrace record: -p 2147483647: no such process" },
		{ "-p", "12x", "is not a list of process ids" },
		{ "--cgroup", "/nonexistent/cgroup", "No such file or directory" },
		{ "--cgroup", "/tmp", "not a cgroup v2 directory" },
	};

	itest_require_root();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL, what[128];
		int status = record_run((const char *[]){ cases[i].opt, cases[i].arg, NULL }, &err);

		snprintf(what, sizeof(what), "lxtrace record %s %s", cases[i].opt, cases[i].arg);
		cr_assert(status != 0 && status < 128, "%s: exit status %d, expected a failure", what, status);
		expect_one_line(what, err, cases[i].says);
		free(err);
	}
}

/* A command that outlives the recording (--duration) still hears a signal sent to lxtrace
 * alone: lxtrace waits for it, passing the signal on, and its status comes back. */
Test(targets, signal_after_the_recording_reaches_the_command)
{
	itest_start((const char *[]){ "--duration", "1", "--", "sh", "-c",
				      "trap 'exit 6' TERM; while :; do sleep 0.05; done", NULL });
	/* The recording ends after 1 s; the command goes on. */
	usleep(2000000);
	itest_stop(SIGTERM, 6);
	itest_load();
}

/* A signal sent to lxtrace alone (not by a terminal to the process group) goes on to the
 * command, whose exit ends the recording: the trap's status comes back through lxtrace. */
Test(targets, signal_to_lxtrace_reaches_the_command)
{
	itest_start((const char *[]){ "--", "sh", "-c",
				      "trap 'exit 5' INT; while :; do sleep 0.05; done", NULL });
	/* The shell sets its trap right after the exec that follows the announcement. */
	usleep(300000);
	itest_stop(SIGINT, 5);
	itest_load();
}
