/* kernel_tests.c - what the recordings made on one kernel (tests/kernels/scenario.sh, in a
 * QEMU guest or on the host) must show, asserted on the host: tests/kernels/run.sh runs this
 * binary once per kernel with its results (results.h). Every trace must pass lxtrace's
 * decoder and both Go parsers; the counts are the kernel's own or the workload's.
 *
 * A failed assertion names the kernel and the step and prints the guest's log first, so a CI
 * log shows why without the results directory.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/go119/reader.h"
#include "tests/kernels/results.h"
#include "tests/lib/goparse.h"
#include "tests/lib/record.h"
#include "tests/lib/tquery.h"
#include "tests/lib/go123text.h"
#include "user/flight/flight.h"

/* A thread leaving its CPU asleep: the kernel counts it in voluntary_ctxt_switches (prev_state
 * not running); the model writes one of these at that switch (docs/model.md, "Switch"). */
#define VOLUNTARY                                                                           \
	(TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SEND) | TQ_BIT(GT_EV_GO_BLOCK_RECV) |   \
	 TQ_BIT(GT_EV_GO_BLOCK_SELECT) | TQ_BIT(GT_EV_GO_BLOCK_SYNC) | TQ_BIT(GT_EV_GO_BLOCK_COND) | \
	 TQ_BIT(GT_EV_GO_BLOCK_NET) | TQ_BIT(GT_EV_GO_BLOCK_GC) | TQ_BIT(GT_EV_GO_SLEEP) |      \
	 TQ_BIT(GT_EV_GO_SYSBLOCK))
/* Leaving it runnable (preempted, or sched_yield): nonvoluntary_ctxt_switches. */
#define INVOLUNTARY (TQ_BIT(GT_EV_GO_PREEMPT) | TQ_BIT(GT_EV_GO_SCHED))

static struct {
	struct gt_trace *trace;
	struct workload *wl, *wl2;
} kt;

static void kt_fini(void)
{
	gt_trace__free(kt.trace);
	workload__free(kt.wl);
	workload__free(kt.wl2);
	memset(&kt, 0, sizeof(kt));
}

/* A TCG guest is slow, but these only read files the guest already wrote. */
TestSuite(kernel, .fini = kt_fini, .timeout = 180);

/* Asserts cond about step; when it fails, prints the guest's log first. */
#define kt_assert(cond, step, fmt, ...)                                                   \
	do {                                                                              \
		if (!(cond)) {                                                            \
			kr_print_log(step, stderr);                                       \
			cr_assert(0, "%s: %s: " fmt, kr_name(), step, ##__VA_ARGS__);     \
		}                                                                         \
	} while (0)

/* The same, first printing thread tid's events of the loaded trace. */
#define kt_expect_thread(cond, step, tid, fmt, ...)                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "--- events of thread %u:\n", (unsigned)(tid));   \
			tq_dump(kt.trace, (tid), 80, stderr);                             \
			kt_assert(0, step, fmt, ##__VA_ARGS__);                           \
		}                                                                         \
	} while (0)

/* The step ran and lxtrace exited 0; skips the test when the scenario skipped the step. */
static void require_step(const char *step)
{
	double secs = 0;
	int rc = kr_step_status(step, &secs);

	if (rc == KR_SKIPPED)
		cr_skip_test("%s: %s", kr_name(), kr_step_line(step));
	kt_assert(rc != KR_MISSING, step, "the scenario has no status for it: it never ran");
	kt_assert(rc == 0, step, "lxtrace exited with status %d: %s", rc, kr_step_line(step));
	cr_log_info("%s: %s: %.1f s", kr_name(), step, secs);
}

/* Loads file (of step) into kt.trace after lxtrace's decoder and both Go parsers accepted it. */
static void load(const char *step, const char *file)
{
	char why[4096];
	int rc;

	gt_trace__free(kt.trace);
	kt.trace = NULL;
	rc = gt_trace__load(kr_path(file), &kt.trace, why, sizeof(why));
	kt_assert(rc == 0, step, "%s: lxtrace's own decoder rejects it: %s", file, why);
	kt_assert(goparse_both_ok(kr_path(file), why, sizeof(why)), step, "%s: %s", file, why);
}

/* The report a workload of step wrote into file. */
static struct workload *report(const char *step, const char *file)
{
	char *text = kr_read(file);
	struct workload *w;

	kt_assert(text, step, "no %s: the workload's report did not come back", file);
	w = workload__from_output(text, 0);
	free(text);
	kt_assert(w, step, "%s: not a workload's report", file);
	return w;
}

static long long stat_of(struct workload *w, const char *step, const char *key)
{
	long long v = workload__stat(w, key, -1);

	kt_assert(v >= 0, step, "the workload did not report '%s' (built before it did?):\n%s", key,
		  workload__stdout(w));
	return v;
}

static pid_t tid_of(struct workload *w, const char *step, const char *role)
{
	pid_t tid = workload__tid(w, role);

	kt_assert(tid > 0, step, "the workload did not report thread '%s':\n%s", role,
		  workload__stdout(w));
	return tid;
}

/* CLOCK_MONOTONIC ns of a trace time: the clock both the guest's workloads and its BPF
 * programs read. */
static long long ns_of(uint64_t ts)
{
	return (long long)((unsigned __int128)ts * 1000000000u / gt_trace__frequency(kt.trace));
}

/* Events in mask about tid before CLOCK_MONOTONIC ns. */
static size_t count_before(uint64_t mask, uint32_t tid, long long ns)
{
	const struct gt_event *e;
	size_t i = 0, n = 0;

	while ((e = tq_next(kt.trace, &i, mask, tid))) {
		n += ns_of(e->ts) < ns;
		i++;
	}
	return n;
}

/* Records lost, as the summary in the step's stderr states them; -1 when it does not say. */
static long long lost(const char *step)
{
	char file[64], *err, *p;
	long long v = -1;

	snprintf(file, sizeof(file), "%s.err", step);
	err = kr_read(file);
	p = err ? strstr(err, "records lost:") : NULL;
	if (p && sscanf(p + strlen("records lost:"), "%lld", &v) != 1)
		v = -1;
	free(err);
	return v;
}

static int frame_at(const struct gt_stack *s, const char *func)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strcmp(s->frames[i].func, func))
			return (int)i;
	return -1;
}

/* A user frame at i: not the kernel's, not the syscall's, not the outermost identity. */
static bool user_frame_at(const struct gt_stack *s, int i)
{
	return i >= 0 && (size_t)i + 1 < s->n && strcmp(s->frames[i].file, "[kernel]") &&
	       strncmp(s->frames[i].func, "syscall ", 8);
}

Test(kernel, check_prints_the_feature_table)
{
	char *out;

	require_step("check");
	out = kr_read("check.out");
	kt_assert(out && *out, "check", "lxtrace record --check printed nothing on stdout");
	cr_log_info("%s: lxtrace record --check:\n%s", kr_name(), out);
	free(out);
}

/* Each side of the ping-pong read its switch counts from /proc before it ended: the trace
 * must hold exactly as many switches of the thread up to that instant, voluntary and not. The
 * read takes a few microseconds; a switch inside it may be counted or not, so the trace's
 * count before the read's start is the least and before its end the most. */
static void check_switches(const char *role)
{
	char key[48];
	long long kv, kn, t0, t1;
	size_t v0, v1, n0, n1;
	pid_t tid = tid_of(kt.wl, "pingpong", role);

#define KEY(fmt) (snprintf(key, sizeof(key), fmt, role), key)
	kv = stat_of(kt.wl, "pingpong", KEY("kvcsw-%s"));
	kn = stat_of(kt.wl, "pingpong", KEY("knvcsw-%s"));
	t0 = stat_of(kt.wl, "pingpong", KEY("kread0-%s"));
	t1 = stat_of(kt.wl, "pingpong", KEY("kread1-%s"));
#undef KEY
	v0 = count_before(VOLUNTARY, tid, t0);
	v1 = count_before(VOLUNTARY, tid, t1);
	n0 = count_before(INVOLUNTARY, tid, t0);
	n1 = count_before(INVOLUNTARY, tid, t1);
	cr_log_info("%s: pingpong %s (tid %d): the kernel counted %lld voluntary, %lld not; the trace "
		    "holds %zu..%zu and %zu..%zu (before the read's start..end)", kr_name(), role, tid, kv,
		    kn, v0, v1, n0, n1);
	kt_expect_thread((long long)v0 <= kv && kv <= (long long)v1, "pingpong", tid,
			 "%s: %zu blocking switches in the trace (%zu by the read's end), the kernel "
			 "counted %lld voluntary (records lost: %lld)", role, v0, v1, kv, lost("pingpong"));
	kt_expect_thread((long long)n0 <= kn && kn <= (long long)n1, "pingpong", tid,
			 "%s: %zu preemptions and yields in the trace (%zu by the read's end), the "
			 "kernel counted %lld nonvoluntary (records lost: %lld)", role, n0, n1, kn,
			 lost("pingpong"));
}

Test(kernel, pingpong_switches_are_the_kernels_own_counts)
{
	require_step("pingpong");
	kt.wl = report("pingpong", "pingpong.out");
	load("pingpong", "pingpong.trace");
	check_switches("ping");
	check_switches("pong");
}

/* The sleeper of step, its report in out and its trace in file: each GoSleep names the
 * syscall on user frames and ends in a wakeup at least 10 ms after the thread last started
 * running: the sleep began after that start. Not after the GoSleep itself: a TCG guest can take
 * milliseconds from the syscall's entry to the switch. (Not down to main: in the guests the
 * libraries the initramfs holds are not symbolized nor unwound through, a thing of the guest
 * the host's runs do not share: unwind/cgroup_reads_are_whole_from_the_first asserts whole
 * stacks of a cgroup there.) */
static void check_sleeps(const char *step, const char *out, const char *file)
{
	const uint64_t mask = TQ_BIT(GT_EV_GO_SLEEP) | TQ_BIT(GT_EV_GO_START) | TQ_WAKEUPS;
	const struct gt_event *e, *start = NULL, *sleep = NULL;
	long long sleeps;
	size_t i = 0, n = 0;
	pid_t tid;

	require_step(step);
	kt.wl = report(step, out);
	load(step, file);
	tid = tid_of(kt.wl, step, "sleeper");
	sleeps = stat_of(kt.wl, step, "sleeps");
	for (; (e = tq_next(kt.trace, &i, mask, tid)); i++) {
		const char *leaf = tq_leaf(e->stack);

		if (e->type == GT_EV_GO_START) {
			start = e;
		} else if (e->type == GT_EV_GO_SLEEP) {
			n++;
			kt_expect_thread(leaf && strstr(leaf, "nanosleep") && user_frame_at(e->stack, 1),
					 step, tid, "GoSleep #%zu: not `syscall (clock_)nanosleep` on user frames",
					 n);
			sleep = e;
		} else if (sleep) {
			kt_expect_thread(start && tq_ns(kt.trace, start->ts, e->ts) >= 9.9e6, step, tid,
					 "GoSleep #%zu: woken %.3f ms after the thread last started", n,
					 start ? tq_ns(kt.trace, start->ts, e->ts) / 1e6 : -1.0);
			sleep = NULL;
		}
	}
	kt_expect_thread((long long)n == sleeps, step, tid,
			 "%zu GoSleep, the workload slept %lld times", n, sleeps);
}

/* A command's sleeps: GoSleep, at the kernel's times. */
Test(kernel, sleeper_sleeps_are_gosleep)
{
	check_sleeps("sleeper", "sleeper.out", "sleeper.trace");
}

/* The same of a process running before the recording, named by -p. */
Test(kernel, pid_target_sleeps_are_gosleep)
{
	check_sleeps("pid", "pid-sleeper.out", "pid.trace");
}

/* The same of a cgroup's process: the cgroup test of the programs (target.bpf.h). */
Test(kernel, cgroup_target_sleeps_are_gosleep)
{
	check_sleeps("cgroup", "cgroup-sleeper.out", "cgroup.trace");
}

/* hot_inner (inlined, on a line of its loop) <- hot_middle (at its call) <- hot_outer (at its
 * call) <- main: what tests/integration/stacks.c asserts on the host, at the lines the
 * workload reports. */
static bool hot_chain(const struct gt_stack *s, struct workload *w)
{
	int i = frame_at(s, "hot_inner");

	return i >= 0 && (size_t)i + 3 < s->n &&
	       (long long)s->frames[i].line >= workload__stat(w, "inner_lo", -1) &&
	       (long long)s->frames[i].line <= workload__stat(w, "inner_hi", -1) &&
	       !strcmp(s->frames[i + 1].func, "hot_middle") &&
	       (long long)s->frames[i + 1].line == workload__stat(w, "middle_call", -1) &&
	       !strcmp(s->frames[i + 2].func, "hot_outer") &&
	       (long long)s->frames[i + 2].line == workload__stat(w, "outer_call", -1) &&
	       !strcmp(s->frames[i + 3].func, "main");
}

/* Whether the sample's leaf user frame is the spin's own code (hot_inner, inlined, names
 * hot_*): what the chain is asked of. The others are the process's start (exec, ld.so,
 * libc's init) and main's clock reads, a larger share the slower the guest runs. */
static bool in_spin(const struct gt_stack *s)
{
	for (size_t i = 0; s && i + 1 < s->n; i++)
		if (user_frame_at(s, (int)i))
			return !strncmp(s->frames[i].func, "hot_", 4);
	return false;
}

/* The syscall's kernel frames first (down to do_syscall_64), then the syscall, then user
 * frames: --stacks=both. */
static bool kernel_and_user(const struct gt_stack *s)
{
	int k = frame_at(s, "do_syscall_64"), sys = frame_at(s, "syscall clock_nanosleep");

	return s && s->n && !strcmp(s->frames[0].file, "[kernel]") && k >= 0 && sys > k &&
	       user_frame_at(s, sys + 1);
}

Test(kernel, samples_and_stacks)
{
	const struct gt_event *ev, *e;
	size_t n = 0, spin = 0, chained = 0, i = 0, sleeps = 0, ok = 0;
	pid_t spinner, sleeper;

	require_step("samples");
	kt.wl = report("samples", "samples-hotspin.out");
	kt.wl2 = report("samples", "samples-sleeper.out");
	load("samples", "samples.trace");
	spinner = tid_of(kt.wl, "samples", "spinner");
	sleeper = tid_of(kt.wl2, "samples", "sleeper");
	ev = gt_trace__events(kt.trace);
	for (size_t k = 0; k < gt_trace__nevents(kt.trace); k++) {
		if (ev[k].type != GT_EV_CPU_SAMPLE || !tq_about(&ev[k], spinner))
			continue;
		n++;
		if (!in_spin(ev[k].stack))
			continue;
		spin++;
		chained += hot_chain(ev[k].stack, kt.wl);
	}
	cr_log_info("%s: hotspin: %zu samples, %zu in the spin, %zu with the inlined chain",
		    kr_name(), n, spin, chained);
	/* 1.5 s at 999 Hz, however slowly the guest runs the spin. */
	kt_expect_thread(spin >= 50, "samples", spinner,
			 "%zu CPU samples in hotspin's 1.5 s spin at 999 Hz (%zu in all)", spin, n);
	kt_expect_thread(chained * 100 >= spin * 95, "samples", spinner,
			 "only %zu of %zu samples in the spin carry hot_inner <- hot_middle <- "
			 "hot_outer <- main at the workload's lines", chained, spin);
	while ((e = tq_next(kt.trace, &i, TQ_BIT(GT_EV_GO_SLEEP), sleeper))) {
		sleeps++;
		ok += kernel_and_user(e->stack);
		i++;
	}
	kt_expect_thread(sleeps == 5 && ok == sleeps, "samples", sleeper,
			 "%zu of %zu GoSleep stacks show kernel frames <- syscall <- user frames (5 sleeps)",
			 ok, sleeps);
}

/* The running kernel's version as major * 100 + minor (5.10 -> 510), from the scenario's
 * uname -r; 0 when unknown. */
static int kernel_version(void)
{
	char *k = kr_read("kernel");
	int major = 0, minor = 0;

	if (k)
		sscanf(k, "%d.%d", &major, &minor);
	free(k);
	return major * 100 + minor;
}

/* Whether the loaded trace has a trigger mark whose message holds needle on goroutine g's
 * thread (its low 32 bits). */
static bool has_mark(const char *needle, uint64_t g)
{
	const struct gt_event *ev = gt_trace__events(kt.trace);

	for (size_t k = 0; k < gt_trace__nevents(kt.trace); k++) {
		const char *key = ev[k].type == GT_EV_USER_LOG ? gt_trace__string(kt.trace, ev[k].args[1]) : NULL;

		if (key && !strcmp(key, "lxtrace.trigger") && ev[k].msg &&
		    memmem(ev[k].msg, ev[k].msg_len, needle, strlen(needle)) &&
		    (uint32_t)ev[k].g == (uint32_t)g)
			return true;
	}
	return false;
}

/* SIGUSR1 makes a file with its mark on lxtrace's own goroutine; the program's
 * lxtrace_trigger() another with its reason on its thread, on kernels whose uprobes have BPF
 * cookies (5.15): before, lxtrace attaches no probe of a command (docs/record.md, "Kernels"). */
Test(kernel, flight_recorder_triggers_write_files)
{
	bool by_signal = false, by_program = false;
	bool cookies = kernel_version() >= 515;
	unsigned files = 0;
	pid_t main_tid;

	require_step("flight");
	kt.wl = report("flight", "flight.out");
	main_tid = tid_of(kt.wl, "flight", "main");
	for (unsigned n = 1; n <= 3; n++) {
		char path[4096];
		struct stat st;

		flight__file_name(kr_path("flight.trace"), n, path, sizeof(path));
		if (stat(path, &st))
			break;
		files++;
		load("flight", strrchr(path, '/') + 1);
		by_signal |= has_mark("SIGUSR1", 0xffffffffull);
		by_program |= has_mark("triggered: the workload asked", (uint64_t)main_tid);
	}
	cr_log_info("%s: flight: %u files, SIGUSR1's mark %s, the program's %s", kr_name(), files,
		    by_signal ? "found" : "missing", by_program ? "found" : "missing");
	kt_assert(by_signal, "flight", "no file marked by SIGUSR1 on lxtrace's goroutine (%u files)",
		  files);
	if (cookies)
		kt_assert(by_program && files == 2, "flight",
			  "%u files, %s the program's trigger mark on its thread: expected 2, one with it",
			  files, by_program ? "with" : "without");
	else
		kt_assert(!by_program && files == 1, "flight",
			  "%u files on a kernel before 5.15, where a command's probes cannot be attached: "
			  "expected SIGUSR1's alone", files);
}

/* A whole-machine recording of -d 2: its file spans about that, threads ran in it. */
static void check_whole_machine(const char *step, const char *file)
{
	const struct gt_event *ev;
	size_t n;
	double secs;

	require_step(step);
	load(step, file);
	ev = gt_trace__events(kt.trace);
	n = gt_trace__nevents(kt.trace);
	kt_assert(n > 0, step, "%s holds no event", file);
	secs = tq_ns(kt.trace, ev[0].ts, ev[n - 1].ts) / 1e9;
	cr_log_info("%s: %s: %zu events over %.2f s", kr_name(), step, n, secs);
	kt_assert(secs >= 1.5, step, "%s spans %.2f s of a 2 s recording", file, secs);
	kt_assert(tq_count(kt.trace, TQ_BIT(GT_EV_GO_START), TQ_ANY_THREAD) > 0, step,
		  "no GoStart in %s", file);
}

/* syslen's 20 reads are 20 syscalls naming readv in the go1.23 file, which Go 1.23's reader
 * accepts, each of some length, and the recording took at least as many syscall returns
 * (-v's records by kind). */
Test(kernel, every_syscall_and_its_return)
{
	struct goparse_result r;
	long long reads, rets = -1, sum;
	char *err, *p, *text = NULL;
	size_t n;
	pid_t tid;

	require_step("syscalls");
	kt.wl = report("syscalls", "syscalls.out");
	kt_assert(goparse_123_text(kr_path("syscalls.trace"), 1, &r, &text) == 0 && r.ok,
		  "syscalls", "go 1.23 -d=1: %s", r.error);
	tid = tid_of(kt.wl, "syscalls", "reader");
	reads = stat_of(kt.wl, "syscalls", "reads");
	n = go123text_syscalls(text, (uint32_t)tid, "syscall readv", &sum);
	free(text);
	err = kr_read("syscalls.err");
	p = err ? strstr(err, " syscall returns") : NULL;
	while (p && p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p)
		rets = atoll(p);
	free(err);
	cr_log_info("%s: %zu syscalls naming readv, %lld ns in all; %lld returns", kr_name(), n,
		    sum, rets);
	if (lost("syscalls") == 0)
		kt_assert(n == (size_t)reads, "syscalls", "%zu syscalls naming readv, %lld made", n,
			  reads);
	kt_assert(sum >= (long long)n * 1000, "syscalls", "%zu reads of 256 KiB last %lld ns", n,
		  sum);
	kt_assert(rets >= reads, "syscalls", "%lld syscall returns recorded for %lld reads", rets,
		  reads);
}

Test(kernel, whole_machine_cheapest_mode)
{
	check_whole_machine("cheap", "cheap.trace");
	kt_assert(tq_count(kt.trace, TQ_BIT(GT_EV_CPU_SAMPLE), TQ_ANY_THREAD) == 0, "cheap",
		  "CPU samples with -F 0");
}

Test(kernel, whole_machine_default_mode)
{
	check_whole_machine("default", "default.trace");
}

/* The steps that load lxtrace's programs, each with the options of its mode. */
static const char *const loading_steps[] = { "check", "pingpong", "sleeper", "samples", "flight",
					     "pid", "cgroup", "syscalls", "cheap", "default" };

/* The refusals a kernel is known to make, by version (major * 100 + minor), and why: any other
 * fails the stage. */
#define WHY_612                                                                                  \
	"Debian's 6.12 (its mm_lock_seq a seqcount, backported) fails the VMA-walking programs "  \
	"with EFAULT, the verifier's own internal error, as 6.18's did with --cgroup before the "  \
	"target was asked outside the VMA loop; its log is not read yet: the compat programs, "   \
	"frame-pointer stacks"
static const struct {
	int version;
	const char *refused;	/* as the recorder says it: "PROGRAM: ERROR" */
	const char *why;
} known_refusals[] = {
	{ 612, "maps_lock_got: Bad address", WHY_612 },
	{ 612, "maps_exec: Bad address", WHY_612 },	/* --syscalls=all's set */
};

/* Whether text (a step's stderr, or --check's table) names a refusal this kernel is not
 * known to make; NULL, or where it is named. */
static const char *unknown_refusal(const char *text, int version)
{
	const char *at = text;

	while (at && (at = strstr(at, "refused: ")) != NULL) {
		bool known = false;

		at += strlen("refused: ");
		for (size_t i = 0; i < sizeof(known_refusals) / sizeof(known_refusals[0]); i++)
			known |= known_refusals[i].version == version &&
				 !strncmp(at, known_refusals[i].refused, strlen(known_refusals[i].refused));
		if (!known)
			return at;
	}
	return NULL;
}

/* A kernel the probes find fit for a program set, whose verifier then refuses it, makes
 * lxtrace fall back (compat programs: frame-pointer stacks; no annotations) and still record:
 * only this sees it. No step's programs were refused but as known_refusals names, and --check,
 * which loads what a recording would, lists no feature missing that its own "needs" column
 * gives this kernel. */
Test(kernel, every_mode_loads_what_the_kernel_offers)
{
	int version = kernel_version();
	char *out, *line, *save = NULL;
	const char *bad;

	for (size_t i = 0; i < sizeof(known_refusals) / sizeof(known_refusals[0]); i++)
		if (known_refusals[i].version == version)
			cr_log_info("%s: known: %s refused: %s", kr_name(), known_refusals[i].refused,
				    known_refusals[i].why);
	for (size_t i = 0; i < sizeof(loading_steps) / sizeof(loading_steps[0]); i++) {
		const char *step = loading_steps[i];
		char file[64], *err;

		if (kr_step_status(step, NULL) == KR_SKIPPED)
			continue;
		snprintf(file, sizeof(file), "%s.err", step);
		err = kr_read(file);
		bad = err ? unknown_refusal(err, version) : NULL;
		kt_assert(!bad, step, "its programs were refused, and it fell back: %.200s", bad);
		free(err);
	}
	require_step("check");
	out = kr_read("check.out");
	kt_assert(out, "check", "no check.out");
	bad = unknown_refusal(out, version);
	kt_assert(!bad, "check", "--check found programs refused: %.200s\n%s", bad, out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *needs = strstr(line, " kernel ");
		int major = 0, minor = 0;

		/* The typed programs' row says "no" where they were refused: known, or failed above. */
		if (strncmp(line, "  no ", 5) || !needs || strstr(line, "typed programs") ||
		    sscanf(needs, " kernel %d.%d+", &major, &minor) != 2)
			continue;
		kt_assert(major * 100 + minor > version, "check",
			  "a feature this kernel (%d.%d) should have is missing: %s", version / 100,
			  version % 100, line);
	}
	free(out);
}
