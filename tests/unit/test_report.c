/* test_report.c - lxtrace report's and lxtrace pprof's numbers on traces of known behaviour:
 * record streams the model turns into lxtrace's own files (tests/unit/test_model_util.h),
 * walked as the report walks them; its histograms against exact values; its filters and its
 * text; the profiles as Go's pprof reads them, and folded. */
#include <asm/unistd_64.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/record.h"
#include "tests/unit/test_model_util.h"
#include "user/report/fmt.h"
#include "user/report/hist.h"
#include "user/report/notes.h"
#include "user/report/offcpu.h"
#include "user/report/pbuf.h"
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

/* mt_open at T0, in the Go 1.22+ format when v2. */
static void mt_open_in(struct mt *t, uint32_t ncpus, enum model_syscalls mode, const char *proc,
		       bool v2)
{
	struct model_opts base = { .sz = sizeof(base), .writer2 = v2 ? (void *)1 : NULL };

	mt_open_with(t, ncpus, mode, proc, T0, &base, 0);
}

/* A victim (pid 100) sleeps in clock_nanosleep and is woken each 10 ms on CPU 0, where a hog
 * (pid 200) runs: the victim waits (i + 1) * 100 us for the hog to be preempted, runs 0.5 ms
 * (the hog waits that long) and sleeps again; the hog blocks on a futex 1 ms before the next
 * round and is woken by an interrupt 0.5 ms before it. */
static void victim_and_hog_in(struct mt *t, bool v2)
{
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 100, 100, "victim", 'S', __NR_clock_nanosleep);
	mt_proc_thread(proc, 200, 200, "hog", 'S', __NR_futex);
	mt_open_in(t, 2, MODEL_SYSCALLS_BLOCKING, proc, v2);
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

/* The profile of kind from the trace at path, as pprof's -raw prints it: samples' counts and
 * values summed, and those whose label is `label`. */
static void pprof_raw(const char *path, enum profile_kind kind, const char *label,
		      uint64_t *count, uint64_t *value, uint64_t *label_value)
{
	struct walk_filter all = { .to_ns = UINT64_MAX };
	char out_path[] = "/tmp/lxtrace-test-pprof-XXXXXX", err[256];
	const char *argv[] = { "/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof", "-raw", out_path, NULL };
	struct profile *p;
	char *out = NULL, *errs = NULL, *line, *save;
	unsigned long long n, v, last = 0;
	bool samples = false;
	int fd = open(path, O_RDONLY), ofd = mkstemp(out_path), rc;

	cr_assert(fd >= 0 && ofd >= 0);
	cr_assert_eq(profile__read(fd, kind, &all, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(profile__write_pprof(p, ofd, err, sizeof(err)), 0, "%s", err);
	close(fd);
	close(ofd);
	profile__free(p);
	rc = run_capture(argv, 60, &out, &errs);
	unlink(out_path);
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
		if (kind == PROFILE_CPU && sscanf(line, " %llu:", &n) == 1) {
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
	cr_assert_eq(profile__read(fd, PROFILE_OFFCPU, &all, &p, err, sizeof(err)), 0, "%s", err);
	close(fd);
	cr_assert_eq(profile__write_folded(p, out), 0);
	fclose(out);
	cr_expect(strstr(text, "victim;victim (pid 100);syscall clock_nanosleep 195000002\n") !=
		  NULL, "%s", text);
	cr_expect(strstr(text, "hog;hog (pid 200);syscall futex 110000002\n") != NULL, "%s", text);
	profile__free(p);
	free(text);
	mt_close(&t, false);
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
static void disk_reader_in(struct mt *t, bool v2)
{
	char *proc = mt_proc_new();

	mt_proc_thread(proc, 300, 300, "reader", 'R', -1);
	mt_proc_thread(proc, 400, 400, "spinner", 'R', -1);
	mt_open_in(t, 2, MODEL_SYSCALLS_BLOCKING, proc, v2);
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
static char *report_text(void (*stream)(struct mt *, bool), unsigned sections, bool v2)
{
	struct report_opts o = { .sections = sections, .top = 10, .hist = true,
				 .filter = { .to_ns = UINT64_MAX } };
	char *text = NULL, *body, err[256];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct mt t;
	int fd;

	cr_assert(out);
	stream(&t, v2);
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

/* The same model streams written in both formats: the Go 1.22+ file's report is the 1.19
 * file's, number for number, but for what it does not say (docs/report.md, "Go 1.23 files"):
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
	/* The reader's waits after its reads are not in the Go 1.22+ file; the spinner's are. */
	disk_reader_in(&t, true);
	read_file(t.path, &all, &s);
	cr_expect_null(sched_report__hist(s.sched, 300, 0, WALK_WAKEUP));
	cr_expect_eq(sched_report__hist(s.sched, 400, 0, WALK_PREEMPT)->count, 2 * ROUNDS);
	cr_expect_eq(offcpu__hist(s.off, WALK_OFF_IO)->count, ROUNDS);
	report__free(&s);
	mt_close(&t, false);
}
