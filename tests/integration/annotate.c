/* annotate.c - user annotations (include/lxtrace/annotate.h) recorded with --usdt, or found by
 * lxtrace itself in a command it starts: the `annotated` workload's tasks, regions and logs come
 * out in order, on the threads that made them, with the right names, nesting, task ids and
 * parent links, strings read even from a page the program never touched; Go 1.23's viewer
 * lists the tasks on its user task page; a binary without the probes is a clear error.
 *
 * The expected sequence mirrors Go's TestUserTaskRegion (runtime/trace/annotation_test.go). */
#include <sys/mount.h>

#include "tests/integration/itest.h"
#include "tests/lib/httpget.h"
#include "tests/lib/viewer.h"

#define ROUNDS 3
#define VIEWER_TIMEOUT_MS (180 * 1000)
#define CUT "\u2026"

static struct viewer *viewer;
static char cmd_trace[64];	/* the trace of a recording run here, not by it.rec */

static void annotate_fini(void)
{
	viewer__stop(viewer);
	viewer = NULL;
	if (cmd_trace[0])
		unlink(cmd_trace);
	cmd_trace[0] = '\0';
	itest_fini();
}

TestSuite(annotate, .fini = annotate_fini, .timeout = 300);

/* Records ROUNDS rounds of the annotated workload, its probes attached with --usdt. */
static void record_annotated(void)
{
	char usdt[4096], rounds[16];

	snprintf(usdt, sizeof(usdt), "%s", record__workload_path("annotated"));
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	itest_record((const char *[]){ "--usdt", usdt, NULL }, "annotated",
		     (const char *[]){ rounds, NULL }, 60);
}

/* Task references in the expected sequence: the round's two tasks, or the background. */
enum task_ref { BG, TASK0, TASK1 };

struct want {
	uint8_t type;
	const char *thread;	/* "main" or "worker" (the round's worker) */
	enum task_ref task;
	int mode;		/* UserRegion: 0 start, 1 end */
	const char *name;	/* task type, region type or log key */
	const char *msg;	/* UserLog */
	enum task_ref parent;	/* UserTaskCreate */
};

static char long_key[128], long_msg[512];

/* One round, as the workload's comment states it; the cut log and the log of strings in a
 * cold page only in the last round. */
static size_t round_events(bool last, struct want *w)
{
	size_t n = 0;

	w[n++] = (struct want){ GT_EV_USER_TASK_CREATE, "main", TASK0, 0, "task0", NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_TASK_CREATE, "main", TASK1, 0, "task1", NULL, TASK0 };
	w[n++] = (struct want){ GT_EV_USER_REGION, "worker", TASK0, 0, "region0", NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_REGION, "worker", TASK0, 0, "region1", NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_LOG, "worker", TASK0, 0, "key0", "0123456789abcdef", BG };
	if (last)
		w[n++] = (struct want){ GT_EV_USER_LOG, "worker", TASK1, 0, long_key, long_msg, BG };
	w[n++] = (struct want){ GT_EV_USER_REGION, "worker", TASK0, 1, "region1", NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_REGION, "worker", TASK0, 1, "region0", NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_TASK_END, "worker", TASK1, 0, NULL, NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_TASK_END, "worker", TASK0, 0, NULL, NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_REGION, "main", BG, 0, "background region", NULL, BG };
	w[n++] = (struct want){ GT_EV_USER_REGION, "main", BG, 1, "background region", NULL, BG };
	if (last)
		w[n++] = (struct want){ GT_EV_USER_LOG, "main", BG, 0, "cold", "page", BG };
	return n;
}

/* A user event the program made: a task, region or log, not lxtrace's own lost-records log. */
static bool is_user_event(const struct gt_event *e)
{
	const char *key;

	if (e->type < GT_EV_USER_TASK_CREATE || e->type > GT_EV_USER_LOG)
		return false;
	key = e->type == GT_EV_USER_LOG ? gt_trace__string(it.trace, e->args[1]) : NULL;
	return !key || strcmp(key, "lxtrace.lost");
}

static void print_user_events(const uint32_t *tids, size_t ntids)
{
	const struct gt_event *ev = gt_trace__events(it.trace);

	fprintf(stderr, "--- user events of the workload:\n");
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_event *e = &ev[i];
		const char *s = e->nargs > 2 ? gt_trace__string(it.trace, e->args[e->type == GT_EV_USER_LOG ? 1 : 2]) : NULL;

		for (size_t k = 0; k < ntids; k++)
			if (is_user_event(e) && (uint32_t)e->g == tids[k])
				fprintf(stderr, "  g=%llu type=%u args=%llu,%llu name=%s\n",
					(unsigned long long)e->g, e->type, (unsigned long long)e->args[0],
					(unsigned long long)e->args[1], s ? s : "-");
	}
}

/* The workload's user events in it.trace are exactly ROUNDS rounds of round_events, and the
 * recorder's summary reports no region-nesting repair. */
static void expect_rounds(const char *summary)
{
	uint32_t tids[ROUNDS + 1];
	uint64_t seen_tasks[2 * ROUNDS], ids[3] = { 0 };
	struct want want[16];
	const struct gt_event *ev;
	const char *ident;
	size_t i = 0, nwant = 0, k = 0, nseen = 0, nev;
	int round = 0;

	memset(long_key, 'n', 63);
	memcpy(long_key + 63, CUT, sizeof(CUT));
	memset(long_msg, 'm', 255);
	memcpy(long_msg + 255, CUT, sizeof(CUT));

	ident = itest_ident("annotated");
	tids[0] = (uint32_t)itest_tid("main");
	for (int r = 0; r < ROUNDS; r++) {
		char role[32];

		snprintf(role, sizeof(role), "worker-%d", r);
		tids[r + 1] = (uint32_t)itest_tid(role);
	}

	ev = gt_trace__events(it.trace);
	nev = gt_trace__nevents(it.trace);
	for (i = 0; i < nev; i++) {
		const struct gt_event *e = &ev[i];
		const struct want *w;
		uint32_t tid;
		bool ours = false;

		if (!is_user_event(e))
			continue;
		for (size_t t = 0; t <= ROUNDS; t++)
			ours |= (uint32_t)e->g == tids[t];
		if (!ours)
			continue;
		if (k == nwant) {
			if (round == ROUNDS) {
				print_user_events(tids, ROUNDS + 1);
				cr_assert_fail("user event of type %u after the last round", e->type);
			}
			nwant = round_events(round == ROUNDS - 1, want);
			k = 0;
			round++;
			ids[TASK0] = ids[TASK1] = 0;
		}
		w = &want[k++];
		tid = !strcmp(w->thread, "main") ? tids[0] : tids[round];
		if (e->type != w->type || (uint32_t)e->g != tid) {
			print_user_events(tids, ROUNDS + 1);
			cr_assert_fail("round %d, event %zu: type %u on thread %u, expected type %u on %s (%u)",
				       round, k, e->type, (uint32_t)e->g, w->type, w->thread, tid);
		}
		/* Every user event has a stack naming its thread: the viewers' pages need one. */
		cr_assert(e->stack && tq_process(e->stack) && !strcmp(tq_process(e->stack), ident),
			  "round %d, event %zu: stack %s, expected the identity '%s'", round, k,
			  e->stack ? tq_process(e->stack) : "(none)", ident);

		if (e->type == GT_EV_USER_TASK_CREATE) {
			/* A fresh id, never used before in the file; the parent is the task named. */
			cr_assert_neq(e->args[0], 0, "task %s created with id 0", w->name);
			for (size_t s = 0; s < nseen; s++)
				cr_assert_neq(seen_tasks[s], e->args[0], "task id %llu reused",
					      (unsigned long long)e->args[0]);
			seen_tasks[nseen++] = e->args[0];
			ids[w->task] = e->args[0];
			cr_assert_eq(e->args[1], ids[w->parent], "task %s: parent %llu, expected %llu",
				     w->name, (unsigned long long)e->args[1],
				     (unsigned long long)ids[w->parent]);
		} else {
			cr_assert_eq(e->args[0], ids[w->task], "round %d, event %zu: task %llu, expected %llu",
				     round, k, (unsigned long long)e->args[0],
				     (unsigned long long)ids[w->task]);
		}
		if (e->type == GT_EV_USER_REGION)
			cr_assert_eq(e->args[1], (uint64_t)w->mode, "round %d, event %zu: region mode %llu",
				     round, k, (unsigned long long)e->args[1]);
		if (w->name) {
			uint64_t sid = e->args[e->type == GT_EV_USER_LOG ? 1 : 2];
			const char *name = gt_trace__string(it.trace, sid);

			cr_assert(name && !strcmp(name, w->name), "round %d, event %zu: name '%s', expected '%s'",
				  round, k, name ? name : "(undefined)", w->name);
		}
		if (w->msg)
			cr_assert(e->msg_len == strlen(w->msg) && !memcmp(e->msg, w->msg, e->msg_len),
				  "round %d, event %zu: message '%.*s', expected '%s'", round, k,
				  (int)e->msg_len, e->msg, w->msg);
	}
	if (round != ROUNDS || k != nwant)
		print_user_events(tids, ROUNDS + 1);
	cr_assert(round == ROUNDS && k == nwant, "only %d rounds (event %zu of %zu) of %d in the trace",
		  round, k, nwant, ROUNDS);
	/* The summary names only the repairs that happened. */
	cr_assert(!strstr(summary, "region-nesting"), "the model repaired region nesting:\n%s",
		  summary);
}

Test(annotate, tasks_regions_and_logs_in_order)
{
	record_annotated();
	expect_rounds(recorder__stderr(it.rec));
}

/* Runs lxtrace record -o cmd_trace -- annotated ROUNDS and asserts it exited 0; the
 * command's stdout (when out is not NULL) and lxtrace's stderr in *out and *err. */
static void record_command(char **out, char **err)
{
	char prog[4096], rounds[16];
	int rc, status;

	itest_require_root();
	rc = record__tmpfile(cmd_trace, sizeof(cmd_trace), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	snprintf(prog, sizeof(prog), "%s", record__workload_path("annotated"));
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	status = run_capture((const char *[]){ record__build_path("lxtrace"), "record", "-o", cmd_trace,
					       "--", prog, rounds, NULL }, 60, out, err);
	cr_assert_eq(status, 0, "lxtrace record -- annotated: status %d, stderr:\n%s", status,
		     *err ? *err : "");
	if (out)
		it.wl = workload__from_output(*out, status);
}

/* Without --usdt: lxtrace finds the probes of the command it starts by itself, and the trace
 * holds the same events. The command's stdout is lxtrace's (which writes only to stderr). */
Test(annotate, command_is_attached_without_usdt)
{
	char *out = NULL, *err = NULL;

	record_command(&out, &err);
	free(out);
	cr_assert(it.wl, "reading the workload's report: %s", strerror(errno));
	itest_load_file(cmd_trace);
	expect_rounds(err ? err : "");
	free(err);
}

/* In a target mode the probes still fire in every process that runs the file; the programs
 * drop the hits of processes outside the target before they write anything. */
Test(annotate, untraced_processes_annotations_are_dropped)
{
	char usdt[4096];
	const struct gt_event *ev;

	snprintf(usdt, sizeof(usdt), "%s", record__workload_path("annotated"));
	/* -v: the records by kind are among the summary's internals. */
	itest_start((const char *[]){ "-v", "--usdt", usdt, "--", "/bin/sleep", "3", NULL });
	itest_run("annotated", (const char *[]){ "2", NULL }, 60);
	itest_stop(0, 0);
	itest_load();
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++)
		cr_assert(!is_user_event(&ev[i]), "a user event (type %u) of goroutine %llu in the trace",
			  ev[i].type, (unsigned long long)ev[i].g);
	cr_assert(strstr(recorder__stderr(it.rec), " 0 annotations"),
		  "the recorder got annotation records:\n%s", recorder__stderr(it.rec));
}

/* The count the user task page shows for task type `type`, or -1. */
static long task_count(const char *page, const char *type)
{
	char cell[128], link[128];
	const char *p;
	long n;

	snprintf(cell, sizeof(cell), "<td>%s</td>", type);
	snprintf(link, sizeof(link), "/usertask?type=%s\">", type);
	p = strstr(page, cell);
	p = p ? strstr(p, link) : NULL;
	return p && sscanf(p + strlen(link), "%ld", &n) == 1 ? n : -1;
}

/* The command runs as lxtrace's target, so other processes' annotations (a test run beside
 * this one) stay out of the counts. */
Test(annotate, go_viewer_lists_the_tasks)
{
	long deadline = http_now_ms() + VIEWER_TIMEOUT_MS;
	static const char *const pages[] = { "/userregions", "/usertask?type=task0", "/goroutines" };
	char why[512], *page, *err = NULL;

	record_command(NULL, &err);
	free(err);
	viewer = viewer__start("1.23", cmd_trace, why, sizeof(why));
	cr_assert(viewer, "%s", why);

	page = viewer__get(viewer, "/usertasks", deadline, why, sizeof(why));
	cr_assert(page, "Go 1.23 viewer: %s", why);
	cr_assert_eq(task_count(page, "task0"), ROUNDS, "/usertasks: task0 count %ld, expected %d",
		     task_count(page, "task0"), ROUNDS);
	cr_assert_eq(task_count(page, "task1"), ROUNDS, "/usertasks: task1 count %ld, expected %d",
		     task_count(page, "task1"), ROUNDS);
	free(page);
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		page = viewer__get(viewer, pages[i], deadline, why, sizeof(why));
		cr_assert(page, "Go 1.23 viewer, %s: %s", pages[i], why);
		free(page);
	}
}

Test(annotate, usdt_path_without_probes_is_an_error)
{
	const char *argv[] = { record__build_path("lxtrace"), "record", "-o", "/dev/null", "-d", "1",
			       "--usdt", "/bin/true", NULL };
	char *err = NULL;
	int status;

	itest_require_root();
	status = run_capture(argv, 60, NULL, &err);
	cr_assert(status == 1 && err && strstr(err, "no lxtrace annotation probes"),
		  "lxtrace record --usdt /bin/true: status %d, stderr:\n%s", status, err ? err : "");
	free(err);
}

/* An annotation string whose page takes long to come (a stalled FUSE file, a userfaultfd that
 * waits) must not hold its CPU's ring: the probe faults it in before it reserves the record,
 * so the records the CPU sends meanwhile are read in time, not after the stall and late. */
Test(annotate, a_stalled_string_holds_back_no_record)
{
	char usdt[4096];
	const char *err;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("the workload ticks on CPUs 0 and 1");
	snprintf(usdt, sizeof(usdt), "%s", record__workload_path("stalledlog"));
	/* -v: records delivered late are among the summary's internals. */
	itest_record((const char *[]){ "-v", "--usdt", usdt, NULL }, "stalledlog",
		     (const char *[]){ "800", NULL }, 60);
	err = recorder__stderr(it.rec);
	cr_assert_geq(itest_stat("ticks-0"), 100, "the ticker on the stalled CPU did not tick");
	cr_assert_eq(tq_count_logs(it.trace, "slow"), 1, "the stalled log is not in the trace");
	cr_assert(strstr(err, "out of order:  0 records"),
		  "records came late while the string's page stalled:\n%s", err);
}

/* The uprobes tracefs lists on the file at path (libbpf's legacy probes, where the kernel has
 * no uprobe PMU: the others are listed nowhere), read from a tracefs mounted here for the
 * while: -1 when it cannot be read. */
static long tracefs_uprobes_on(const char *path)
{
	char dir[] = "/tmp/lxtrace-tracefs-XXXXXX", events[64], *line = NULL;
	size_t cap = 0;
	long n = -1;
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	if (!mount("tracefs", dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		snprintf(events, sizeof(events), "%s/uprobe_events", dir);
		f = fopen(events, "r");
		if (f) {
			for (n = 0; getline(&line, &cap, f) > 0;)
				n += strstr(line, path) != NULL;
			fclose(f);
		}
		umount(dir);
	}
	rmdir(dir);
	free(line);
	return n;
}

/* A stop with annotation probes: the trace is finished before they are detached (their removal
 * takes the kernel ~0.1 s each: docs/record.md), yet lxtrace exits 0 only once they are gone:
 * every annotation made before the stop is in the file, none of its programs outlives it (a
 * link holds its program), and no uprobe of the file is left in tracefs. */
Test(annotate, a_stop_leaves_no_probe_behind)
{
	const char *path = record__workload_path("annotated");
	long left;

	record_annotated();
	expect_rounds(recorder__stderr(it.rec));
	cr_assert(strstr(recorder__stderr(it.rec), "open it:"), "no whole summary:\n%s",
		  recorder__stderr(it.rec));
	left = tracefs_uprobes_on(path);
	cr_assert_geq(left, 0, "cannot read uprobe_events from a tracefs");
	cr_assert_eq(left, 0, "%ld uprobes of %s left in tracefs after the recorder exited", left,
		     path);
}
