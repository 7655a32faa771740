/* test_report.c - lxtrace report's and lxtrace pprof's numbers on traces of known behaviour:
 * record streams the model turns into lxtrace's own files (tests/unit/test_model_util.h),
 * walked as the report walks them; its histograms against exact values; its filters and its
 * text; the profiles as Go's pprof reads them, and folded. */
#include <asm/unistd_64.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/goparse.h"
#include "tests/lib/record.h"
#include "format/go119/encode.h"
#include "tests/unit/test_model_util.h"
#include "user/report/fmt.h"
#include "user/report/hist.h"
#include "user/report/intern.h"
#include "user/report/notes.h"
#include "user/report/offcpu.h"
#include "user/report/pbuf.h"
#include "user/report/folded.h"
#include "user/report/pprof.h"
#include "user/report/profile.h"
#include "user/report/report.h"
#include "user/report/sched.h"
#include "user/report/syslat.h"
#include "user/report/walk.h"

#define T0 1000000000ull
#define MS 1000000ull
#define US 1000ull
#define ROUNDS 10

TestSuite(report, .timeout = 60);

/* mt_open at T0, in the go1.23 format when go123. */
static void mt_open_in(struct mt *t, uint32_t ncpus, enum model_syscalls mode, const char *proc,
		       bool go123)
{
	struct model_opts base = { .sz = sizeof(base), .writer2 = go123 ? (void *)1 : NULL };

	mt_open_with(t, ncpus, mode, proc, T0, &base, 0);
}

/* A victim (pid 100) sleeps in clock_nanosleep and is woken each 10 ms on CPU 0, where a hog
 * (pid 200) runs: the victim waits (i + 1) * 100 us for the hog to be preempted, runs 0.5 ms
 * (the hog waits that long) and sleeps again; the hog blocks on a futex 1 ms before the next
 * round and is woken by an interrupt 0.5 ms before it. */
static void victim_and_hog_in(struct mt *t, bool go123)
{
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 100, 100, "victim", 'S', __NR_clock_nanosleep);
	mt_proc_thread(proc, 200, 200, "hog", 'S', __NR_futex);
	mt_open_in(t, 2, MODEL_SYSCALLS_BLOCKING, proc, go123);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		uint64_t base = T0 + MS + i * 10 * MS, d = (i + 1) * 100 * US;

		if (i)
			mt_wakeup(t, base - MS / 2, 1, 200);
		mt_switch(t, base, 0, 0, 200, LX_PREV_RUNNABLE, -1);
		mt_wakeup(t, base + MS, 0, 100);
		mt_switch(t, base + MS + d, 0, 200, 100, LX_PREV_RUNNABLE, -1);
		mt_switch(t, base + MS + d + MS / 2, 0, 100, 200, LX_PREV_SLEEP, __NR_clock_nanosleep);
		mt_switch(t, base + 9 * MS, 0, 200, 0, LX_PREV_SLEEP, __NR_futex);
	}
	mt_finish(t, T0 + 200 * MS);
	mt_proc_free(proc);
}

/* The waits victim_and_hog's recording cuts: asleep at its start (the init phase ends 2 ns
 * before T0) until the first run, and from the last sleep to the end at T0 + 200 ms. */
#define VICTIM_CUT (2 + 2 * MS + 100 * US + (200 * MS - 93 * MS - MS / 2))
#define HOG_LAST (100 * MS)
#define HOG_CUT (2 + MS + HOG_LAST)

static void victim_and_hog(struct mt *t)
{
	victim_and_hog_in(t, false);
}

/* victim_and_hog's trace, open. */
static int victim_and_hog_fd(struct mt *t)
{
	int fd;

	victim_and_hog(t);
	fd = open(t->path, O_RDONLY);
	cr_assert_geq(fd, 0);
	return fd;
}

/* The trace at path read for every section, the filter f, the worst 5 waits kept. */
static void read_file(const char *path, const struct walk_filter *f, struct report *r)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 5, .filter = *f };
	char err[256];
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(report__read(fd, &o, r, err, sizeof(err)), 0, "%s", err);
	close(fd);
}

/* Within the histogram's 1/32. */
static void assert_near(uint64_t got, uint64_t want, const char *what)
{
	cr_assert(got * 32 >= want * 31 && got * 32 <= want * 33, "%s: %llu, not about %llu", what,
		  (unsigned long long)got, (unsigned long long)want);
}

Test(report, waits_after_wakeup_and_preemption_apart_with_who_ran)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	const struct hist *h;
	struct sched_worst x;
	struct report s;
	struct mt t;

	victim_and_hog(&t);
	read_file(t.path, &all, &s);
	cr_expect_eq(s.st.cpus, 2);

	/* The victim's waits after its wakeups: 100 us to 1 ms, the max in the last round. */
	h = sched_report__hist(s.sched, 100, 0, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->min, 100 * US);
	cr_expect_eq(h->max, ROUNDS * 100 * US);
	cr_expect_eq(h->sum, 100 * US * ROUNDS * (ROUNDS + 1) / 2);
	/* It ended at the last round's switch, times counting from the trace's first event. */
	cr_expect_eq(h->max_at, T0 + MS + (ROUNDS - 1) * 10 * MS + MS + ROUNDS * 100 * US -
		     gt_trace__events(t.trace)[0].ts);
	assert_near(hist__quantile(h, 0.5), 500 * US, "p50");
	assert_near(hist__quantile(h, 0.9), 900 * US, "p90");
	cr_expect_eq(hist__quantile(h, 0.99), ROUNDS * 100 * US);
	cr_expect_null(sched_report__hist(s.sched, 100, 0, WALK_PREEMPT), "the victim is never preempted");
	cr_expect(sched_report__hist(s.sched, 100, 100, WALK_WAKEUP) != NULL, "its thread's row");

	/* The hog: preempted each round for the victim's 0.5 ms; woken 9 times, 0.5 ms each. */
	h = sched_report__hist(s.sched, 200, 0, WALK_PREEMPT);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->min, MS / 2);
	cr_expect_eq(h->max, MS / 2);
	h = sched_report__hist(s.sched, 200, 0, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS - 1);
	cr_expect_eq(h->max, MS / 2);

	/* The worst wait is the victim's last, and the hog held CPU 0 all through it. */
	cr_assert(sched_report__worst(s.sched, 0, &x));
	cr_expect_eq(x.who.tid, 100);
	cr_expect_eq(x.who.id.pid, 100);
	cr_expect_str_eq(x.who.id.comm, "victim");
	cr_expect_eq(x.kind, WALK_WAKEUP);
	cr_expect_eq(x.ns, ROUNDS * 100 * US);
	cr_expect_eq(x.p, 0);
	cr_assert_eq(x.nruns, 1);
	cr_expect_eq(x.runs[0].who.tid, 200);
	cr_expect_str_eq(x.runs[0].who.id.comm, "hog");
	cr_expect_eq(x.runs[0].ns, ROUNDS * 100 * US);
	cr_expect_eq(x.idle_ns, 0);
	cr_expect(x.complete);
	/* Then the victim's next longest waits (the hog's are 0.5 ms). */
	cr_assert(sched_report__worst(s.sched, 1, &x));
	cr_expect_eq(x.ns, (ROUNDS - 1) * 100 * US);
	report__free(&s);
	mt_close(&t, false);
}

Test(report, blocking_syscalls_time_off_the_cpu)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	const struct hist *h;
	struct report s;
	uint64_t entries;
	struct mt t;

	victim_and_hog(&t);
	read_file(t.path, &all, &s);
	/* The victim's sleeps between rounds: 10 ms - 0.5 ms + 100 us each; the first began
	 * before the recording and is not counted. */
	h = syslat__hist(s.sys, "clock_nanosleep", &entries);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS - 1);
	cr_expect_eq(h->min, 9600 * US);
	cr_expect_eq(h->max, 9600 * US);
	cr_expect_eq(entries, 0);
	/* The hog's futex waits: 1 ms each, the wait for the CPU after the wakeup included. */
	h = syslat__hist(s.sys, "futex", &entries);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS - 1);
	cr_expect_eq(h->sum, (ROUNDS - 1) * MS);
	report__free(&s);
	mt_close(&t, false);
}

Test(report, time_off_the_cpu_by_reason_and_stack)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	const struct hist *h;
	struct report s;
	struct mt t;

	victim_and_hog(&t);
	read_file(t.path, &all, &s);
	/* The victim's sleeps: the whole ones, the first (asleep at the start, counted from the
	 * recording's start, 2 ns before T0, to its first run) and the last (to the end). */
	h = offcpu__hist(s.off, WALK_OFF_SLEEP);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS + 1);
	cr_expect_eq(h->sum, (ROUNDS - 1) * 9600 * US + VICTIM_CUT);
	cr_expect_eq(offcpu__stack_ns(s.off, WALK_OFF_SLEEP, "syscall clock_nanosleep"),
		     (ROUNDS - 1) * 9600 * US + VICTIM_CUT);
	/* The hog's futex waits (the first and the last cut as the victim's), and its
	 * preemptions by the victim. */
	h = offcpu__hist(s.off, WALK_OFF_LOCK);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS + 1);
	cr_expect_eq(h->max, HOG_LAST);
	cr_expect_eq(offcpu__stack_ns(s.off, WALK_OFF_LOCK, "syscall futex"),
		     (ROUNDS - 1) * MS + HOG_CUT);
	h = offcpu__hist(s.off, WALK_OFF_RUNQ);
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->sum, ROUNDS * MS / 2);
	cr_expect_null(offcpu__hist(s.off, WALK_OFF_IO));
	cr_expect_null(offcpu__hist(s.off, WALK_OFF_FD));
	report__free(&s);
	mt_close(&t, false);
}

/* Lost records and a trigger, each where and when it happened. */
Test(report, loss_and_triggers_with_when_and_why)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	struct walk_filter late = { .from_ns = 5 * MS, .to_ns = UINT64_MAX };
	uint64_t lost, triggers, repairs;
	char *proc = mt_proc_new(), *text = NULL;
	struct report_opts o = { .sections = REPORT_TRIGGERS, .top = 10, .filter = all };
	struct report s;
	size_t len = 0;
	FILE *out;
	struct mt t;

	mt_proc_thread(proc, 100, 100, "app", 'R', -1);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_switch(&t, T0 + MS, 0, 0, 100, LX_PREV_RUNNABLE, -1);
	cr_assert_eq(model__lost(t.m, 1, T0 + 2 * MS, 7), 0);
	mt_user(&t, T0 + 3 * MS, 0, 100, 100, LX_REC_TRIGGER, 0, 0, NULL, "slow request", 0);
	cr_assert_eq(model__lost(t.m, 0, T0 + 8 * MS, 5), 0);
	mt_finish(&t, T0 + 10 * MS);
	mt_proc_free(proc);

	read_file(t.path, &all, &s);
	notes__counts(s.notes, &lost, &triggers, &repairs);
	cr_expect_eq(lost, 12);
	cr_expect_eq(triggers, 1);
	out = open_memstream(&text, &len);
	cr_assert(out);
	report__print(&s, "x.trace", &o, out);
	fclose(out);
	cr_expect(strstr(text, "records lost: 12, in 2 reports") != NULL, "%s", text);
	cr_expect(strstr(text, "7 records lost on CPU 1") != NULL, "%s", text);
	cr_expect(strstr(text, "slow request") != NULL, "%s", text);
	free(text);
	report__free(&s);

	/* A window keeps what happened in it. */
	read_file(t.path, &late, &s);
	notes__counts(s.notes, &lost, &triggers, &repairs);
	cr_expect_eq(lost, 5);
	cr_expect_eq(triggers, 0);
	report__free(&s);
	mt_close(&t, false);
}

Test(report, filters_by_pid_name_and_window)
{
	struct walk_filter hog = { .pid = 200, .to_ns = UINT64_MAX };
	struct walk_filter victim = { .comm = "victim", .to_ns = UINT64_MAX };
	/* Rounds 5 to 7: waits end at 1 ms + i * 10 ms + 1 ms + (i + 1) * 100 us. */
	struct walk_filter window = { .from_ns = 51 * MS, .to_ns = 81 * MS };
	struct report s;
	struct mt t;
	const struct hist *h;

	victim_and_hog(&t);
	read_file(t.path, &hog, &s);
	cr_expect_null(sched_report__hist(s.sched, 100, 0, WALK_WAKEUP));
	cr_expect(sched_report__hist(s.sched, 200, 0, WALK_PREEMPT) != NULL);
	report__free(&s);

	read_file(t.path, &victim, &s);
	cr_expect(sched_report__hist(s.sched, 100, 0, WALK_WAKEUP) != NULL);
	cr_expect_null(sched_report__hist(s.sched, 200, 0, WALK_PREEMPT));
	report__free(&s);

	read_file(t.path, &window, &s);
	h = sched_report__hist(s.sched, 100, 0, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_eq(h->count, 3);
	cr_expect_eq(h->min, 600 * US);
	cr_expect_eq(h->max, 800 * US);
	report__free(&s);
	mt_close(&t, false);
}

Test(report, text_in_80_columns)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 10, .filter = { .to_ns = UINT64_MAX } };
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct mt t;
	int fd = victim_and_hog_fd(&t);

	cr_assert(out);
	cr_assert_eq(report__file(fd, "x.trace", &o, out, err, sizeof(err)), 0, "%s", err);
	close(fd);
	fclose(out);
	cr_expect(strstr(text, "victim (pid 100)       wakeup       10") != NULL, "%s", text);
	cr_expect(strstr(text, "1.00ms victim (tid 100, pid 100)\n    after a wakeup, until ") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "1.00ms hog (tid 200, pid 200)") != NULL, "%s", text);
	cr_expect(strstr(text, "clock_nanosleep") != NULL, "%s", text);
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		cr_assert(nl);
		cr_expect_leq(nl - line, 80, "a line of %zu columns: %.*s", (size_t)(nl - line),
			      (int)(nl - line), line);
	}
	free(text);
	mt_close(&t, false);
}

Test(report, a_malformed_file_is_one_line_and_no_report)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 10, .filter = { .to_ns = UINT64_MAX } };
	char path[] = "/tmp/lxtrace-test-report-XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert(fd >= 0 && out);
	cr_assert_eq(write(fd, "go 1.19 trace\0\0\0\x01\x02", 18), 18);
	lseek(fd, 0, SEEK_SET);
	cr_expect_lt(report__file(fd, "bad.trace", &o, out, err, sizeof(err)), 0);
	fclose(out);
	cr_expect_eq(len, 0, "printed: %s", text);
	cr_expect(err[0] && !strchr(err, '\n'), "error: '%s'", err);
	free(text);
	close(fd);
	unlink(path);
}

Test(report, histogram_quantiles_and_log2_buckets)
{
	struct hist h = { 0 };
	uint64_t b[HIST_LOG2], want[HIST_LOG2] = { 0 };
	uint64_t *v = malloc(20000 * sizeof(*v));

	cr_assert(v);
	srand(7);
	for (int i = 0; i < 20000; i++) {
		v[i] = (uint64_t)rand() % 5000000 + (uint64_t)(rand() % 3 == 0) * 80000000ull;
		cr_assert_eq(hist__add(&h, v[i], (uint64_t)i), 0);
		want[v[i] < 2 ? 0 : 63 - __builtin_clzll(v[i])]++;
	}
	cr_expect_eq(h.count, 20000);
	hist__log2(&h, b);
	for (int k = 0; k < HIST_LOG2; k++)
		cr_expect_eq(b[k], want[k], "bucket %d", k);
	/* Against the sorted values. */
	for (int i = 1; i < 20000; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	cr_expect_eq(h.min, v[0]);
	cr_expect_eq(h.max, v[19999]);
	assert_near(hist__quantile(&h, 0.5), v[9999], "p50");
	assert_near(hist__quantile(&h, 0.9), v[17999], "p90");
	assert_near(hist__quantile(&h, 0.99), v[19799], "p99");
	cr_expect_eq(hist__quantile(&h, 1), v[19999]);
	hist__free(&h);
	free(v);
}

/* The profile at prof_path, as pprof's -raw prints it: samples' counts and values summed
 * (values alone when cpu: its samples' one value is their count), and those whose label is
 * `label`. */
static void pprof_sum(const char *prof_path, bool cpu, const char *label, uint64_t *count,
		      uint64_t *value, uint64_t *label_value)
{
	const char *argv[] = { "/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof", "-raw", prof_path, NULL };
	char *out = NULL, *errs = NULL, *line, *save;
	unsigned long long n, v, last = 0;
	bool samples = false;
	int rc = run_capture(argv, 60, &out, &errs);

	cr_assert_eq(rc, 0, "pprof -raw: %s", errs);
	*count = *value = *label_value = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "Samples:", 8)) {
			samples = true;
			continue;
		}
		if (!strncmp(line, "Locations", 9))
			break;
		if (!samples)
			continue;
		if (cpu && sscanf(line, " %llu:", &n) == 1) {
			*count += n;
			*value += n;
		} else if (sscanf(line, " %llu %llu:", &n, &v) == 2) {
			*count += n;
			*value += v;
			last = v;
		} else if (label && strstr(line, label)) {
			*label_value += last;
		}
	}
	free(out);
	free(errs);
}

/* The profile of kind from the trace at path, as lxtrace pprof writes it, summed by pprof_sum. */
static void pprof_raw(const char *path, enum profile_kind kind, const char *label,
		      uint64_t *count, uint64_t *value, uint64_t *label_value)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char out_path[] = "/tmp/lxtrace-test-pprof-XXXXXX", err[256];
	struct profile *p;
	int fd = open(path, O_RDONLY), ofd = mkstemp(out_path);

	cr_assert(fd >= 0 && ofd >= 0);
	cr_assert_eq(profile__read(fd, kind, &all, 0, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pprof__write(p, ofd, err, sizeof(err)), 0, "%s", err);
	close(fd);
	close(ofd);
	profile__free(p);
	pprof_sum(out_path, kind == PROFILE_CPU, label, count, value, label_value);
	unlink(out_path);
}

/* Go's own block profile of the trace at path (`go tool trace -pprof=sync`, the viewer's
 * /block), by the Go of tool: its total wait and the waits counted. */
static void go_block_profile(const char *tool, const char *path, uint64_t *count, uint64_t *ns)
{
	char out_path[] = "/tmp/lxtrace-test-block-XXXXXX", *cmd = NULL, *errs = NULL;
	const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	uint64_t labelled;
	int fd = mkstemp(out_path), rc;

	cr_assert(fd >= 0);
	close(fd);
	cr_assert(asprintf(&cmd, "%s -pprof=sync '%s' > '%s'", tool, path, out_path) > 0);
	argv[2] = cmd;
	rc = run_capture(argv, 120, NULL, &errs);
	cr_assert_eq(rc, 0, "%s: %s", cmd, errs);
	pprof_sum(out_path, false, NULL, count, ns, &labelled);
	unlink(out_path);
	free(cmd);
	free(errs);
}

Test(report, pprof_reads_the_sched_and_offcpu_profiles)
{
	uint64_t count, value, labelled;
	struct mt t;

	victim_and_hog(&t);
	/* Waits: the victim's 10 (100 us to 1 ms), the hog's 10 preemptions and 9 wakeups of
	 * 0.5 ms each. */
	pprof_raw(t.path, PROFILE_SCHED, "after:[preemption]", &count, &value, &labelled);
	cr_expect_eq(count, 29);
	cr_expect_eq(value, 100 * US * ROUNDS * (ROUNDS + 1) / 2 + (2 * ROUNDS - 1) * MS / 2);
	cr_expect_eq(labelled, ROUNDS * MS / 2);
	/* Off the CPU: the victim's 11 sleeps, the hog's 11 futex waits (each 2 cut by the
	 * recording's start and end) and 10 preemptions. */
	pprof_raw(t.path, PROFILE_OFFCPU, "reason:[lock]", &count, &value, &labelled);
	cr_expect_eq(count, 32);
	cr_expect_eq(value, (ROUNDS - 1) * 9600 * US + VICTIM_CUT + (ROUNDS - 1) * MS + HOG_CUT +
			    ROUNDS * MS / 2);
	cr_expect_eq(labelled, (ROUNDS - 1) * MS + HOG_CUT);
	/* Blocking syscalls: the sleeps and the futex waits. */
	pprof_raw(t.path, PROFILE_SYSCALL, "syscall:[futex]", &count, &value, &labelled);
	cr_expect_eq(count, 18);
	cr_expect_eq(labelled, (ROUNDS - 1) * MS);
	mt_close(&t, false);
}

Test(report, folded_stacks_root_first_with_their_process)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char *text = NULL, err[256];
	struct profile *p;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct mt t;
	int fd = victim_and_hog_fd(&t);

	cr_assert(out);
	cr_assert_eq(profile__read(fd, PROFILE_OFFCPU, &all, 0, &p, err, sizeof(err)), 0, "%s", err);
	close(fd);
	cr_assert_eq(folded__write(p, out), 0);
	fclose(out);
	cr_expect(strstr(text, "victim;victim (pid 100);syscall clock_nanosleep 195000002\n") !=
		  NULL, "%s", text);
	cr_expect(strstr(text, "hog;hog (pid 200);syscall futex 110000002\n") != NULL, "%s", text);
	profile__free(p);
	free(text);
	mt_close(&t, false);
}

/* The one interning table: handles in the order first met, equal keys one handle, keys of
 * any bytes (a NUL inside, none at all) kept whole at addresses that stay put as it grows. */
Test(report, intern_hands_out_one_handle_a_key)
{
	struct intern *t = intern__new();
	const char *first;
	char key[32];
	bool added;

	cr_assert(t);
	first = intern__str(t, "futex");
	cr_assert_eq(intern__put(t, "", 0, &added), 1);
	cr_expect(added);
	cr_assert_eq(intern__put(t, "a\0b", 3, &added), 2);
	cr_assert_eq(intern__put(t, "a\0c", 3, &added), 3);
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "name %d", i);
		cr_assert_eq(intern__put(t, key, strlen(key), &added), 4 + i);
	}
	cr_expect_eq(intern__put(t, "a\0b", 3, &added), 2);
	cr_expect_not(added);
	cr_expect_eq(intern__str(t, "futex"), first);
	cr_expect_str_eq(first, "futex");
	cr_expect_eq(intern__get(t, "name 99999", 10), 100003);
	cr_expect_eq(intern__get(t, "name 100000", 11), -1);
	cr_expect_eq(memcmp(intern__key(t, 3), "a\0c", 4), 0);
	cr_expect_eq(intern__count(t), 100004);
	intern__free(t);
}

/* protobuf's own examples: 150 in field 1 is 08 96 01; "testing" in field 2 is 12 07 ...;
 * packed 3, 270, 86942 in field 4 is 22 06 03 8e 02 9e a7 05. */
Test(report, protobuf_encoding_as_its_spec_gives_it)
{
	static const uint8_t want[] = { 0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's', 't', 'i',
					'n', 'g', 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05,
					0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					0x01 };
	const uint64_t packed[] = { 3, 270, 86942 };
	struct pbuf b = { 0 };

	pbuf__uint(&b, 1, 150);
	pbuf__bytes(&b, 2, "testing", 7);
	pbuf__packed(&b, 4, packed, 3);
	pbuf__uint(&b, 5, (uint64_t)-1);
	cr_assert(!b.oom);
	cr_assert_eq(b.n, sizeof(want));
	cr_expect_arr_eq(b.p, want, sizeof(want));
	pbuf__free(&b);
}

/* Names from other users' processes, escaped and cut to their columns; an empty one empty. */
Test(report, names_escaped_and_cut)
{
	struct walk_thread t = { .g = 7, .tid = 7 };
	char buf[64];

	memset(buf, 'x', sizeof(buf));
	cr_expect_str_eq(fmt__cut(buf, 10, ""), "");
	cr_expect_str_eq(fmt__cut(buf, 10, "abc"), "abc");
	cr_expect_str_eq(fmt__cut(buf, 10, "0123456789abc"), "012345678~");
	cr_expect_str_eq(fmt__cut(buf, 10, "a\x1b[2Jb"), "a\\x1b[2Jb");
	memset(buf, 'x', sizeof(buf));
	walk__name(&t, buf, sizeof(buf));
	cr_expect_str_eq(buf, "tid 7");
	t.id.pid = 5;
	strcpy(t.id.comm, "a\nb");
	walk__name(&t, buf, sizeof(buf));
	cr_expect_str_eq(buf, "a\\x0ab (tid 7, pid 5)");
	walk__name(&t, buf, 8);
	cr_expect_str_eq(buf, "a\\x0ab ");
}

/* A reader (pid 300) sleeps uninterruptibly in read twice: once while a spinner (pid 400)
 * takes its CPU, once with the CPU left idle; it is then woken and runs again. With a lost
 * report and a trigger, for the notes. */
static void disk_reader_in(struct mt *t, bool go123)
{
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 300, 300, "reader", 'R', -1);
	mt_proc_thread(proc, 400, 400, "spinner", 'R', -1);
	mt_open_in(t, 2, MODEL_SYSCALLS_BLOCKING, proc, go123);
	mt_switch(t, T0 + MS, 0, 0, 300, LX_PREV_RUNNABLE, -1);
	mt_switch(t, T0 + MS, 1, 0, 400, LX_PREV_RUNNABLE, -1);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		uint64_t base = T0 + 2 * MS + i * 10 * MS;

		mt_switch(t, base, 0, 300, i % 2 ? 0 : 400, LX_PREV_DISK, __NR_read);
		if (i % 2 == 0)
			mt_switch(t, base + 100 * US, 1, 400, 0, LX_PREV_RUNNABLE, -1);
		mt_wakeup(t, base + (i + 1) * 300 * US, 1, 300);
		if (i % 2 == 0) {
			mt_switch(t, base + (i + 1) * 300 * US + 50 * US, 0, 400, 300, LX_PREV_RUNNABLE, -1);
			mt_switch(t, base + (i + 1) * 300 * US + 60 * US, 1, 0, 400, LX_PREV_RUNNABLE, -1);
		} else {
			mt_switch(t, base + (i + 1) * 300 * US + 50 * US, 0, 0, 300, LX_PREV_RUNNABLE, -1);
		}
	}
	cr_assert_eq(model__lost(t->m, 1, T0 + 50 * MS, 7), 0);
	mt_user(t, T0 + 60 * MS, 0, 300, 300, LX_REC_TRIGGER, 0, 0, NULL, "slow read", 0);
	mt_finish(t, T0 + 200 * MS);
	mt_proc_free(proc);
}

/* The report's sections of the stream in one format, as text after its first line (the
 * file's name). */
static char *report_text(void (*stream)(struct mt *, bool), unsigned sections, bool go123)
{
	struct report_opts o = { .sections = sections, .top = 10, .hist = true,
				 .filter = { .to_ns = UINT64_MAX } };
	char *text = NULL, *body, err[256];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct mt t;
	int fd;

	cr_assert(out);
	stream(&t, go123);
	fd = open(t.path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(report__file(fd, "x.trace", &o, out, err, sizeof(err)), 0, "%s", err);
	close(fd);
	fclose(out);
	mt_close(&t, false);
	body = strdup(strchr(text, '\n') ? strchr(text, '\n') + 1 : text);
	free(text);
	cr_assert(body);
	return body;
}

/* The hog's futex waits are Go's block profile in either format: 9 waits from its block to
 * the interrupt's wakeup, 0.5 ms each, and the wait it was in at the start, from the init
 * phase's block (3 ns before T0) to its first run at T0 + 1 ms (before, in go1.23 files the
 * reason was the syscall's name alone, which Go 1.23's block profile does not take: empty). */
Test(report, go_block_profile_is_the_same_in_both_formats)
{
	uint64_t count19, ns19, count23, ns23;
	struct mt t;

	victim_and_hog_in(&t, false);
	go_block_profile("/usr/lib/go-1.19/pkg/tool/linux_amd64/trace", t.path, &count19, &ns19);
	mt_close(&t, false);
	victim_and_hog_in(&t, true);
	go_block_profile("/usr/lib/go-1.23/pkg/tool/linux_amd64/trace", t.path, &count23, &ns23);
	mt_close(&t, false);
	cr_expect_eq(count19, ROUNDS, "Go 1.19 counts %llu waits", (unsigned long long)count19);
	cr_expect_eq(ns19, (ROUNDS - 1) * MS / 2 + MS + 3, "Go 1.19's total: %llu ns",
		     (unsigned long long)ns19);
	cr_expect_eq(count23, count19, "Go 1.23 counts %llu waits", (unsigned long long)count23);
	/* The init phase's events are a tick apart, a few more of them in the go1.23 format. */
	cr_expect(ns23 + 10 >= ns19 && ns23 <= ns19 + 10, "Go 1.23's total: %llu ns",
		  (unsigned long long)ns23);
}

/* The same model streams written in both formats: the go1.23 file's report is the 1.19
 * file's, number for number, but for what it does not say (docs/report.md, "go1.23 files"):
 * when a thread asleep inside a syscall was woken, so its wait for a CPU after. */
Test(report, go123_files_report_what_go119_files_do)
{
	static const struct {
		void (*stream)(struct mt *, bool);
		unsigned sections;
	} cases[] = {
		{ victim_and_hog_in, REPORT_ALL },
		{ disk_reader_in, REPORT_ALL & ~REPORT_SCHED },
	};
	struct walk_filter all = { .to_ns = UINT64_MAX };
	struct report s;
	struct mt t;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *a = report_text(cases[i].stream, cases[i].sections, false);
		char *b = report_text(cases[i].stream, cases[i].sections, true);

		cr_expect_str_eq(b, a, "stream %zu: go1.23\n%s\ngo1.19\n%s", i, b, a);
		free(a);
		free(b);
	}
	/* The reader's waits after its reads are not in the go1.23 file; the spinner's are. */
	disk_reader_in(&t, true);
	read_file(t.path, &all, &s);
	cr_expect_null(sched_report__hist(s.sched, 300, 0, WALK_WAKEUP));
	cr_expect_eq(sched_report__hist(s.sched, 400, 0, WALK_PREEMPT)->count, 2 * ROUNDS);
	cr_expect_eq(offcpu__hist(s.off, WALK_OFF_IO)->count, ROUNDS);
	report__free(&s);
	mt_close(&t, false);
}

/* A syncer (pid 500) calls fdatasync ROUNDS times with --syscalls=all and returns: each call
 * blocks twice on the disk for 1 ms (off the CPU from its block until it runs again) and lasts
 * 2.5 ms from its entry to its return; a getppid between them never blocks and lasts 20 us.
 * The go1.19 file marks each return with a log (docs/format.md §10.3). */
static void syncer_in(struct mt *t, bool go123)
{
	struct model_opts base = { .sz = sizeof(base), .writer2 = go123 ? (void *)1 : NULL,
				   .sysrets = true };
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 500, 500, "syncer", 'R', -1);
	mt_open_with(t, 2, MODEL_SYSCALLS_ALL, proc, T0, &base, 0);
	mt_switch(t, T0 + MS, 0, 0, 500, LX_PREV_RUNNABLE, -1);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		uint64_t at = T0 + 2 * MS + i * 10 * MS;

		mt_syscall(t, at, 0, 500, __NR_fdatasync);
		for (uint64_t k = 0; k < 2; k++) {
			mt_switch(t, at + 100 * US + k * 1100 * US, 0, 500, 0, LX_PREV_DISK, __NR_fdatasync);
			mt_wakeup(t, at + 1000 * US + k * 1100 * US, 0, 500);
			mt_switch(t, at + 1100 * US + k * 1100 * US, 0, 0, 500, LX_PREV_RUNNABLE, -1);
		}
		mt_sysret(t, at + 2500 * US, 0, 500);
		mt_syscall(t, at + 3 * MS, 0, 500, __NR_getppid);
		mt_sysret(t, at + 3 * MS + 20 * US, 0, 500);
	}
	mt_finish(t, T0 + 200 * MS);
	mt_proc_free(proc);
}

/* Per call, not per block: 10 calls of 2.5 ms, their 20 blocks of 1 ms apart (before, the
 * report had the blocks alone, "ENTERED 10, BLOCKED 20" with a p50 of 1 ms, and no length for
 * getppid). */
Test(report, syscalls_per_call_with_their_blocks_apart)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	const struct hist *h;
	struct report s;
	uint64_t entries;
	struct mt t;
	char *text;

	syncer_in(&t, false);
	read_file(t.path, &all, &s);
	h = syslat__calls(s.sys, "fdatasync");
	cr_assert(h, "no call of fdatasync with a length");
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->min, 2500 * US);
	cr_expect_eq(h->max, 2500 * US);
	cr_expect_eq(h->sum, ROUNDS * 2500 * US);
	h = syslat__hist(s.sys, "fdatasync", &entries);
	cr_assert(h);
	cr_expect_eq(entries, ROUNDS);
	cr_expect_eq(h->count, 2 * ROUNDS);
	cr_expect_eq(h->sum, 2 * ROUNDS * MS);
	h = syslat__calls(s.sys, "getppid");
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->max, 20 * US);
	cr_expect_null(syslat__hist(s.sys, "getppid", &entries));
	cr_expect_eq(entries, ROUNDS);
	report__free(&s);
	mt_close(&t, false);
	text = report_text(syncer_in, REPORT_SYSCALLS, false);
	cr_expect(strstr(text, "fdatasync              10  25.0ms  2.50ms  2.50ms  2.50ms       20   "
			       "20.0ms") != NULL, "%s", text);
	free(text);

	/* The go1.23 file has the same calls (its syscalls run from entry to return, which it
	 * says at its start); a block inside a syscall is there only where another thread took
	 * the CPU, and here it stayed idle (before: each call that lasted was a block, and the
	 * getppids too). */
	syncer_in(&t, true);
	read_file(t.path, &all, &s);
	h = syslat__calls(s.sys, "fdatasync");
	cr_assert(h, "no call of fdatasync with a length in the go1.23 file");
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->sum, ROUNDS * 2500 * US);
	cr_expect_null(syslat__hist(s.sys, "fdatasync", &entries));
	cr_expect_eq(entries, ROUNDS);
	h = syslat__calls(s.sys, "getppid");
	cr_assert(h);
	cr_expect_eq(h->count, ROUNDS);
	cr_expect_eq(h->max, 20 * US);
	cr_expect_null(syslat__hist(s.sys, "getppid", &entries));
	report__free(&s);
	mt_close(&t, false);
}

/* pprof's -raw of the profile at path: each sample's four values summed, those labelled
 * `label` apart. */
static void pprof_sum4(const char *path, const char *label, uint64_t sum[4], uint64_t lsum[4])
{
	const char *argv[] = { "/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof", "-raw", path, NULL };
	char *out = NULL, *errs = NULL, *line, *save;
	unsigned long long v[4], last[4] = { 0 };
	bool samples = false;
	int rc = run_capture(argv, 60, &out, &errs);

	cr_assert_eq(rc, 0, "pprof -raw: %s", errs);
	memset(sum, 0, 4 * sizeof(*sum));
	memset(lsum, 0, 4 * sizeof(*lsum));
	cr_expect(strstr(out, "calls/count syscall/nanoseconds[dflt] blocks/count "
			      "off-cpu/nanoseconds"), "%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "Samples:", 8))
			samples = true;
		else if (!strncmp(line, "Locations", 9))
			break;
		else if (samples && sscanf(line, " %llu %llu %llu %llu:", &v[0], &v[1], &v[2],
					   &v[3]) == 4)
			for (int i = 0; i < 4; i++)
				sum[i] += last[i] = v[i];
		else if (samples && strstr(line, label))
			for (int i = 0; i < 4; i++)
				lsum[i] += last[i];
	}
	free(out);
	free(errs);
}

/* pprof --syscall counts calls and their whole lengths, the blocks apart, in both formats:
 * syncer's 10 fdatasync calls of 2.5 ms (20 blocks of 1 ms) and 10 getppid of 20 us (before:
 * 20 samples, the blocks alone, 20 ms). Folded, each stack's calls' lengths. */
Test(report, pprof_syscall_counts_calls_and_their_lengths)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char out_path[64], err[256], *text = NULL;
	uint64_t sum[4], fd_sum[4];
	struct profile *p;
	size_t len = 0;
	struct mt t;

	for (int go123 = 0; go123 < 2; go123++) {
		int fd, ofd = mkstemp(strcpy(out_path, "/tmp/lxtrace-test-pprof-XXXXXX"));
		FILE *f = open_memstream(&text, &len);

		syncer_in(&t, go123);
		fd = open(t.path, O_RDONLY);
		cr_assert(fd >= 0 && ofd >= 0 && f);
		cr_assert_eq(profile__read(fd, PROFILE_SYSCALL, &all, 0, &p, err, sizeof(err)), 0, "%s",
			     err);
		cr_assert_eq(pprof__write(p, ofd, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(folded__write(p, f), 0);
		fclose(f);
		close(fd);
		close(ofd);
		profile__free(p);
		pprof_sum4(out_path, "syscall:[fdatasync]", sum, fd_sum);
		unlink(out_path);
		cr_expect_eq(sum[0], 2 * ROUNDS, "format %d", go123);
		cr_expect_eq(sum[1], ROUNDS * (2500 + 20) * US, "format %d", go123);
		cr_expect_eq(fd_sum[0], ROUNDS, "format %d", go123);
		cr_expect_eq(fd_sum[1], ROUNDS * 2500 * US, "format %d", go123);
		/* The go1.23 file has no block where the CPU stayed idle (as the report). */
		cr_expect_eq(fd_sum[2], go123 ? 0 : 2 * ROUNDS, "format %d", go123);
		cr_expect_eq(fd_sum[3], go123 ? 0 : 2 * ROUNDS * MS, "format %d", go123);
		cr_expect(strstr(text, "syscall fdatasync 25000000\n"), "format %d:\n%s", go123, text);
		cr_expect(strstr(text, "syscall getppid 200000\n"), "format %d:\n%s", go123, text);
		free(text);
		text = NULL;
		mt_close(&t, false);
	}
}

/* A thread whose name has a quote, a backslash, a newline and a byte that is no UTF-8 runs,
 * sleeps 3 ms and runs again. */
static void odd_name_in(struct mt *t, bool go123)
{
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 900, 900, "q\"b\\s\n\xff", 'R', -1);
	mt_open_in(t, 2, MODEL_SYSCALLS_BLOCKING, proc, go123);
	mt_switch(t, T0 + MS, 0, 0, 900, LX_PREV_RUNNABLE, -1);
	mt_switch(t, T0 + 2 * MS, 0, 900, 0, LX_PREV_SLEEP, __NR_clock_nanosleep);
	mt_wakeup(t, T0 + 5 * MS, 1, 900);
	mt_switch(t, T0 + 6 * MS, 0, 0, 900, LX_PREV_RUNNABLE, -1);
	mt_finish(t, T0 + 10 * MS);
	mt_proc_free(proc);
}

/* `report --json` of stream's trace, every section and histograms, read back by Python's json
 * module, which prints what `query` (Python, on the object d) says. */
static char *json_query(void (*stream)(struct mt *, bool), bool go123, const char *query)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 10, .hist = true, .json = true,
				 .filter = { .to_ns = UINT64_MAX } };
	char path[] = "/tmp/lxtrace-test-json-XXXXXX", err[256], *script, *out = NULL,
	     *errs = NULL;
	const char *argv[] = { "/usr/bin/python3", "-c", NULL, path, NULL };
	int ofd = mkstemp(path), fd, rc;
	FILE *f = fdopen(ofd, "w");
	struct mt t;

	cr_assert(f);
	stream(&t, go123);
	fd = open(t.path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(report__file(fd, "a \"b\"\\.trace", &o, f, err, sizeof(err)), 0, "%s", err);
	close(fd);
	fclose(f);
	mt_close(&t, false);
	/* json.tool's reading: valid JSON, one object. */
	rc = run_capture((const char *[]){ "/usr/bin/python3", "-m", "json.tool", path, NULL }, 60, NULL,
			 &errs);
	cr_assert_eq(rc, 0, "not JSON: %s", errs);
	free(errs);
	cr_assert(asprintf(&script, "import json, sys\nd = json.load(open(sys.argv[1]))\n%s",
			   query) > 0);
	argv[2] = script;
	rc = run_capture(argv, 60, &out, &errs);
	cr_assert_eq(rc, 0, "%s: %s", query, errs);
	unlink(path);
	free(script);
	free(errs);
	return out;
}

/* report --json holds the text's figures under stable names, in both formats: the victim's
 * waits, the hog's futex waits, the stacks; names escaped as lxtrace prints them, then as JSON
 * asks (before: no --json). */
Test(report, json_has_every_sections_figures)
{
	static const char query[] =
		"p = [x for x in d['sched']['processes'] if x['pid'] == 100][0]\n"
		"w = p['waits']['wakeup']\n"
		"o = {r['reason']: r['time'] for r in d['offcpu']['reasons']}\n"
		"s = {r['name']: r for r in d['syscalls']['rows']}\n"
		"print(d['schema'], d['file'], d['cpus'], w['count'], w['max_ns'], p['program'],\n"
		"      o['lock']['count'], o['lock']['sum_ns'] // 1000, s['futex']['blocked']['count'],\n"
		"      len(d['sched']['worst']), d['sched']['worst'][0]['ran'][0]['pid'],\n"
		"      d['offcpu']['stacks'][0]['frames'][-1]['file'], d['cpu']['samples'],\n"
		"      d['recording']['records_lost'], sum(len(w['log2']) > 0 for w in [w]))\n";
	static const char odd[] =
		"names = set()\n"
		"def walk(x):\n"
		"    if isinstance(x, dict): [walk(v) for v in x.values()]\n"
		"    elif isinstance(x, list): [walk(v) for v in x]\n"
		"    elif isinstance(x, str): names.add(x)\n"
		"walk(d)\n"
		"print('q\"b\\\\\\\\s\\\\x0a\\\\xff' in names, all(n.isascii() for n in names))\n";
	char want[256];

	for (int go123 = 0; go123 < 2; go123++) {
		char *out = json_query(victim_and_hog_in, go123, query);

		/* 10 wakeups, the longest 1 ms; 11 futex waits (2 cut, whose time in µs) of which 9
		 * whole are blocking syscalls; the 10 worst waits, the first with the hog on the
		 * CPU; no sample, nothing lost. */
		snprintf(want, sizeof(want), "lxtrace-report/1 a \"b\"\\\\.trace 2 10 %llu victim 11 "
			 "%llu 9 10 200 program 0 0 1\n", (unsigned long long)(ROUNDS * 100 * US),
			 (unsigned long long)(((ROUNDS - 1) * MS + HOG_CUT) / US));
		cr_expect_str_eq(out, want, "format %d: %s", go123, out);
		free(out);
		out = json_query(odd_name_in, go123, odd);
		cr_expect_str_eq(out, "True True\n", "format %d", go123);
		free(out);
	}
}

/* A futex wait inside a call (--syscalls=all, both formats): the call lasts from its entry to
 * its return, the wait in it keeps its reason, and the go1.23 file, which ends the syscall
 * at the block, has the return as a log (user/model/out_go123.c). */
static void futex_caller_in(struct mt *t, bool go123)
{
	struct model_opts base = { .sz = sizeof(base), .writer2 = go123 ? (void *)1 : NULL,
				   .sysrets = true };
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 800, 800, "locker", 'R', -1);
	mt_open_with(t, 2, MODEL_SYSCALLS_ALL, proc, T0, &base, 0);
	mt_switch(t, T0 + MS, 0, 0, 800, LX_PREV_RUNNABLE, -1);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		uint64_t at = T0 + 2 * MS + i * 10 * MS;

		mt_syscall(t, at, 0, 800, __NR_futex);
		mt_switch(t, at + 100 * US, 0, 800, 0, LX_PREV_SLEEP, __NR_futex);
		mt_wakeup(t, at + 3 * MS, 1, 800);
		mt_switch(t, at + 3 * MS + 50 * US, 0, 0, 800, LX_PREV_RUNNABLE, -1);
		mt_sysret(t, at + 3 * MS + 70 * US, 0, 800);
	}
	mt_finish(t, T0 + 200 * MS);
	mt_proc_free(proc);
}

Test(report, a_call_that_waits_for_a_lock_lasts_to_its_return)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	const struct hist *h;
	struct report s;
	struct mt t;

	for (int go123 = 0; go123 < 2; go123++) {
		futex_caller_in(&t, go123);
		read_file(t.path, &all, &s);
		h = syslat__calls(s.sys, "futex");
		cr_assert(h, "format %d: no futex call with a length", go123);
		cr_expect_eq(h->count, ROUNDS, "format %d", go123);
		cr_expect_eq(h->max, 3070 * US, "format %d: %llu", go123, (unsigned long long)h->max);
		h = offcpu__hist(s.off, WALK_OFF_LOCK);
		cr_assert(h, "format %d: no wait for a lock", go123);
		cr_expect_eq(h->count, ROUNDS);
		cr_expect_eq(h->max, 2950 * US);
		report__free(&s);
		mt_close(&t, false);
	}
}

/* A thread whose name starts with "runtime." is written "_runtime.x" (the 1.23 viewer hides
 * the goroutines so named, user/stacks/idents.h): the report names it and --comm finds it as it
 * is (before: --comm runtime.x kept nothing). A thread named "_runtime.y" keeps its '_'. */
Test(report, a_runtime_named_thread_is_found_by_its_name)
{
	struct walk_filter x = { .comm = "runtime.x", .to_ns = UINT64_MAX };
	struct walk_filter y = { .comm = "_runtime.y", .to_ns = UINT64_MAX };
	char *proc = mt_proc_new();
	struct report s;
	struct mt t;

	mt_proc_thread(proc, 600, 600, "runtime.x", 'R', -1);
	mt_proc_thread(proc, 700, 700, "_runtime.y", 'R', -1);
	mt_open(&t, 2, MODEL_SYSCALLS_BLOCKING, proc, T0);
	for (uint64_t i = 0; i < ROUNDS; i++) {
		uint64_t at = T0 + MS + i * MS;

		mt_switch(&t, at, 0, i ? 700 : 0, 600, LX_PREV_RUNNABLE, -1);
		mt_switch(&t, at + MS / 2, 0, 600, 700, LX_PREV_RUNNABLE, -1);
	}
	mt_finish(&t, T0 + 100 * MS);
	mt_proc_free(proc);
	read_file(t.path, &x, &s);
	cr_expect_eq(s.st.matched, 1);
	cr_expect(sched_report__hist(s.sched, 600, 0, WALK_PREEMPT) != NULL);
	cr_expect_null(sched_report__hist(s.sched, 700, 0, WALK_PREEMPT));
	report__free(&s);
	read_file(t.path, &y, &s);
	cr_expect_eq(s.st.matched, 1);
	cr_expect(sched_report__hist(s.sched, 700, 0, WALK_PREEMPT) != NULL);
	report__free(&s);
	mt_close(&t, false);
}

/* A filter that keeps no thread says so, in the report and to pprof, rather than each section
 * saying the trace has nothing ("no samples (lxtrace record -F HZ takes them)"). */
Test(report, a_filter_that_keeps_no_thread_says_so)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = 10,
				 .filter = { .pid = 999999, .to_ns = UINT64_MAX } };
	char *text = NULL, err[256];
	struct profile *p;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct mt t;
	int fd = victim_and_hog_fd(&t);

	cr_assert(out);
	cr_assert_eq(report__file(fd, "x.trace", &o, out, err, sizeof(err)), 0, "%s", err);
	fclose(out);
	cr_expect(strstr(text, "\nno thread of pid 999999 in this trace\n") != NULL, "%s", text);
	cr_expect_null(strstr(text, "no samples"), "%s", text);
	free(text);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	o.filter.pid = 0;
	o.filter.comm = "nobody";
	cr_expect_eq(profile__read(fd, PROFILE_SCHED, &o.filter, 0, &p, err, sizeof(err)), -ENOENT);
	cr_expect_str_eq(err, "no thread named \"nobody\" in this trace");
	close(fd);
	mt_close(&t, false);
}

/* --hist labels each histogram, and the waits after a preemption have theirs (before: one
 * unlabelled histogram a process, of its waits after a wakeup when it had any). */
Test(report, hist_labels_each_histogram)
{
	char *text = report_text(victim_and_hog_in, REPORT_SCHED, false);

	cr_expect(strstr(text, "hog (pid 200)          wakeup        9") != NULL, "%s", text);
	cr_expect(strstr(text, "    waits after a wakeup, by length:\n") != NULL, "%s", text);
	cr_expect(strstr(text, "    waits after a preemption, by length:\n") != NULL, "%s", text);
	free(text);
}

/* A Frequency that comes after the first events (Go's runtime writes it at the end) counts for
 * every time: the model's file with its Frequency moved to a batch of its own at the end, and
 * halved, has every wait twice as long (before: times were frozen as ns at the first event). */
Test(report, a_late_frequency_counts)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char path[] = "/tmp/lxtrace-test-freq-XXXXXX";
	uint8_t *buf, *p, *end, tail[32];
	const struct hist *h;
	struct report s;
	struct mt t;
	FILE *f;
	long size = 0;
	int fd;

	victim_and_hog(&t);
	f = fopen(t.path, "rb");
	cr_assert(f && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET));
	buf = malloc((size_t)size);
	cr_assert(buf && fread(buf, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	/* The first batch's header: Batch, P, time; then the Frequency, 1e9. */
	p = buf + GT_HEADER_LEN;
	cr_assert_eq(*p, gt_header_byte(GT_EV_BATCH));
	p++;
	for (int v = 0; v < 2; v++)
		while (*p++ & 0x80)
			;
	cr_assert_eq(*p, gt_header_byte(GT_EV_FREQUENCY));
	for (end = p + 1; *end & 0x80; end++)
		;
	end++;
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, (size_t)(p - buf)), p - buf);
	cr_assert_eq(write(fd, end, (size_t)(buf + size - end)), buf + size - end);
	p = gt_encode_batch_header(tail, 0, T0 + 200 * MS, 500000000u);
	cr_assert_eq(write(fd, tail, (size_t)(p - tail)), p - tail);
	close(fd);
	free(buf);
	read_file(path, &all, &s);
	unlink(path);
	h = sched_report__hist(s.sched, 100, 0, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_eq(h->max, 2 * ROUNDS * 100 * US);
	report__free(&s);
	mt_close(&t, false);
}

/* tests/gotrace/gotrace.go built by the Go at goroot (go build at test time, into the build
 * directory) and run: the trace it writes of itself with runtime/trace, at path. */
static void go_written_trace(const char *goroot, const char *path)
{
	char bin[PATH_MAX], go[PATH_MAX], *errs = NULL;
	const char *here = record__build_path("tests");
	int rc;

	snprintf(bin, sizeof(bin), "%s/gotrace-%s", here, strrchr(goroot, '-') + 1);
	snprintf(go, sizeof(go), "%s/bin/go", goroot);
	/* The tests run from the source tree's root, as make runs them. */
	rc = run_capture((const char *[]){ "/usr/bin/env", "GOTOOLCHAIN=local", go, "build", "-o",
					  bin, "tests/gotrace/gotrace.go", NULL }, 300, NULL, &errs);
	cr_assert_eq(rc, 0, "go build: %s", errs);
	free(errs);
	errs = NULL;
	rc = run_capture((const char *[]){ bin, path, NULL }, 120, NULL, &errs);
	cr_assert_eq(rc, 0, "%s: %s", bin, errs);
	free(errs);
}

/* Each wait of Go 1.23's reading of path (-d=1): a goroutine's Runnable->Running after it
 * became runnable, counted and summed in ns. */
static void go123_waits(const char *path, uint64_t *count, uint64_t *ns)
{
	struct goparse_result r;
	char *text = NULL, *line, *save;
	/* goroutine ids stay small in these programs: when each became runnable */
	static long long since[4096];

	cr_assert_eq(goparse_123_text(path, 1, &r, &text), 0);
	cr_assert(r.ok, "go 1.23: %s", r.error);
	*count = *ns = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *at = strstr(line, " Time="), *id = strstr(line, " GoID=");
		long long t;
		unsigned long g;

		if (!at || !id || (g = strtoul(id + 6, NULL, 10)) >= 4096)
			continue;
		t = atoll(at + 6);
		if (strstr(line, "->Runnable"))
			since[g] = t;
		else if (strstr(line, " Runnable->Running") && since[g]) {
			++*count;
			*ns += (uint64_t)(t - since[g]);
		}
	}
	free(text);
}

/* A trace Go 1.23's runtime wrote of itself: its Ps are the report's CPUs, nothing is lxtrace's
 * invention, and its waits for a P are Go 1.23's own, but those begun as the trace opens, to
 * within the ns a chain of ticks is one time in (before: "0 CPUs", "no waits", every wakeup an event lxtrace invented,
 * as the file has no housekeeping P). */
Test(report, a_trace_go_1_23_wrote_has_its_waits, .timeout = 300)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char path[] = "/tmp/lxtrace-test-gotrace-XXXXXX";
	uint64_t lost, triggers, repairs, count, ns, waits = 0, waited = 0;
	struct report s;
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	go_written_trace("/usr/lib/go-1.23", path);
	read_file(path, &all, &s);
	go123_waits(path, &count, &ns);
	cr_expect(s.st.go_runtime);
	cr_expect_geq(s.st.cpus, 1);
	notes__counts(s.notes, &lost, &triggers, &repairs);
	cr_expect_eq(repairs, 0);
	/* Goroutines have no process: one row, pid 0, holds them all. */
	for (int k = 0; k < WALK_WAITS; k++) {
		const struct hist *h = sched_report__hist(s.sched, 0, 0, k);

		waits += h ? h->count : 0;
		waited += h ? h->sum : 0;
	}
	cr_log_info("%llu waits, %llu ns; Go 1.23: %llu waits, %llu ns", (unsigned long long)waits,
		    (unsigned long long)waited, (unsigned long long)count, (unsigned long long)ns);
	/* A wait that began among the statuses that open the trace (a P's may come after
	 * another's first events) is the report's init phase, not counted: one or two, short. */
	cr_expect(waits <= count && waits + 2 >= count, "%llu waits, Go 1.23 %llu",
		  (unsigned long long)waits, (unsigned long long)count);
	cr_expect(waited * 100 >= ns * 99 && waited * 100 <= ns * 101, "%llu ns of waits, Go: %llu",
		  (unsigned long long)waited, (unsigned long long)ns);
	report__free(&s);
	unlink(path);
}

/* Each wait of Go 1.19's reading of path (`go tool trace -d`: "TS TYPE p=P g=RUNNING off=OFF
 * g=G ..."): a goroutine's GoStart after what made it runnable (GoCreate, GoUnblock,
 * GoSysExit of it; its GoPreempt, GoSched) once the trace's Gomaxprocs has passed, and Go's
 * count of events. */
static void go119_waits(const char *path, uint64_t *count, uint64_t *ns, uint64_t *events)
{
	const char *argv[] = { "/usr/lib/go-1.19/pkg/tool/linux_amd64/trace", "-d", path, NULL };
	char *text = NULL, *errs = NULL, *line, *save;
	static long long since[4096];
	bool started = false;
	int rc = run_capture(argv, 120, &text, &errs);

	cr_assert_eq(rc, 0, "go 1.19 trace -d: %s", errs);
	*count = *ns = *events = 0;
	memset(since, 0, sizeof(since));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char type[32];
		long long ts;
		unsigned long run = 0, g = 0;
		const char *a = strstr(line, " g="), *b = a ? strstr(a + 1, " g=") : NULL;

		if (sscanf(line, "%lld %31s", &ts, type) != 2)
			continue;
		++*events;
		run = a ? strtoul(a + 3, NULL, 10) : 0;
		g = b ? strtoul(b + 3, NULL, 10) : run;
		if (run >= 4096 || g >= 4096)
			continue;
		if (!strcmp(type, "Gomaxprocs"))
			started = true;
		else if (!strcmp(type, "GoCreate") || !strcmp(type, "GoUnblock") ||
			 !strcmp(type, "GoSysExit"))
			since[g] = started ? ts : 0;
		else if (!strcmp(type, "GoPreempt") || !strcmp(type, "GoSched"))
			since[run] = started ? ts : 0;
		else if (!strncmp(type, "GoStart", 7) && since[g]) {
			++*count;
			*ns += (uint64_t)(ts - since[g]);
			since[g] = 0;
		}
	}
	free(text);
	free(errs);
}

/* A trace Go 1.19's runtime wrote of itself: Ps flushed in any order, stacks and the
 * Frequency at the end. lxtrace dump prints Go's events, as many as Go 1.19 prints; the
 * report has its waits as Go 1.19 orders them, the same count and total (before: dump
 * refused it at its first batch, "GoUnblock: g 1 does not exist", another at "GoStartLocal:
 * no sequence number: lxtrace cannot place it across Ps"; the report counted in file order
 * with ticks as ns). */
Test(report, a_trace_go_1_19_wrote_is_read_in_go_order, .timeout = 300)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char path[] = "/tmp/lxtrace-test-gotrace-XXXXXX", *out = NULL, *errs = NULL;
	uint64_t lost, triggers, repairs, count, ns, events, lines = 0, waits = 0, waited = 0;
	size_t local = 0;
	struct gt_trace *tr;
	struct report s;
	char err[256];
	int fd = mkstemp(path), rc;

	cr_assert(fd >= 0);
	close(fd);
	go_written_trace("/usr/lib/go-1.19", path);
	cr_assert_eq(gt_trace__load(path, &tr, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i < gt_trace__nevents(tr); i++) {
		uint8_t ty = gt_trace__events(tr)[i].type;

		local += ty == GT_EV_GO_START_LOCAL || ty == GT_EV_GO_UNBLOCK_LOCAL ||
			 ty == GT_EV_GO_SYSEXIT_LOCAL;
	}
	gt_trace__free(tr);
	go119_waits(path, &count, &ns, &events);
	rc = run_capture((const char *[]){ record__build_path("lxtrace"), "dump", path, NULL }, 120,
			 &out, &errs);
	cr_assert_eq(rc, 0, "lxtrace dump: %s", errs);
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		lines += *l >= '0' && *l <= '9';
	cr_expect_eq(lines, events, "lxtrace dump printed %llu events, Go 1.19 %llu",
		     (unsigned long long)lines, (unsigned long long)events);
	free(out);
	free(errs);

	read_file(path, &all, &s);
	cr_expect(s.st.go_runtime);
	cr_expect_geq(s.st.cpus, 1);
	notes__counts(s.notes, &lost, &triggers, &repairs);
	cr_expect_eq(repairs, 0);
	for (int k = 0; k < WALK_WAITS; k++) {
		const struct hist *h = sched_report__hist(s.sched, 0, 0, k);

		waits += h ? h->count : 0;
		waited += h ? h->sum : 0;
	}
	cr_log_info("%zu ...Local events; %llu waits, %llu ns; Go 1.19: %llu waits, %llu ns", local,
		    (unsigned long long)waits, (unsigned long long)waited,
		    (unsigned long long)count, (unsigned long long)ns);
	cr_expect_eq(waits, count);
	cr_expect(waited * 100 >= ns * 99 && waited * 100 <= ns * 101, "%llu ns of waits, Go: %llu",
		  (unsigned long long)waited, (unsigned long long)ns);
	report__free(&s);
	unlink(path);
}
