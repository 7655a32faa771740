/* viewers.c - what a person sees in both Go viewers (docs/viewing.md): programs a shell execs
 * and the command lxtrace starts appear under their own names on the Goroutines page, the 50
 * threads of one program form one group, threads asleep when recording began are in their
 * program's group and not drawn running a syscall anywhere, and no page shows an id like
 * 18446744073709551615. */
#include <stdlib.h>
#include <sys/wait.h>

#include "tests/integration/itest.h"
#include "tests/lib/httpget.h"
#include "tests/lib/viewer.h"

#define VIEWER_TIMEOUT_MS (180 * 1000)
#define WORKERS 50

static struct viewer *viewer;
static char cmd_trace[64];
static pid_t asleep = -1;

static void viewers_fini(void)
{
	viewer__stop(viewer);
	viewer = NULL;
	if (cmd_trace[0])
		unlink(cmd_trace);
	cmd_trace[0] = '\0';
	if (asleep > 0) {
		kill(asleep, SIGKILL);
		waitpid(asleep, NULL, 0);
		asleep = -1;
	}
	itest_fini();
}

TestSuite(viewers, .fini = viewers_fini, .timeout = 600);

static const char *const versions[] = { "1.19", "1.23" };

static char *get(const char *ver, const char *page, long deadline)
{
	char why[512], *body = viewer__get(viewer, page, deadline, why, sizeof(why));

	cr_assert(body, "Go %s viewer, %s: %s (log in %s)", ver, page, why, viewer__log(viewer));
	return body;
}

/* Every page a person opens: none may show the ids Go prints for "none" (2^64-1, and as a
 * float in the browser). */
static void expect_no_huge_ids(const char *ver, long deadline)
{
	static const char *const pages19[] = { "/", "/goroutines", "/jsontrace", "/usertasks",
					       "/userregions", "/io", "/block", "/syscall", "/sched" };
	static const char *const pages23[] = { "/", "/goroutines", "/jsontrace?view=proc",
					       "/jsontrace?view=thread", "/usertasks", "/userregions",
					       "/io", "/block", "/syscall", "/sched" };
	const char *const *pages = strcmp(ver, "1.19") ? pages23 : pages19;
	size_t n = strcmp(ver, "1.19") ? sizeof(pages23) / sizeof(*pages) : sizeof(pages19) / sizeof(*pages);

	for (size_t i = 0; i < n; i++) {
		char *body = get(ver, pages[i], deadline);

		cr_expect(!strstr(body, "18446744073709551615") && !strstr(body, "18446744073709552000"),
			  "Go %s %s shows the id 18446744073709551615", ver, pages[i]);
		free(body);
	}
}

/* A shell that sleeps, runs cat and curl, then execs the `threads` workload: each program
 * exec'd is a group of its own in both viewers, the workload's main thread and 50 workers one
 * group of 51; no group is named after a pid. */
Test(viewers, exec_names_and_program_groups)
{
	long deadline = http_now_ms() + VIEWER_TIMEOUT_MS;
	static const char *const progs[] = { "sh", "sleep", "cat", "curl" };
	char script[4096 + 256], why[512], *err = NULL;
	int rc, status;

	itest_require_root();
	rc = record__tmpfile(cmd_trace, sizeof(cmd_trace), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	snprintf(script, sizeof(script), "sleep 0.2; cat /etc/hostname >/dev/null; "
		 "curl -s file:///etc/hostname >/dev/null; exec %s %d >/dev/null",
		 record__workload_path("threads"), WORKERS);
	status = run_capture((const char *[]){ record__build_path("lxtrace"), "record", "-o", cmd_trace,
					       "--", "sh", "-c", script, NULL }, 60, NULL, &err);
	cr_assert_eq(status, 0, "lxtrace record -- sh -c ...: status %d, stderr:\n%s", status, err ? err : "");
	free(err);
	itest_load_file(cmd_trace);
	for (size_t v = 0; v < 2; v++) {
		char *page;

		viewer = viewer__start(versions[v], cmd_trace, why, sizeof(why));
		cr_assert(viewer, "%s", why);
		page = get(versions[v], "/goroutines", deadline);
		for (size_t i = 0; i < sizeof(progs) / sizeof(*progs); i++)
			cr_expect_geq(viewer__group_count(versions[v], page, progs[i]), 1,
				      "Go %s /goroutines: no group '%s'", versions[v], progs[i]);
		cr_expect_eq(viewer__group_count(versions[v], page, "threads"), WORKERS + 1,
			     "Go %s /goroutines: group 'threads' of %ld, expected %d", versions[v],
			     viewer__group_count(versions[v], page, "threads"), WORKERS + 1);
		cr_expect(!strstr(page, "(pid "), "Go %s /goroutines: a group is named after a pid",
			  versions[v]);
		free(page);
		expect_no_huge_ids(versions[v], deadline);
		viewer__stop(viewer);
		viewer = NULL;
	}
}

/* The end of the JSON object that starts at p ('{'), strings skipped. */
static const char *object_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return NULL;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && !--depth) {
			return p;
		}
	}
	return NULL;
}

/* The number after "key": in the object [obj, end), or -1. */
static double field(const char *obj, const char *end, const char *key)
{
	char needle[32];
	const char *p;

	snprintf(needle, sizeof(needle), "\"%s\":", key);
	p = strstr(obj, needle);
	return p && p < end ? strtod(p + strlen(needle), NULL) : -1;
}

/* Slices ("ph":"X") of a timeline's JSON that last longer than max_us and are on row tid (-1:
 * any) or named name (NULL: any name); prints the first few. */
static size_t long_slices(const char *json, long tid, const char *name, double max_us)
{
	size_t n = 0;

	for (const char *p = strstr(json, "\"ph\":\"X\""); p; p = strstr(p + 1, "\"ph\":\"X\"")) {
		const char *obj = p, *end, *nm;

		while (obj > json && *obj != '{')
			obj--;
		end = object_end(obj);
		if (!end)
			break;
		nm = strstr(obj, "\"name\":\"");
		if (field(obj, end, "dur") <= max_us || (tid >= 0 && field(obj, end, "tid") != tid) ||
		    (name && (!nm || nm > end || strncmp(nm + 8, name, strlen(name)))))
			continue;
		if (n++ < 5)
			fprintf(stderr, "  long slice: %.*s\n", (int)(end - obj + 1 > 300 ? 300 : end - obj + 1), obj);
	}
	return n;
}

/* A shell waiting for its child and the child sleeping, both since before the recording: the
 * child, asleep throughout, is in its program's group; no viewer draws either running a
 * syscall (nor running at all) for more than a millisecond, and nothing lasts on the
 * housekeeping P. */
Test(viewers, threads_asleep_at_start_are_not_drawn_running)
{
	long deadline = http_now_ms() + VIEWER_TIMEOUT_MS, ncpus = sysconf(_SC_NPROCESSORS_CONF);
	char why[512], sh_name[32];

	asleep = fork();
	cr_assert_geq(asleep, 0, "fork: %s", strerror(errno));
	if (!asleep) {
		execl("/bin/sh", "sh", "-c", "sleep 5; true", (char *)NULL);
		_exit(127);
	}
	usleep(200 * 1000);
	itest_start(NULL);
	usleep(800 * 1000);
	itest_stop(SIGINT, 0);
	itest_load();
	snprintf(sh_name, sizeof(sh_name), "G%d ", (int)asleep);
	for (size_t v = 0; v < 2; v++) {
		bool is19 = !strcmp(versions[v], "1.19");
		char *json;

		viewer = viewer__start(versions[v], recorder__path(it.rec), why, sizeof(why));
		cr_assert(viewer, "%s", why);
		/* Asleep throughout: Go 1.19 names a goroutine only by its start. */
		json = get(versions[v], "/goroutines", deadline);
		cr_expect_geq(viewer__group_count(versions[v], json, "sleep"), 1,
			      "Go %s /goroutines: no group 'sleep'", versions[v]);
		free(json);
		json = get(versions[v], is19 ? "/jsontrace" : "/jsontrace?view=proc", deadline);
		cr_expect_eq(long_slices(json, ncpus, NULL, 1000), 0,
			     "Go %s: slices longer than 1 ms on the housekeeping P", versions[v]);
		cr_expect_eq(long_slices(json, -1, sh_name, 1000), 0,
			     "Go %s: the sleeping shell drawn running", versions[v]);
		cr_expect_eq(long_slices(json, -1, "syscall\"", 1000), 0,
			     "Go %s: syscall slices longer than 1 ms in view=proc", versions[v]);
		free(json);
		if (!is19) {
			json = get(versions[v], "/jsontrace?view=thread", deadline);
			cr_expect_eq(long_slices(json, -1, sh_name, 1000), 0,
				     "Go 1.23 view=thread: the sleeping shell drawn running");
			free(json);
		}
		expect_no_huge_ids(versions[v], deadline);
		viewer__stop(viewer);
		viewer = NULL;
	}
}

/* The total delay (ns) of viewer ver's profile kind (`-pprof=` net, sync, syscall, sched) of
 * the trace at path, summed from `go tool pprof -raw`; -1 when it cannot be read. */
static double profile_total(const char *ver, const char *kind, const char *path)
{
	char pb[64], cmd[512], *out = NULL;
	double total = -1;
	int rc = record__tmpfile(pb, sizeof(pb), ".pb"), status;

	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	snprintf(cmd, sizeof(cmd), "GOROOT=/usr/lib/go-%s /usr/lib/go-%s/pkg/tool/linux_amd64/trace "
		 "-pprof=%s %s > %s", ver, ver, kind, path, pb);
	status = run_capture((const char *[]){ "/bin/sh", "-c", cmd, NULL }, 300, NULL, NULL);
	if (!status)
		status = run_capture((const char *[]){ "/usr/bin/go", "tool", "pprof", "-raw", pb, NULL },
				     300, &out, NULL);
	unlink(pb);
	if (!status && out) {
		const char *p = strstr(out, "delay/nanoseconds\n");

		/* "   count   delay: location ids", one line per stack, until "Locations". */
		for (total = 0, p = p ? strchr(p, '\n') + 1 : NULL; p && *p == ' '; p = strchr(p, '\n') + 1) {
			unsigned long long count, ns;

			if (sscanf(p, "%llu %llu:", &count, &ns) == 2)
				total += (double)ns;
			if (!strchr(p, '\n'))
				break;
		}
	}
	free(out);
	return total;
}

/* What docs/viewing.md says the profiles agree with, summed from the events as Go 1.19's
 * goroutine analysis sums them: block = futex and file-descriptor waits to their wakeup;
 * syscall = a syscall's GoSysCall to its GoSysExit; sched = a wakeup or creation to the start
 * that follows. ns. */
struct sums {
	double block, syscall, sched;
};

static struct sums event_sums(const struct gt_trace *t)
{
	const struct gt_event *ev = gt_trace__events(t);
	size_t n = gt_trace__nevents(t);
	struct sums s = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct gt_event *e = &ev[i];
		uint64_t g = tq_subject(e);
		uint64_t want;

		if (e->type == GT_EV_GO_BLOCK_SYNC || e->type == GT_EV_GO_BLOCK_SELECT) {
			want = TQ_BIT(GT_EV_GO_UNBLOCK);
		} else if (e->type == GT_EV_GO_SYSCALL) {
			want = TQ_BIT(GT_EV_GO_SYSEXIT) | TQ_BIT(GT_EV_GO_START) | TQ_BIT(GT_EV_GO_SYSCALL);
		} else if ((e->type == GT_EV_GO_UNBLOCK || e->type == GT_EV_GO_CREATE) && e->stack) {
			want = TQ_BIT(GT_EV_GO_START);
		} else {
			continue;
		}
		for (size_t j = i + 1; j < n; j++) {
			const struct gt_event *f = &ev[j];

			if (f->type >= 64 || !(want & TQ_BIT(f->type)) || tq_subject(f) != g)
				continue;
			/* A syscall that did not block ends at the thread's next syscall or start. */
			if (e->type == GT_EV_GO_SYSCALL && f->type == GT_EV_GO_SYSEXIT)
				s.syscall += tq_ns(t, e->ts, f->ts);
			else if (e->type == GT_EV_GO_BLOCK_SYNC || e->type == GT_EV_GO_BLOCK_SELECT)
				s.block += tq_ns(t, e->ts, f->ts);
			else if (e->type != GT_EV_GO_SYSCALL)
				s.sched += tq_ns(t, e->ts, f->ts);
			break;
		}
	}
	return s;
}

static void expect_close(const char *what, double profile, double sum)
{
	cr_log_info("%s: profile %.3f ms, events %.3f ms", what, profile / 1e6, sum / 1e6);
	cr_expect(profile >= 0, "%s: no profile", what);
	cr_expect(profile - sum <= sum / 1000 + 1000 && sum - profile <= sum / 1000 + 1000,
		  "%s: profile %.0f ns, the events sum to %.0f ns", what, profile, sum);
}

/* The profiles agree with the goroutine tables where docs/viewing.md says they should: both
 * viewers' /block and 1.19's /syscall and /sched total what the events add up to; /io is
 * empty. A ping-pong over pipes (waits for a file descriptor, woken by the other side), then
 * vforks (blocking syscalls), run as the recorder's command. */
Test(viewers, profiles_agree_with_the_events)
{
	char script[2 * 4096 + 64], *err = NULL;
	struct sums s;
	int rc, status, len;

	itest_require_root();
	rc = record__tmpfile(cmd_trace, sizeof(cmd_trace), ".trace");
	cr_assert_eq(rc, 0, "tmpfile: %s", strerror(-rc));
	len = snprintf(script, sizeof(script), "%s 2000 >/dev/null && ", record__workload_path("pingpong"));
	snprintf(script + len, sizeof(script) - (size_t)len, "%s 5 >/dev/null", record__workload_path("vforker"));
	status = run_capture((const char *[]){ record__build_path("lxtrace"), "record", "-o", cmd_trace,
					       "--", "sh", "-c", script, NULL }, 60, NULL, &err);
	cr_assert_eq(status, 0, "lxtrace record -- sh -c '%s': status %d, stderr:\n%s", script, status,
		     err ? err : "");
	free(err);
	itest_load_file(cmd_trace);
	s = event_sums(it.trace);
	cr_assert_gt(s.block, 0, "no wait for the pipe in the trace");
	cr_assert_gt(s.syscall, 0, "no blocking syscall (vfork) in the trace");
	expect_close("Go 1.19 /block", profile_total("1.19", "sync", cmd_trace), s.block);
	expect_close("Go 1.23 /block", profile_total("1.23", "sync", cmd_trace), s.block);
	expect_close("Go 1.19 /syscall", profile_total("1.19", "syscall", cmd_trace), s.syscall);
	expect_close("Go 1.19 /sched", profile_total("1.19", "sched", cmd_trace), s.sched);
	cr_expect_eq(profile_total("1.19", "net", cmd_trace), 0, "Go 1.19 /io is not empty");
	cr_expect_eq(profile_total("1.23", "net", cmd_trace), 0, "Go 1.23 /io is not empty");
}
