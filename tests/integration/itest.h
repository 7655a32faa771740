/* itest.h - what every integration test shares: the root check, one recording of one
 * workload (recorder started, workload run, recorder stopped with SIGINT, trace loaded, both
 * Go parsers run on it), and a teardown that runs even when an assertion fails.
 *
 * Tests record the whole machine, so they run one at a time (--jobs 1), as root.
 */
#ifndef LXTRACE_TESTS_ITEST_H
#define LXTRACE_TESTS_ITEST_H

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "tests/lib/goparse.h"
#include "tests/lib/record.h"
#include "tests/lib/tquery.h"

/* Seconds a recorder gets to drain its buffers and write the file after SIGINT. */
#define ITEST_STOP_TIMEOUT 60

struct itest {
	struct recorder *rec;
	struct workload *wl;
	struct gt_trace *trace;
};

static struct itest it;

static inline void itest_fini(void)
{
	unsetenv("LXTRACE_MASK_FEATURES");
	gt_trace__free(it.trace);
	workload__free(it.wl);
	recorder__free(it.rec);	/* kills a recorder still running, removes its files */
	memset(&it, 0, sizeof(it));
}

/* The next recordings take the kernel features named (LXTRACE_MASK_FEATURES, docs/testing.md)
 * for missing, as an older kernel lacks them: the fallbacks run on this one. */
static inline void itest_mask(const char *features)
{
	setenv("LXTRACE_MASK_FEATURES", features, 1);
}

/* The recorder's summary named what the masked kernel lacks (the mask took effect), in words
 * that it may have wrapped over lines. */
static inline void itest_expect_without(const char *feature)
{
	const char *err = recorder__stderr(it.rec), *w = strstr(err, "without:");
	char *flat = strdup(w ? w : ""), *to = flat;

	cr_assert_not_null(flat);
	for (const char *from = flat; *from; from++)
		if (!(*from == ' ' || *from == '\n') || (to > flat && to[-1] != ' '))
			*to++ = *from == '\n' ? ' ' : *from;
	*to = '\0';
	cr_expect(strstr(flat, feature), "the summary does not say the recording was without "
		  "%s:\n%s", feature, err);
	free(flat);
}

static inline void itest_require_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("integration tests load BPF programs: run them as root");
}

/* Starts the recorder with ropts and waits until it records. */
static inline void itest_start(const char *const *ropts)
{
	char why[4096];

	itest_require_root();
	it.rec = recorder__start(ropts, why, sizeof(why));
	cr_assert(it.rec, "%s", why);
}

/* Runs workload `name` with wargs to completion; asserts it exited 0. */
static inline void itest_run(const char *name, const char *const *wargs, int timeout_s)
{
	it.wl = workload__run(name, wargs, timeout_s);
	cr_assert(it.wl, "cannot run workload %s: %s", name, strerror(errno));
	cr_assert_eq(workload__status(it.wl), 0, "workload %s exited with status %d",
		     name, workload__status(it.wl));
}

/* Sends sig (0: none, it stops by itself) and asserts the recorder exits with want_status
 * within timeout_s and leaves none of its BPF programs behind. */
static inline void itest_stop_within(int sig, int want_status, int timeout_s)
{
	int rc = recorder__stop(it.rec, sig, timeout_s);

	cr_assert_eq(rc, 0, "cannot stop the recorder: %s", strerror(-rc));
	cr_assert_eq(recorder__status(it.rec), want_status,
		     "recorder exited with status %d, expected %d; stderr:\n%s",
		     recorder__status(it.rec), want_status, recorder__stderr(it.rec));
	cr_assert_gt(recorder__nprogs(it.rec), 0, "no BPF program found in the recorder's fds");
	cr_assert_eq(recorder__leftover_progs(it.rec), 0, "BPF programs outlived the recorder");
}

static inline void itest_stop(int sig, int want_status)
{
	itest_stop_within(sig, want_status, ITEST_STOP_TIMEOUT);
}

/* Asserts that our decoder and both Go parsers accept the trace at path; loads it into
 * it.trace. */
static inline void itest_load_file(const char *path)
{
	char why[4096];
	int rc = gt_trace__load(path, &it.trace, why, sizeof(why));

	cr_assert_eq(rc, 0, "lxtrace's own decoder rejects the trace: %s", why);
	cr_assert(goparse_both_ok(path, why, sizeof(why)), "%s", why);
}

/* The same for the recorder's trace. */
static inline void itest_load(void)
{
	itest_load_file(recorder__path(it.rec));
}

/* One whole recording: workload `name` run with wargs while lxtrace record (given ropts)
 * runs, stopped with SIGINT. Asserts that the recorder started, exited 0, left no BPF
 * program, and wrote a file that our decoder and both Go parsers accept. Fills `it`. */
static inline void itest_record(const char *const *ropts, const char *name, const char *const *wargs,
				int timeout_s)
{
	itest_start(ropts);
	itest_run(name, wargs, timeout_s);
	itest_stop(SIGINT, 0);
	itest_load();
}

/* Runs lxtrace record -d 1 -o path with ropts (NULL-terminated, may be NULL); expects a
 * one-line error naming path and reason, and a non-zero exit. */
static inline void itest_expect_refused(const char *path, const char *const *ropts,
					const char *reason)
{
	const char *argv[16] = { record__build_path("lxtrace"), "record", "-d", "1", "-o", path };
	char *out = NULL, *err = NULL;
	size_t n = 6;
	int status;

	for (size_t i = 0; ropts && ropts[i] && n < 15; i++)
		argv[n++] = ropts[i];
	status = run_capture(argv, 30, &out, &err);
	cr_expect_neq(status, 0, "lxtrace record -o %s succeeded:\n%s", path, err);
	cr_expect(err && strstr(err, path) && strstr(err, reason),
		  "stderr does not say '%s' about %s:\n%s", reason, path, err ? err : "");
	cr_expect(err && strchr(err, '\n') == err + strlen(err) - 1, "not one line:\n%s",
		  err ? err : "");
	free(out);
	free(err);
}

/* A thread the workload reported, asserted present. */
static inline pid_t itest_tid(const char *role)
{
	pid_t tid = workload__tid(it.wl, role);

	cr_assert_gt(tid, 0, "workload did not report thread '%s':\n%s", role, workload__stdout(it.wl));
	return tid;
}

/* A count the workload reported, asserted present. */
static inline long long itest_stat(const char *key)
{
	long long v = workload__stat(it.wl, key, -1);

	cr_assert_geq(v, 0, "workload did not report '%s':\n%s", key, workload__stdout(it.wl));
	return v;
}

/* The program frame of the workload's threads after its exec: its name cut to 15 bytes as the
 * kernel cuts a comm. Static storage. */
static inline const char *itest_program(const char *name)
{
	static char prog[16];

	snprintf(prog, sizeof(prog), "%.15s", name);
	return prog;
}

/* The process frame of the workload's threads after its exec: "COMM (pid PID)", COMM being
 * the program's name cut to 15 bytes as the kernel does. Static storage. */
static inline const char *itest_ident(const char *name)
{
	static char ident[64];

	snprintf(ident, sizeof(ident), "%.15s (pid %d)", name, (int)workload__pid(it.wl));
	return ident;
}

/* Asserts cond; when it fails, first prints the thread's events so the log shows why. */
#define itest_expect(cond, tid, ...)                                              \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "--- events of thread %u:\n", (unsigned)(tid)); \
			tq_dump(it.trace, (tid), 80, stderr);                     \
			cr_assert(0, __VA_ARGS__);                                \
		}                                                                 \
	} while (0)

/* Asserts that each event of type block of tid names frame (NULL: any) and is ended by a
 * wakeup of type wake lo_ms..hi_ms later; returns how many there were. */
static inline size_t itest_timed_blocks(pid_t tid, enum gt_type block, const char *frame,
					enum gt_type wake, double lo_ms, double hi_ms)
{
	const struct gt_event *e;
	size_t i = 0, n = 0;

	while ((e = tq_next(it.trace, &i, TQ_BIT(block), tid))) {
		const struct gt_event *w;
		size_t j = i + 1;
		double ms;

		n++;
		itest_expect(!frame || tq_stack_has(e->stack, frame), tid,
			     "block #%zu (type %d) does not name `%s`", n, block, frame);
		w = tq_next(it.trace, &j, TQ_WAKEUPS, tid);
		itest_expect(w && w->type == wake, tid, "block #%zu (type %d) not ended by a type %d wakeup",
			     n, block, wake);
		ms = tq_ns(it.trace, e->ts, w->ts) / 1e6;
		itest_expect(ms >= lo_ms && ms <= hi_ms, tid, "block #%zu: woken after %.3f ms, expected %g..%g",
			     n, ms, lo_ms, hi_ms);
		i++;
	}
	return n;
}

/* The count the recorder's summary states after label ("  stacks cut:    N ..."); def when
 * it does not say. */
static inline long long itest_summary_count(const char *label, long long def)
{
	const char *p = strstr(recorder__stderr(it.rec), label);
	long long v;

	return p && sscanf(p + strlen(label), "%lld", &v) == 1 ? v : def;
}

/* The count the recorder's summary puts just before phrase ("3 with a frame not named"), or
 * -1 when it has no such phrase. */
static inline long long itest_summary_count_before(const char *phrase)
{
	const char *err = recorder__stderr(it.rec), *p = strstr(err, phrase);

	while (p && p > err && p[-1] == ' ')
		p--;
	while (p && p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? atoll(p) : -1;
}

/* Records lost, as the recorder's summary states them ("records lost:  N"); -1 when the
 * summary does not say. */
static inline long long itest_summary_lost(void)
{
	return itest_summary_count("records lost:", -1);
}

/* Sum of N over it.trace's "N records lost on CPU C" UserLogs (key lxtrace.lost). */
static inline long long itest_lost_in_trace(size_t *nlogs)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t n = gt_trace__nevents(it.trace);
	long long sum = 0;

	*nlogs = 0;
	for (size_t i = 0; i < n; i++) {
		const char *key;
		char msg[128];

		if (ev[i].type != GT_EV_USER_LOG || ev[i].nargs < 2 || !ev[i].msg)
			continue;
		key = gt_trace__string(it.trace, ev[i].args[1]);
		if (!key || strcmp(key, "lxtrace.lost"))
			continue;
		snprintf(msg, sizeof(msg), "%.*s", (int)ev[i].msg_len, ev[i].msg);
		sum += strtoll(msg, NULL, 10);
		++*nlogs;
	}
	return sum;
}

/* Nothing lost silently: the records the summary counts lost are those the trace's lxtrace.lost
 * UserLogs count (it.trace loaded). On a loaded machine a reader can fall behind whatever the
 * test does, so a test that is not about the load asks this, not that nothing was lost. */
static inline void itest_expect_losses_counted(void)
{
	size_t logs;
	long long lost = itest_summary_lost(), logged = itest_lost_in_trace(&logs);

	cr_expect_eq(logged, lost, "the trace's %zu lxtrace.lost UserLogs count %lld records, the "
		     "summary %lld:\n%s", logs, logged, lost, recorder__stderr(it.rec));
}

#endif
