/* flight.c - `lxtrace record --flight-recorder`: an induced run-queue stall writes exactly one
 * file holding the seconds before it, the stall itself and the trigger's mark; a slow read
 * fires a syscall trigger naming read; SIGUSR1 and a program's lxtrace_trigger() make files; a
 * storm of triggers stops at --max-files with a summary line; the window's memory stays under
 * its budget at messaging load. Every file passes both Go parsers and both viewers, and is
 * made as the recording's output is: a symbolic link in its place is not followed. The path -o
 * names is held: a second recording to it, flight recorder or not, is refused either way.
 *
 * The triggers watch the workload's threads only (comm=): the machine's other load (other
 * tests, other engineers) must not fire them. lxtrace's own helper process, whose wait for jobs
 * is a syscall as long as the recording, fires none.
 */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>

#include "tests/integration/itest.h"
#include "tests/lib/schedstat.h"
#include "tests/lib/tcgroup.h"
#include "tests/lib/tfile.h"
#include "user/flight/flight.h"

#define MAX_FILES 16
#define MS 1000000ull

/* File n of the current recording. Static storage, one at a time. */
static const char *file_name(unsigned n)
{
	static char name[4096];

	flight__file_name(recorder__path(it.rec), n, name, sizeof(name));
	return name;
}

static bool file_exists(unsigned n)
{
	struct stat st;

	return !stat(file_name(n), &st);
}

/* A cgroup the test process moved itself into, and the one it came from. */
static char cg[640], cg_home[640];

static void flight_fini_all(void)
{
	for (unsigned n = 1; it.rec && n <= MAX_FILES; n++)
		if (!getenv("LXTRACE_TEST_KEEP"))
			unlink(file_name(n));
	if (cg_home[0])
		tcgroup_move(cg_home, getpid());
	itest_fini();
	if (cg[0])
		tcgroup_remove(cg);
	cg[0] = cg_home[0] = '\0';
}

TestSuite(flight, .fini = flight_fini_all, .timeout = 300);

/* The files written: 1..count exist, count + 1 does not. */
static unsigned count_files(void)
{
	unsigned n = 0;

	while (n < MAX_FILES && file_exists(n + 1))
		n++;
	return n;
}

/* File n must pass our decoder, both Go parsers and both viewers; loaded into it.trace. */
static void load_file(unsigned n)
{
	char why[4096];

	gt_trace__free(it.trace);
	it.trace = NULL;
	itest_load_file(file_name(n));
	cr_assert(goparse_views_ok(file_name(n), why, sizeof(why)), "%s: %s", file_name(n), why);
}

/* The trigger marks of it.trace: UserLogs keyed lxtrace.trigger, the i-th. */
static const struct gt_event *mark(size_t i)
{
	const struct gt_event *ev = gt_trace__events(it.trace);

	for (size_t k = 0; k < gt_trace__nevents(it.trace); k++) {
		const char *key;

		if (ev[k].type != GT_EV_USER_LOG)
			continue;
		key = gt_trace__string(it.trace, ev[k].args[1]);
		if (key && !strcmp(key, "lxtrace.trigger") && i-- == 0)
			return &ev[k];
	}
	return NULL;
}

static bool says(const struct gt_event *e, const char *needle)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%.*s", (int)e->msg_len, e->msg);
	return strstr(msg, needle) != NULL;
}

/* The recorder's line for file n: "NAME: SPAN s, FROM to TO s into the recording (...)",
 * then what follows the parenthesis in rest. */
struct file_line {
	double span, from, to;
	char rest[1024];
};

static struct file_line file_line(unsigned n)
{
	const char *err = recorder__stderr(it.rec), *s;
	struct file_line l = { 0 };
	char head[4200];
	int end = 0;

	snprintf(head, sizeof(head), "%s: ", file_name(n));
	s = strstr(err, head);
	cr_assert(s, "no line for %s:\n%s", file_name(n), err);
	s += strlen(head);
	cr_assert(sscanf(s, "%lf s, %lf to %lf s into the recording (%*[^)])%n", &l.span, &l.from,
			 &l.to, &end) == 3 && end, "%s: its line does not say its span: %.200s",
		  file_name(n), s);
	sscanf(s + end, "%1023[^\n]", l.rest);
	return l;
}

/* The recording's length as its summary says it ("flight recorder: 6.1 s, ..."). */
static double recording_seconds(void)
{
	const char *s = strstr(recorder__stderr(it.rec), "flight recorder: ");
	double secs;

	cr_assert(s && sscanf(s, "flight recorder: %lf s,", &secs) == 1, "no summary:\n%s",
		  recorder__stderr(it.rec));
	return secs;
}

/* The line of file n (loaded in it.trace) says its real span, within the recording: the
 * file's own first and last events, to the line's tenth of a second. */
static struct file_line expect_span(unsigned n)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	double secs = recording_seconds(), own;
	struct file_line l = file_line(n);

	own = (ev[gt_trace__nevents(it.trace) - 1].ts - ev[0].ts) / 1e9;
	cr_expect(l.span <= secs + 0.05 && l.from >= 0 && l.to <= secs + 0.05,
		  "%s: %.1f s, %.1f to %.1f s into a recording of %.1f s", file_name(n), l.span,
		  l.from, l.to, secs);
	cr_expect(fabs(l.to - l.from - l.span) <= 0.11, "%s: %.1f to %.1f s is not %.1f s",
		  file_name(n), l.from, l.to, l.span);
	cr_expect(fabs(l.span - own) <= 0.06, "%s: the line says %.1f s, its events span %.3f s",
		  file_name(n), l.span, own);
	return l;
}

Test(flight, induced_stall_writes_one_file_with_the_seconds_before_it)
{
	const struct gt_event *m, *e, *unblock = NULL, *start = NULL;
	struct file_line l;
	long long s0, s1;
	size_t i = 0;
	pid_t tid;
	char tidstr[32];

	itest_start((const char *[]){ "--flight-recorder=5", "--trigger",
				      "sched-latency>50ms,comm=stall", NULL });
	/* 6 s of idling (more than the window), a 150 ms stall, 6 s of idling. */
	itest_run("stall", (const char *[]){ "6000", "150", "1", NULL }, 60);
	itest_stop(SIGINT, 0);
	tid = itest_tid("sleeper");
	s0 = itest_stat("stall_start_ns");
	s1 = itest_stat("stall_end_ns");
	cr_assert_eq(count_files(), 1, "%u files; recorder said:\n%s", count_files(),
		     recorder__stderr(it.rec));
	load_file(1);

	/* The window: at least 4 s before the stall. */
	cr_expect_leq(gt_trace__events(it.trace)[0].ts + 4000 * MS, (uint64_t)s0,
		      "the file begins %.3f s before the stall",
		      ((double)s0 - gt_trace__events(it.trace)[0].ts) / 1e9);
	/* The sleeper's wakeup during the hog and its start at the hog's end: the stall. */
	while ((e = tq_next(it.trace, &i, TQ_WAKEUPS | TQ_BIT(GT_EV_GO_START), (uint32_t)tid))) {
		if (e->type == GT_EV_GO_START && unblock && e->ts - unblock->ts > 100 * MS) {
			start = e;
			break;
		}
		unblock = e->type == GT_EV_GO_START ? NULL : e;
		i++;
	}
	m = mark(0);
	itest_expect(start, tid, "no wakeup -> start gap over 100 ms for the sleeper (mark: %.*s)",
		     m ? (int)m->msg_len : 4, m ? m->msg : "none");
	/* The hog reads its start time once it runs: a wakeup as it is being started (CI: 50 us
	 * before) waits for it all the same. */
	itest_expect(unblock->ts + MS >= (uint64_t)s0 && unblock->ts <= (uint64_t)s0 + 10 * MS &&
		     start->ts >= (uint64_t)s1 && start->ts <= (uint64_t)s1 + 20 * MS, tid,
		     "the gap %.1f..%.1f ms (after the stall's start) is not the stall (0..%.1f ms)",
		     ((double)unblock->ts - s0) / 1e6, ((double)start->ts - s0) / 1e6,
		     (double)(s1 - s0) / 1e6);
	/* The trigger's mark, on the sleeper, at its start. */
	cr_assert(m, "no trigger mark in the file");
	snprintf(tidstr, sizeof(tidstr), "tid %d ", (int)tid);
	cr_expect(says(m, "sched-latency") && says(m, tidstr), "mark: %.*s", (int)m->msg_len, m->msg);
	cr_expect_eq((uint32_t)m->g, (uint32_t)tid);
	cr_expect_eq(m->ts, start->ts);
	cr_expect_null(mark(1));
	/* A window of 5 s: the last 5 s of the recording, give or take a batch. */
	l = expect_span(1);
	cr_expect(l.span >= 4.5 && l.span <= 5.6 && l.from >= 1.0, "%.1f s, %.1f to %.1f s",
		  l.span, l.from, l.to);
}

/* The line of file n says, at its end, that it was written for mark m at its time in the
 * recording: the mark's distance from the file's first event, from where the file begins. */
static void expect_at(unsigned n, const struct file_line *l, const struct gt_event *m)
{
	double when, want = l->from + (m->ts - gt_trace__events(it.trace)[0].ts) / 1e9;
	const char *at = NULL;

	for (const char *s = l->rest; (s = strstr(s, " at ")); s++)
		at = s;
	cr_assert(at && sscanf(at, " at %lf s", &when) == 1, "%s: no time: %s", file_name(n),
		  l->rest);
	cr_expect(fabs(when - want) <= 0.06 && when >= l->from && when <= l->to + 0.05,
		  "%s: fired at %.1f s says its line, the mark is at %.3f s", file_name(n), when,
		  want);
}

/* A recording shorter than its window: its file is the whole recording, and its line says so
 * (it said "the last 5629.5 s", the time since boot, after 4.4 s), and what fired, on which
 * thread, when. */
Test(flight, a_files_line_says_its_span_and_what_fired)
{
	struct file_line l;
	double ms;
	int pid, tid;

	/* -v: the records by kind, below. */
	itest_start((const char *[]){ "--flight-recorder=10", "--trigger",
				      "sched-latency>50ms,comm=stall", "-v", NULL });
	itest_run("stall", (const char *[]){ "1000", "150", "1", NULL }, 60);
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 1, "%s", recorder__stderr(it.rec));
	load_file(1);
	l = expect_span(1);
	cr_expect(l.from <= 0.1 && l.span >= 1.1, "%.1f s, %.1f to %.1f s", l.span, l.from, l.to);
	/* The sleeper waited the stall out: it fired, and the line names it. */
	cr_assert(sscanf(l.rest, ", for trigger sched-latency %lf ms > 50.0 ms of \"stall\" (pid %d, "
			 "tid %d)", &ms, &pid, &tid) == 3, "%s", l.rest);
	cr_expect_eq(pid, workload__pid(it.wl));
	cr_expect_eq(tid, itest_tid("sleeper"), "%s", l.rest);
	cr_expect(ms >= 100 && ms <= 300, "%.1f ms for a stall of 150 ms", ms);
	/* Records by kind count the triggers asked for, not those the model measured. */
	cr_expect(strstr(recorder__stderr(it.rec), " 0 trigger requests") &&
		  strstr(recorder__stderr(it.rec), "; 1 triggers: 1 with a file"), "%s",
		  recorder__stderr(it.rec));
	cr_assert(mark(0));
	expect_at(1, &l, mark(0));
}

/* A thread's name is whatever its program was called: on the terminal it is quoted and
 * escaped, so that a name holding escape sequences cannot drive the terminal. */
Test(flight, a_threads_name_is_escaped_on_the_terminal)
{
	static const char name[] = "st\033]0;x\007all";
	char dir[] = "/tmp/lxtrace-test-XXXXXX", link[64], trig[64];
	const char *err;

	cr_assert(mkdtemp(dir), "%s", strerror(errno));
	snprintf(link, sizeof(link), "%s/%s", dir, name);
	cr_assert_eq(symlink(record__workload_path("stall"), link), 0, "%s", strerror(errno));
	snprintf(trig, sizeof(trig), "sched-latency>50ms,comm=%s", name);
	itest_start((const char *[]){ "--flight-recorder=10", "--trigger", trig, NULL });
	it.wl = workload__run(link, (const char *[]){ "1000", "150", "1", NULL }, 60);
	unlink(link);
	rmdir(dir);
	cr_assert(it.wl && workload__status(it.wl) == 0, "stall under another name failed");
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 1, "%s", recorder__stderr(it.rec));
	err = recorder__stderr(it.rec);
	cr_expect_null(strchr(err, '\033'), "an escape reached the terminal:\n%s", err);
	cr_expect_null(strchr(err, '\007'), "a bell reached the terminal:\n%s", err);
	cr_expect(strstr(err, " of \"st\\x1b]0;x\\x07all\" (pid "), "%s", err);
	load_file(1);
}

Test(flight, slow_read_fires_a_syscall_trigger_naming_read)
{
	const struct gt_event *m;
	char tidstr[32];

	itest_start((const char *[]){ "--flight-recorder=3", "--trigger",
				      "syscall>200ms,comm=slowread", NULL });
	itest_run("slowread", (const char *[]){ "1", "300", NULL }, 60);
	usleep(200 * 1000);
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 1, "%s", recorder__stderr(it.rec));
	load_file(1);
	m = mark(0);
	cr_assert(m, "no trigger mark");
	snprintf(tidstr, sizeof(tidstr), "tid %d ", (int)itest_tid("reader"));
	cr_expect(says(m, "syscall read ") && says(m, tidstr), "mark: %.*s", (int)m->msg_len, m->msg);
	cr_expect_null(mark(1), "the writer's nanosleep and the join's futex are waits, not syscalls");
}

/* The recorder's file worker (lxtrace-files, lib/file_worker.h) is a process of its own that
 * waits in recvmsg for jobs, which the symbolizer sends for a new program's binary: its wait
 * ended by slowread's first stack fired 'syscall>200ms' before it was the recorder's own,
 * and slowread's stall within --min-gap then got no file. The test and so the recorder, its
 * worker and the workload run in a cgroup of their own, recorded with --cgroup: no other
 * tracer's worker on the machine (other tests, other engineers) can match the trigger. */
Test(flight, lxtraces_own_helper_fires_no_trigger_and_a_stall_after_gets_its_file)
{
	const char *err;
	int rc;

	itest_require_root();
	rc = tcgroup_make(cg, sizeof(cg));
	if (rc == -ENOENT)
		cr_skip_test("no cgroup2 mount");
	cr_assert_eq(rc, 0, "cannot make a cgroup: %s", strerror(-rc));
	cr_assert_eq(tcgroup_current(cg_home, sizeof(cg_home)), 0);
	rc = tcgroup_move(cg, getpid());
	cr_assert_eq(rc, 0, "cannot move the test into %s: %s", cg, strerror(-rc));
	itest_start((const char *[]){ "--cgroup", cg, "--flight-recorder=3", "--min-gap", "30",
				      "--trigger", "syscall>200ms,comm=lxtrace-files", "--trigger",
				      "syscall>200ms,comm=slowread", NULL });
	/* The worker waits for its next job longer than the trigger's 200 ms. */
	usleep(400 * 1000);
	itest_run("slowread", (const char *[]){ "2", "300", NULL }, 60);
	usleep(200 * 1000);
	itest_stop(SIGINT, 0);
	err = recorder__stderr(it.rec);
	cr_expect_null(strstr(err, "lxtrace-files"), "lxtrace's file worker fired:\n%s", err);
	cr_assert_eq(count_files(), 1, "%s", err);
	load_file(1);
	cr_assert(mark(0), "no trigger mark");
	cr_expect(says(mark(0), "syscall read ") && says(mark(0), "slowread"), "mark: %.*s",
		  (int)mark(0)->msg_len, mark(0)->msg);
}

/* When each of three_sigusr1's signals was sent, in ns of CLOCK_MONOTONIC. */
static uint64_t sent_ns[3];

/* A recording with args, sent SIGUSR1 three times, each 0.4 s after the last one's file was
 * written: three files. A signal while the last file is still pending is in that file (docs/
 * flight.md); how soon a file is written is the reader's lag, seconds on a loaded machine. */
static void three_sigusr1(const char **args)
{
	struct timespec t;

	itest_start(args);
	for (unsigned k = 0; k < 3; k++) {
		usleep(400 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		sent_ns[k] = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
		cr_assert_eq(kill(recorder__pid(it.rec), SIGUSR1), 0);
		for (int w = 0; w < 600 && count_files() < k + 1; w++)
			usleep(100 * 1000);
		cr_assert_eq(count_files(), k + 1, "no file for SIGUSR1 number %u in 60 s", k + 1);
	}
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 3, "%s", recorder__stderr(it.rec));
}

Test(flight, sigusr1_three_times_makes_three_files)
{
	/* -v: the records by kind, where the trigger requests are counted. */
	three_sigusr1((const char *[]){ "--flight-recorder=2", "--min-gap", "0.1", "-v", NULL });
	cr_expect(strstr(recorder__stderr(it.rec), " 3 trigger requests") &&
		  strstr(recorder__stderr(it.rec), "; 3 triggers: 3 with a file"), "%s",
		  recorder__stderr(it.rec));
	for (unsigned n = 1; n <= 3; n++) {
		const struct gt_event *m;

		load_file(n);
		struct file_line l;

		m = mark(n - 1);
		cr_assert(m, "file %u: no mark of SIGUSR1 number %u", n, n);
		cr_expect(says(m, "SIGUSR1"));
		cr_expect_eq(m->g, 0xffffffffull, "on lxtrace's own goroutine");
		l = expect_span(n);
		cr_expect(!strncmp(l.rest, ", for SIGUSR1 at ", 17), "%s", l.rest);
		expect_at(n, &l, m);
	}
}

/* A user's symbolic link where trace-001.out goes is refused and its target untouched; the next
 * file is made anyway, 0600 and the invoking user's, as the recording's output would be. */
Test(flight, a_numbered_file_is_made_as_the_output_is)
{
	char victim[4096];
	struct stat st;

	setenv("SUDO_UID", "61234", 1);
	setenv("SUDO_GID", "61235", 1);
	itest_start((const char *[]){ "--flight-recorder=2", "--min-gap", "0.1", NULL });
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	snprintf(victim, sizeof(victim), "%s.victim", recorder__path(it.rec));
	cr_assert_eq(tfile_write(victim, "root's own\n", 0644), 0);
	cr_assert_eq(symlink(victim, file_name(1)), 0, "%s", strerror(errno));
	for (int k = 0; k < 2; k++) {
		usleep(400 * 1000);
		cr_assert_eq(kill(recorder__pid(it.rec), SIGUSR1), 0);
	}
	usleep(400 * 1000);
	itest_stop(SIGINT, 0);
	cr_expect_eq(stat(victim, &st), 0);
	unlink(victim);
	cr_expect(st.st_size == 11 && (st.st_mode & 07777) == 0644 && st.st_uid == 0,
		  "the link's target was written: %lld bytes, mode %o, uid %d", (long long)st.st_size,
		  st.st_mode & 07777, (int)st.st_uid);
	cr_expect(strstr(recorder__stderr(it.rec), "symbolic link") &&
		  strstr(recorder__stderr(it.rec), "1 could not be written"), "%s",
		  recorder__stderr(it.rec));
	cr_assert_eq(lstat(file_name(1), &st), 0);
	cr_expect(S_ISLNK(st.st_mode), "the link was replaced");
	cr_assert_eq(lstat(file_name(2), &st), 0, "%s", recorder__stderr(it.rec));
	cr_expect(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 && st.st_uid == 61234 &&
		  st.st_gid == 61235, "mode %o, owner %d:%d", st.st_mode & 07777, (int)st.st_uid,
		  (int)st.st_gid);
	load_file(2);
}

/* A flight recorder holds its path as a recording holds its output: a second flight recorder
 * or a plain recording to it fails in one line before it starts, and the first goes on; the
 * file that was at the path stays as it was. */
Test(flight, a_second_recording_to_its_path_is_refused)
{
	struct stat st;

	itest_start((const char *[]){ "--flight-recorder=2", NULL });
	itest_expect_refused(recorder__path(it.rec), (const char *[]){ "--flight-recorder=2", NULL },
			     "another recording");
	itest_expect_refused(recorder__path(it.rec), NULL, "another recording");
	cr_assert_eq(kill(recorder__pid(it.rec), SIGUSR1), 0);
	usleep(400 * 1000);
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 1, "%s", recorder__stderr(it.rec));
	load_file(1);
	/* The test's empty file, held as it was, not replaced or taken away. */
	cr_assert_eq(stat(recorder__path(it.rec), &st), 0, "the path's file is gone");
	cr_expect(S_ISREG(st.st_mode) && st.st_size == 0, "%lld bytes at the path",
		  (long long)st.st_size);
}

/* The other way round: a flight recorder to a plain recording's path is refused, and the
 * recording's file is whole. */
Test(flight, a_flight_recorder_to_a_recordings_path_is_refused)
{
	itest_start(NULL);
	itest_expect_refused(recorder__path(it.rec), (const char *[]){ "--flight-recorder=2", NULL },
			     "another recording");
	itest_stop(SIGINT, 0);
	itest_load();
	cr_expect_not(file_exists(1), "the refused flight recorder made a file");
}

Test(flight, program_asks_with_lxtrace_trigger)
{
	char usdt[4096], want[256];
	const struct gt_event *m;
	struct file_line l;

	snprintf(usdt, sizeof(usdt), "%s", record__workload_path("triggered"));
	itest_start((const char *[]){ "--flight-recorder=2", "--usdt", usdt, NULL });
	itest_run("triggered", (const char *[]){ "300", "1", NULL }, 60);
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 1, "%s", recorder__stderr(it.rec));
	load_file(1);
	m = mark(0);
	cr_assert(m, "no mark");
	cr_expect(says(m, "triggered: the workload asked"));
	cr_expect_eq((uint32_t)m->g, (uint32_t)itest_tid("main"));
	cr_expect(m->ts >= (uint64_t)itest_stat("trigger_ns"));
	l = expect_span(1);
	snprintf(want, sizeof(want), ", for lxtrace_trigger(\"triggered: the workload asked\") of "
		 "\"triggered\" (pid %d, tid %d) at ", (int)workload__pid(it.wl),
		 (int)itest_tid("main"));
	cr_expect(!strncmp(l.rest, want, strlen(want)), "%s", l.rest);
	expect_at(1, &l, m);
}

Test(flight, storm_stops_at_max_files_with_a_summary)
{
	/* A 70 ms stall every 100 ms, for as long as it takes; a file at most every 0.2 s, 3 at
	 * most. Triggers while a file is pending are in it (docs/flight.md): a reader seconds
	 * behind on a loaded machine makes its three files of more of the storm's stalls. */
	itest_start((const char *[]){ "--flight-recorder=1", "--min-gap", "0.2", "--max-files", "3",
				      "--trigger", "sched-latency>50ms,comm=stall", NULL });
	it.wl = workload__start("stall", (const char *[]){ "200", "70", "600", "100", NULL });
	cr_assert(it.wl, "cannot start stall: %s", strerror(errno));
	/* It stops by itself after the third file. */
	itest_stop(0, 0);
	cr_assert_eq(count_files(), 3, "%s", recorder__stderr(it.rec));
	cr_expect(strstr(recorder__stderr(it.rec), "--max-files 3 reached"), "%s",
		  recorder__stderr(it.rec));
	for (unsigned n = 1; n <= 3; n++)
		load_file(n);
}

/* One "trigger sched-latency N ms > ... (pid P, tid T)" the recorder's stderr names from s on
 * (a file's line or a `within gap:` group's longest): its wait and tid; NULL past the last. A
 * name is quoted with its own quotes escaped, so the thread is the last "(pid" of the line. */
static const char *next_latency(const char *s, double *ms, int *tid)
{
	const char *end, *pid = NULL;
	char unit[3];
	int p;

	s = strstr(s, "trigger sched-latency ");
	if (!s)
		return NULL;
	end = strchr(s, '\n');
	for (const char *q = s; (q = strstr(q, "\" (pid ")) && (!end || q < end); q++)
		pid = q;
	cr_assert(pid && sscanf(s, "trigger sched-latency %lf %2s", ms, unit) == 2 &&
		  sscanf(pid, "\" (pid %d, tid %d)", &p, tid) == 2, "%.300s", s);
	if (!strcmp(unit, "s"))
		*ms *= 1000;
	else if (!strcmp(unit, "us"))
		*ms /= 1000;
	return s + 1;
}

/* Triggers that --min-gap keeps from a file are named, grouped: one line for the sleeper's
 * ten, not ten lines. */
Test(flight, triggers_within_min_gap_are_named_in_one_line)
{
	unsigned long long fired, files, after, gap;
	struct workload *first;
	const char *err, *s;
	double ms, from, to;
	int n, pid, tid;

	itest_start((const char *[]){ "--flight-recorder=1", "--min-gap", "60", "--trigger",
				      "sched-latency>50ms,comm=stall", NULL });
	/* One stall makes the file. Once it is written, a 70 ms stall every 100 ms, ten times:
	 * all too soon after it. (Before the file is written they would be in it: docs/flight.md;
	 * a reader seconds behind on a loaded machine writes it seconds late.) */
	first = workload__run("stall", (const char *[]){ "300", "70", "1", NULL }, 60);
	cr_assert(first && workload__status(first) == 0, "the first stall failed");
	workload__free(first);
	for (int w = 0; w < 600 && !count_files(); w++)
		usleep(100 * 1000);
	cr_assert_eq(count_files(), 1, "no file for the first stall in 60 s");
	itest_run("stall", (const char *[]){ "300", "70", "10", "100", NULL }, 60);
	itest_stop(SIGINT, 0);
	err = recorder__stderr(it.rec);
	cr_assert_eq(count_files(), 1, "%s", err);
	load_file(1);
	s = strstr(err, "  flight: ");
	cr_assert(s && sscanf(s, "%*[^;]; %llu triggers: %llu with a file, %llu in a pending "
			      "file, %llu within --min-gap", &fired, &files, &after, &gap) == 4,
		  "%s", err);
	cr_expect(files == 1 && gap >= 7 && fired == files + after + gap, "%s", err);
	s = strstr(err, "  within gap:    ");
	cr_assert(s, "the triggers within --min-gap are not named:\n%s", err);
	cr_assert(sscanf(s, "  within gap: %d from %lf to %lf s, the longest: trigger sched-latency "
			 "%*s %*s > 50.0 ms of \"stall\" (pid %d,", &n, &from, &to, &pid) == 4,
		  "%s", s);
	/* Its wait in the unit the line chose: a busy machine's may reach seconds. */
	cr_assert(next_latency(s, &ms, &tid));
	cr_expect_eq((unsigned long long)n, gap, "%s", err);
	cr_expect_eq(pid, workload__pid(it.wl));
	cr_expect_eq(tid, itest_tid("sleeper"));
	cr_expect(ms >= 60 && ms <= 200, "%.1f ms for stalls of 70 ms", ms);
	/* The first and the tenth stall are 0.9 s apart. */
	cr_expect(to - from >= 0.7 && to - from <= 1.1, "from %.1f to %.1f s", from, to);
	s = strchr(s, '\n');
	cr_expect(s && !strncmp(s + 1, "  window:", 9), "more than one line for one thread:\n%s",
		  err);
}

#define MAX_THREADS 4096

/* A sleeping thread is not waiting for a CPU: an idle machine, a known sleeper among its
 * threads (slowread's writer sleeps 300 ms at a time, its reader blocks as long), fires no
 * sched-latency trigger that the kernel's own run delay does not hold. Whatever fires (the
 * machine may have load of its own) is checked against the run delay its thread gained over
 * the recording: a sleep drawn as a wait would show hundreds of ms where the kernel counts
 * microseconds. */
Test(flight, an_idle_machine_fires_no_trigger_on_a_sleeping_thread)
{
	static struct schedstat a[MAX_THREADS], b[MAX_THREADS];
	size_t na, nb, named = 0, unknown = 0;
	const char *err, *s;
	double ms;
	int tid;

	na = schedstat__snapshot(a, MAX_THREADS);
	cr_assert_gt(na, 0, "/proc: %s", strerror(errno));
	itest_start((const char *[]){ "--flight-recorder=2", "--trigger", "sched-latency>50ms",
				      NULL });
	itest_run("slowread", (const char *[]){ "6", "300", NULL }, 60);
	usleep(500 * 1000);
	itest_stop(SIGINT, 0);
	nb = schedstat__snapshot(b, MAX_THREADS);
	err = recorder__stderr(it.rec);
	for (s = err; (s = next_latency(s, &ms, &tid)); named++) {
		const struct schedstat *s0 = schedstat__find(a, na, tid);
		const struct schedstat *s1 = schedstat__find(b, nb, tid);
		double kernel;

		cr_expect(tid != itest_tid("writer") && tid != itest_tid("reader"),
			  "slowread's sleeping thread %d fired sched-latency (%.1f ms):\n%s", tid, ms,
			  err);
		if (!s1) {
			unknown++;
			cr_log_info("tid %d (%.1f ms) exited before the check", tid, ms);
			continue;
		}
		/* A thread created during the recording had waited nothing before it. */
		kernel = (s1->delay_ns - (s0 ? s0->delay_ns : 0)) / 1e6;
		cr_expect(ms <= kernel * 1.02 + 1, "tid %d (pid %d) fired sched-latency %.1f ms; the "
			  "kernel counts %.3f ms of run delay over the whole recording:\n%s", tid,
			  (int)s1->pid, ms, kernel, err);
	}
	cr_log_info("%zu sched-latency triggers named (%zu of exited threads), %u files",
		    named, unknown, count_files());
	cr_expect_null(strstr(err, "more, of other triggers or threads"), "%s", err);
	for (unsigned n = 1; n <= count_files(); n++)
		load_file(n);
}

/* Messaging load for 20 s (bench/flight.sh runs 60) under a 2 MiB window: the window fills
 * and evicts all along, and its memory never passes the budget. The window's span is longer
 * than the load, so its size is what evicts however slowly a busy machine runs the load. */
Test(flight, window_memory_stays_under_its_budget)
{
	struct workload *load;
	double held, mem;
	const char *s;

	itest_start((const char *[]){ "--flight-recorder=60", "--flight-size", "2", NULL });
	load = workload__start("stress", (const char *[]){ "20000", NULL });
	cr_assert(load, "stress: %s", strerror(errno));
	cr_assert_eq(workload__finish(load, 60), 0);
	workload__free(load);
	kill(recorder__pid(it.rec), SIGUSR1);
	usleep(500 * 1000);
	itest_stop(SIGINT, 0);
	/* "window: X MiB held, at most H of 2 MiB (memory at most M MiB)": H is what the window
	 * held at its fullest, M its pages in memory (mincore) at the fullest the recorder saw. */
	s = strstr(recorder__stderr(it.rec), "window:");
	cr_assert(s && (s = strstr(s, "at most ")) &&
		  sscanf(s, "at most %lf of 2 MiB (memory at most %lf MiB)", &held, &mem) == 2,
		  "%s", recorder__stderr(it.rec));
	cr_log_info("window held at most %.2f MiB, its memory at most %.2f MiB", held, mem);
	cr_expect_leq(held, 2.0);
	cr_expect_geq(held, 1.9, "the load must have filled the window");
	cr_expect_leq(mem, 2.0);
	cr_expect_gt(mem, 1.0);
	cr_assert_eq(count_files(), 1);
	load_file(1);
}

/* File n of a go1.23 recording passes Go 1.23's reader and its viewer (what check-trace checks
 * of the format); its -d=1 text, which the caller frees. */
static char *load_file123(unsigned n)
{
	struct goparse_result r;
	char *text = NULL;

	cr_assert_eq(goparse_123_text(file_name(n), 1, &r, &text), 0);
	cr_assert(r.ok, "%s: go 1.23 -d=1: %s", file_name(n), r.error);
	cr_assert_eq(goparse_123_views(file_name(n), &r), 0);
	cr_assert(r.ok, "%s: go 1.23 viewer: %s", file_name(n), r.error);
	return text;
}

/* The trigger marks in a go1.23 file's text that say what: its lxtrace.trigger Logs. */
static unsigned marks123(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *l = text; (l = strstr(l, "Category=\"lxtrace.trigger\"")); l++) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);

		n += memmem(l, len, what, strlen(what)) != NULL;
	}
	return n;
}

/* Go 1.22+ files from memory: file n, written 100 ms after the n-th SIGUSR1, holds that one
 * and the ones before it sent within a second of it (a window of 2 s holds them; on a quiet
 * machine all of them), never a later one. */
Test(flight, go123_sigusr1_files_hold_their_trigger)
{
	three_sigusr1((const char *[]){ "--format=go1.23", "--flight-recorder=2", "--min-gap",
					"0.1", "--after", "0.1", NULL });
	cr_expect(strstr(recorder__stderr(it.rec), "; 3 triggers: 3 with a file"), "%s",
		  recorder__stderr(it.rec));
	for (unsigned n = 1; n <= 3; n++) {
		char *text = load_file123(n);
		struct file_line l = file_line(n);

		unsigned near = 1, marks = marks123(text, "SIGUSR1");

		for (unsigned j = 0; j + 1 < n; j++)
			near += sent_ns[n - 1] - sent_ns[j] <= 1000 * MS;
		cr_expect(marks >= near && marks <= n, "%s: %u marks of SIGUSR1, %u of them sent "
			  "within 1 s, %u in all", file_name(n), marks, near, n);
		cr_expect(!strncmp(l.rest, ", for SIGUSR1 at ", 17), "%s", l.rest);
		free(text);
	}
}

/* A stall in a recording longer than the window: one go1.23 file, holding the trigger, of
 * about the window's length (whole generations of a tenth of it), and what the window let go
 * counted in the summary. */
Test(flight, go123_stall_file_is_the_last_window_of_generations)
{
	unsigned long long gens = 0, events = 0, oversize = 1;
	const char *s;
	struct file_line l;
	char *text;

	itest_start((const char *[]){ "--format=go1.23", "--flight-recorder=2", "--trigger",
				      "sched-latency>50ms,comm=stall", NULL });
	/* 4 s of idling (twice the window), a 150 ms stall, 4 s of idling. */
	itest_run("stall", (const char *[]){ "4000", "150", "1", NULL }, 60);
	itest_stop(SIGINT, 0);
	cr_assert_eq(count_files(), 1, "%u files; recorder said:\n%s", count_files(),
		     recorder__stderr(it.rec));
	text = load_file123(1);
	cr_expect_eq(marks123(text, "sched-latency"), 1, "%u marks",
		     marks123(text, "sched-latency"));
	free(text);
	l = file_line(1);
	cr_expect(l.span >= 1.7 && l.span <= 2.3 && l.from >= 1.0, "%.1f s, %.1f to %.1f s",
		  l.span, l.from, l.to);
	s = strstr(recorder__stderr(it.rec), " generations evicted, ");
	cr_assert(s, "no count of what the window let go:\n%s", recorder__stderr(it.rec));
	while (s > recorder__stderr(it.rec) && s[-1] != ' ')
		s--;
	cr_assert_eq(sscanf(s, "%llu generations evicted, %llu events (%llu larger", &gens, &events,
			    &oversize), 3, "%.80s", s);
	cr_expect_geq(gens, 10, "a recording of over 4 s in generations of 0.2 s: %llu evicted",
		      gens);
	cr_expect_gt(events, 0);
	cr_expect_eq(oversize, 0);
}
