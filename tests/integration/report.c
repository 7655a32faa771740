/* report.c - lxtrace report's numbers on recorded runs of workloads whose behaviour is known:
 * a SCHED_FIFO hog that steals the victim's CPU for a known time after each of its wakeups
 * (steal), a thread that sleeps a known number of times (sleeper), a mutex held a known time
 * (lockhold), a known CPU loop (hotspin). The waits, their count and maximum, the thread that
 * held the CPU meanwhile, the reason and stack of time off the CPU, the functions sampled,
 * against what the workloads measured themselves or are known to do. */
#include <fcntl.h>

#include "tests/integration/itest.h"
#include "user/report/cpu.h"
#include "user/report/offcpu.h"
#include "user/report/report.h"
#include "user/report/sched.h"
#include "user/report/syslat.h"
#include "user/report/walk.h"

#define ROUNDS 10
#define HOLD_MS 20

TestSuite(report, .fini = itest_fini, .timeout = 120);

/* The recorder's trace read for pid's threads (of name comm, unless NULL), every section,
 * the worst `top` waits kept. */
static void read_threads(uint32_t pid, const char *comm, size_t top, struct report *r)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = top,
				 .filter = { .pid = pid, .comm = comm, .to_ns = UINT64_MAX } };
	char err[512];
	int fd = open(recorder__path(it.rec), O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(report__read(fd, &o, r, err, sizeof(err)), 0, "%s", err);
	close(fd);
	cr_expect_eq(r->st.runs_missed, 0);
}

/* `lxtrace report FILE ARGS...` exits 0 and prints `want`. */
static void expect_report(const char *want, const char *pid)
{
	const char *argv[] = { record__build_path("lxtrace"), "report", recorder__path(it.rec), "-p",
			       pid, NULL };
	char *out = NULL, *err = NULL;
	int rc = run_capture(argv, 60, &out, &err);

	cr_expect_eq(rc, 0, "lxtrace report exited %d: %s", rc, err);
	cr_expect(out && strstr(out, want), "no '%s' in the report:\n%s", want, out);
	free(out);
	free(err);
}

Test(report, a_fifo_hog_steals_the_cpu_after_each_wakeup_and_is_named)
{
	const char *args[] = { "10", "20", "10", NULL };
	struct report s;
	struct sched_worst x;
	pid_t pid, hog, victim;
	long long wl_max_us;
	size_t stolen = 0;
	char pidbuf[16];

	itest_record(NULL, "steal", args, 60);
	pid = workload__pid(it.wl);
	hog = workload__tid(it.wl, "hog");
	victim = workload__tid(it.wl, "victim");
	wl_max_us = workload__stat(it.wl, "wait_max_us", -1);
	cr_assert(hog > 0 && victim > 0 && wl_max_us >= HOLD_MS * 1000);
	read_threads((uint32_t)pid, NULL, ROUNDS + 5, &s);

	/* Every round's wait is the hog's hold, the hog on the CPU all through it: the worst
	 * waits are those ROUNDS, then only short ones. */
	for (size_t i = 0; sched_report__worst(s.sched, i, &x); i++) {
		if (x.ns < HOLD_MS * 1000000ull * 9 / 10)
			continue;
		stolen++;
		cr_expect_eq(x.who.tid, (uint32_t)victim, "a %.3f ms wait of tid %u", x.ns / 1e6,
			     x.who.tid);
		cr_expect_eq(x.kind, WALK_WAKEUP);
		cr_assert_geq(x.nruns, 1);
		cr_expect_eq(x.runs[0].who.tid, (uint32_t)hog, "tid %u ran during the wait",
			     x.runs[0].who.tid);
		cr_expect_geq((x.runs[0].to - x.runs[0].from) * 100, x.ns * 95,
			      "the hog ran %.3f ms of the %.3f ms wait",
			      (x.runs[0].to - x.runs[0].from) / 1e6, x.ns / 1e6);
		if (i == 0) {
			/* The trace's wait begins at sched_waking, inside the hog's write; the
			 * workload's before the write: it measures a little more. */
			cr_expect_leq(x.ns, (uint64_t)wl_max_us * 1000 + 1000, "trace %.3f ms, "
				      "the workload measured %.3f ms", x.ns / 1e6, wl_max_us / 1e3);
			cr_expect_geq(x.ns + 200000, (uint64_t)wl_max_us * 1000, "trace %.3f ms, "
				      "the workload measured %.3f ms", x.ns / 1e6, wl_max_us / 1e3);
		}
	}
	cr_expect_eq(stolen, ROUNDS, "%zu waits of about %d ms, not %d", stolen, HOLD_MS, ROUNDS);
	/* Its wakeups: the rounds, and its creation. */
	cr_assert(sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)victim, WALK_WAKEUP));
	cr_expect_eq(sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)victim,
					WALK_WAKEUP)->count, ROUNDS + 1);
	report__free(&s);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	expect_report("after a wakeup: victim (tid", pidbuf);
}

Test(report, a_sleeper_sleeps_n_times_in_its_syscall)
{
	const char *args[] = { "50", NULL };
	const struct hist *h;
	struct report s;
	uint64_t entries;
	pid_t pid;
	char pidbuf[16];

	itest_record(NULL, "sleeper", args, 60);
	pid = workload__pid(it.wl);
	read_threads((uint32_t)pid, NULL, 10, &s);
	h = syslat__hist(s.sys, "clock_nanosleep", &entries);
	cr_assert(h, "no clock_nanosleep in the report of pid %d", pid);
	cr_expect_eq(h->count, 50, "%llu sleeps; the recorder said:\n%s", (unsigned long long)h->count,
		     recorder__stderr(it.rec));
	cr_expect_geq(h->min, 10000000);
	cr_expect_lt(h->max, 30000000, "a 10 ms sleep took %.3f ms", h->max / 1e6);
	h = sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)pid, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_geq(h->count, 50, "%llu wakeups", (unsigned long long)h->count);
	report__free(&s);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	expect_report("clock_nanosleep", pidbuf);
}

Test(report, a_lock_held_is_time_off_the_cpu_for_a_lock_in_pthread_mutex_lock)
{
	const char *args[] = { "10", "20", NULL };
	const struct hist *h;
	struct report s;
	long long wl_max_us, wl_min_us;
	pid_t pid;

	itest_record(NULL, "lockhold", args, 60);
	pid = workload__pid(it.wl);
	wl_max_us = workload__stat(it.wl, "lock_wait_max_us", -1);
	wl_min_us = workload__stat(it.wl, "lock_wait_min_us", -1);
	read_threads((uint32_t)pid, "waiter", 10, &s);
	h = offcpu__hist(s.off, WALK_OFF_LOCK);
	cr_assert(h, "no time off the CPU for a lock in the waiter's report");
	cr_expect_eq(h->count, 10);
	/* The trace's stretch begins at the switch-out inside the lock call and ends when the
	 * thread runs: inside the workload's own measure, and a little shorter. */
	cr_expect_leq(h->max, (uint64_t)wl_max_us * 1000 + 1000, "trace %.3f ms, workload %.3f ms",
		      h->max / 1e6, wl_max_us / 1e3);
	cr_expect_geq(h->max + 500000, (uint64_t)wl_max_us * 1000, "trace %.3f ms, workload %.3f ms",
		      h->max / 1e6, wl_max_us / 1e3);
	cr_expect_geq(h->min + 500000, (uint64_t)wl_min_us * 1000);
	/* All of it in futex, under pthread_mutex_lock when user stacks are walked. */
	cr_expect_eq(offcpu__stack_ns(s.off, WALK_OFF_LOCK, "syscall futex"), h->sum);
	report__free(&s);
}

Test(report, cpu_samples_of_a_known_loop_by_function)
{
	const char *ropts[] = { "-F", "999", NULL };
	const char *args[] = { "chain", "500", NULL };
	uint64_t samples, idle, self, total;
	struct report s;
	pid_t pid;

	itest_record(ropts, "hotspin", args, 60);
	pid = workload__pid(it.wl);
	read_threads((uint32_t)pid, NULL, 10, &s);
	samples = cpu_report__samples(s.cpu, &idle);
	/* 0.5 s at 999 Hz: about 500 samples of the thread. */
	cr_expect(samples > 350 && samples < 600, "%llu samples", (unsigned long long)samples);
	cr_expect_eq(idle, 0, "the idle task is no thread of the process");
	/* hot_inner is inlined into hot_middle: the symbolizer gives both frames. */
	cpu_report__function(s.cpu, "hot_inner", &self, &total);
	cr_expect_geq(self * 100, samples * 85, "hot_inner the leaf of %llu of %llu samples",
		      (unsigned long long)self, (unsigned long long)samples);
	cpu_report__function(s.cpu, "hot_outer", &self, &total);
	cr_expect_eq(self, 0);
	cr_expect_geq(total * 100, samples * 90, "hot_outer on %llu of %llu samples",
		      (unsigned long long)total, (unsigned long long)samples);
	report__free(&s);
}
