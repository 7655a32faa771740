/* format123.c - `lxtrace record --format=go1.23`, the go1.23 format (docs/format.md §18):
 * every file passes Go 1.23's reader (-d=2 and -d=1) and viewer pages; a ping-pong's runs on
 * a CPU are the kernel's count (/proc/PID/task/TID/schedstat); a thread blocked in read()
 * since before the start is shown waiting there, with its stack, from the start; the thread
 * view has a row per Linux thread of a 50-thread program; goroutines are grouped by their
 * program. */
#include <stdint.h>
#include <time.h>

#include "tests/integration/itest.h"
#include "tests/lib/httpget.h"
#include "tests/lib/schedstat.h"
#include "tests/lib/viewer.h"

#define MAX_THREADS 8192
#define VIEWER_TIMEOUT_MS (180 * 1000)
#define WORKERS 50

static struct viewer *viewer;
static char *text;	/* Go 1.23's -d=1 of the recording */

static void format123_fini(void)
{
	viewer__stop(viewer);
	viewer = NULL;
	free(text);
	text = NULL;
	itest_fini();
}

TestSuite(format123, .fini = format123_fini, .timeout = 300);

static const char *const go123[] = { "--format=go1.23", NULL };

/* The recording passes Go 1.23's reader at both levels and its viewer's pages, as check-trace
 * checks a file of this format; its -d=1 text in `text`. */
static void load123(void)
{
	const char *path = recorder__path(it.rec);
	struct goparse_result r;
	char *raw = NULL;

	cr_assert_eq(goparse_123_text(path, 2, &r, &raw), 0);
	free(raw);
	cr_assert(r.ok, "go 1.23 -d=2: %s", r.error);
	cr_assert_eq(goparse_123_text(path, 1, &r, &text), 0);
	cr_assert(r.ok, "go 1.23 -d=1: %s", r.error);
	cr_assert(strstr(text, "Sync"), "no generation in the file");
	cr_assert_eq(goparse_123_views(path, &r), 0);
	cr_assert(r.ok, "go 1.23 viewer: %s", r.error);
}

/* Each line of `text` that is an event: its P, time and the rest from the event's kind on. */
static const char *next_event(const char **at, long long *p, unsigned long long *ts)
{
	static char line[4096];

	while (**at) {
		const char *nl = strchr(*at, '\n'), *kind;
		size_t n = nl ? (size_t)(nl - *at) : strlen(*at);
		long long m, g;
		int off = 0;

		snprintf(line, sizeof(line), "%.*s", (int)n, *at);
		*at += n + (nl != NULL);
		if (sscanf(line, "M=%lld P=%lld G=%lld %n", &m, p, &g, &off) != 3 || !off)
			continue;
		kind = line + off;
		if (sscanf(strstr(kind, "Time=") ? strstr(kind, "Time=") : "", "Time=%llu", ts) != 1)
			continue;
		return kind;
	}
	return NULL;
}

/* Times thread tid got a CPU in (from, to]: its goroutine's transitions to Running (from
 * Runnable, or back from a syscall). */
static size_t runs(uint32_t tid, uint64_t from, uint64_t to)
{
	const char *at = text, *kind, *res;
	unsigned long long ts, g;
	size_t n = 0;
	long long p;

	while ((kind = next_event(&at, &p, &ts))) {
		if (strncmp(kind, "StateTransition", 15) || ts <= from || ts > to)
			continue;
		res = strstr(kind, "Resource=Goroutine(");
		if (res && sscanf(res, "Resource=Goroutine(%llu)", &g) == 1 &&
		    (uint32_t)(g & 0xffffffffull) == tid && strstr(kind, "->Running"))
			n++;
	}
	return n;
}

/* A ping-pong of two threads over pipes, for 250 ms in the middle of a recording: each
 * thread's runs on a CPU in the file are the runs the kernel counted (schedstat's pcount,
 * read at both ends), give or take a run at each end, where the reading and
 * the thread's switch race. The file's times are the clock's own on a machine up less than
 * 52 days (docs/format.md §18.1), as CI's are. */
Test(format123, pingpong_runs_are_the_kernels)
{
	static struct schedstat a[MAX_THREADS], b[MAX_THREADS];
	size_t na, nb, compared = 0;
	uint64_t kernel_total = 0;
	struct workload *w;
	pid_t pid;

	itest_start(go123);
	w = workload__start("pingpong", (const char *[]){ "10000000", NULL });
	cr_assert_not_null(w, "cannot start pingpong: %s", strerror(errno));
	pid = workload__pid(w);
	nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	na = schedstat__snapshot(a, MAX_THREADS);
	nanosleep(&(struct timespec){ 0, 250 * 1000 * 1000 }, NULL);
	nb = schedstat__snapshot(b, MAX_THREADS);
	/* Ended before the recording, whose -d=1 text grows by some 40 MB a second of it. */
	workload__free(w);
	itest_stop(SIGINT, 0);
	load123();
	for (size_t i = 0; i < nb; i++) {
		const struct schedstat *s0 = schedstat__find(a, na, b[i].tid), *s1 = &b[i];
		uint64_t kernel;
		size_t trace;

		if (s1->pid != pid || !s0)
			continue;
		kernel = s1->pcount - s0->pcount;
		trace = runs((uint32_t)s1->tid, s0->at, s1->at);
		cr_log_info("pingpong tid %d: %llu runs by the kernel, %zu in the file",
			    (int)s1->tid, (unsigned long long)kernel, trace);
		cr_expect((long long)trace >= (long long)kernel - 2 && trace <= kernel + 2,
			  "tid %d: %zu runs in the file, %llu by the kernel", (int)s1->tid, trace,
			  (unsigned long long)kernel);
		kernel_total += kernel;
		compared++;
	}
	cr_assert_geq(compared, 3, "only %zu threads of the ping-pong compared", compared);
	cr_assert_gt(kernel_total, 500, "the ping-pong hardly ran: %llu runs",
		     (unsigned long long)kernel_total);
}

/* A reader blocked in read() on a pipe since before the recording: in the file's first
 * generation it blocks, at a stack naming `syscall read` and its process, and the 1.23
 * viewer lists it in its program's group (named by that stack's root frame). */
Test(format123, blocked_read_since_before_the_start_shows_its_stack)
{
	char key[64], why[512], *page;
	const char *at, *kind, *st, *end;
	unsigned long long ts;
	struct workload *w;
	pid_t reader;
	long long p;
	bool found = false;

	/* Blocked 10 s (slowread's longest): a start beside a busy machine takes seconds. */
	w = workload__start("slowread", (const char *[]){ "1", "10000", NULL });
	cr_assert_not_null(w, "cannot start slowread: %s", strerror(errno));
	nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	itest_start(go123);
	nanosleep(&(struct timespec){ 0, 800 * 1000 * 1000 }, NULL);
	itest_stop(SIGINT, 0);
	cr_assert_eq(workload__finish(w, 30), 0);
	it.wl = w;
	reader = itest_tid("reader");
	load123();
	snprintf(key, sizeof(key), "Resource=Goroutine(%d) ", (int)reader);
	for (at = text; !found && (kind = next_event(&at, &p, &ts));) {
		if (!strstr(kind, key) || !strstr(kind, "Running->Waiting"))
			continue;
		st = strstr(at, "TransitionStack=");
		end = strstr(at, "\n\n");
		cr_assert(st && end && st < end, "the reader's first block has no stack");
		cr_expect(strstr(st, "syscall read") && strstr(st, itest_ident("slowread")) &&
			  strstr(st, "syscall read") < end, "the reader's stack lacks `syscall read` or "
			  "'%s': %.400s", itest_ident("slowread"), st);
		found = true;
	}
	cr_assert(found, "no event of the reader (tid %d)", (int)reader);
	viewer = viewer__start("1.23", recorder__path(it.rec), why, sizeof(why));
	cr_assert(viewer, "%s", why);
	page = viewer__get(viewer, "/goroutines", http_now_ms() + VIEWER_TIMEOUT_MS, why,
			   sizeof(why));
	cr_assert(page, "/goroutines: %s", why);
	cr_expect_geq(viewer__group_count("1.23", page, "slowread"), 2,
		      "/goroutines: group 'slowread' of %ld, expected its reader and writer",
		      viewer__group_count("1.23", page, "slowread"));
	free(page);
}

/* The `threads` workload: its main thread and 50 workers are a row each in the 1.23 thread
 * view, named by tid. */
Test(format123, thread_view_has_a_row_per_linux_thread)
{
	char why[512], row[96], *json;
	const char *role;
	size_t n = 0;
	pid_t tid;

	itest_start(go123);
	itest_run("threads", (const char *[]){ "50", NULL }, 60);
	itest_stop(SIGINT, 0);
	load123();
	viewer = viewer__start("1.23", recorder__path(it.rec), why, sizeof(why));
	cr_assert(viewer, "%s", why);
	json = viewer__get(viewer, "/jsontrace?view=thread", http_now_ms() + VIEWER_TIMEOUT_MS,
			   why, sizeof(why));
	cr_assert(json, "/jsontrace?view=thread: %s", why);
	for (size_t k = 0; workload__thread(it.wl, k, &role, &tid); k++) {
		const char *first;

		snprintf(row, sizeof(row), "\"tid\":%d,\"args\":{\"name\":\"Thread %d\"}", (int)tid,
			 (int)tid);
		first = strstr(json, row);
		cr_expect(first, "no row for thread %d (%s)", (int)tid, role);
		cr_expect(!first || !strstr(first + 1, row), "two rows for thread %d", (int)tid);
		n += first != NULL;
	}
	cr_expect_eq(n, WORKERS + 1, "%zu rows of the workload's threads, expected %d", n,
		     WORKERS + 1);
	/* Wakeups with no waker thread come from lxtrace's row, not from no thread's. */
	cr_expect(!strstr(json, "18446744073709551615"), "the thread view names thread "
		  "18446744073709551615");
	free(json);
	json = viewer__get(viewer, "/jsontrace?view=proc", http_now_ms() + VIEWER_TIMEOUT_MS,
			   why, sizeof(why));
	cr_assert(json, "/jsontrace?view=proc: %s", why);
	cr_expect(!strstr(json, "18446744073709551615"), "the proc view names thread "
		  "18446744073709551615");
	free(json);
}

/* Go 1.23 names a goroutine by the root frame of its first stack: its creation's start
 * location. A shell starts 20 sleepers (fork, then exec): each is a goroutine of the group
 * "sleeper" on the Goroutines page, and the forked copies before exec are the shell's. Before
 * the start locations were written, none was: no group "sleeper", and the copies were in
 * "(Inactive, no stack trace sampled)". */
Test(format123, goroutines_are_grouped_by_program)
{
	char why[512], script[512], *page;
	long n;

	snprintf(script, sizeof(script), "for i in $(seq 20); do %s 1 >/dev/null; done",
		 record__build_path("tests/workloads/sleeper"));
	itest_start(go123);
	cr_assert_eq(run_capture((const char *[]){ "/bin/sh", "-c", script, NULL }, 60, NULL, NULL),
		     0);
	itest_stop(SIGINT, 0);
	load123();
	viewer = viewer__start("1.23", recorder__path(it.rec), why, sizeof(why));
	cr_assert(viewer, "%s", why);
	page = viewer__get(viewer, "/goroutines", http_now_ms() + VIEWER_TIMEOUT_MS, why,
			   sizeof(why));
	cr_assert(page, "/goroutines: %s", why);
	n = viewer__group_count("1.23", page, "sleeper");
	free(page);
	cr_expect_eq(n, 20, "the Goroutines page's group sleeper has %ld goroutines, not 20", n);
}

/* The summary's "open it" names a viewer of this machine that opens the file: the go on
 * Debian 12's PATH is 1.19, which cannot; the one it names says go1.22 or later. */
Test(format123, the_summary_names_a_viewer_that_opens_the_file)
{
	char cmd[128], *version = NULL;
	const char *line;
	int minor = 0, rc;

	itest_start(go123);
	itest_run("sleeper", (const char *[]){ "5", NULL }, 30);
	itest_stop(SIGINT, 0);
	line = strstr(recorder__stderr(it.rec), "open it:");
	cr_assert(line, "no \"open it\" line:\n%s", recorder__stderr(it.rec));
	cr_assert_eq(sscanf(line, "open it: %127s", cmd), 1);
	rc = run_capture((const char *[]){ cmd, "version", NULL }, 30, &version, NULL);
	cr_assert_eq(rc, 0, "%s version: exit %d (the line: %.120s)", cmd, rc, line);
	cr_assert(version && sscanf(strstr(version, "go1.") ? strstr(version, "go1.") : "",
				    "go1.%d", &minor) == 1, "%s version: %s", cmd, version);
	cr_expect_geq(minor, 22, "\"%s\" is Go 1.%d, which does not open a go1.23 file", cmd,
		      minor);
	free(version);
}
