/* report.c - lxtrace report's numbers on recorded runs of workloads whose behaviour is known:
 * a SCHED_FIFO hog that steals the victim's CPU for a known time after each of its wakeups
 * (steal), a thread that sleeps a known number of times (sleeper), a mutex held a known time
 * (lockhold), a known CPU loop (hotspin). The waits, their count and maximum, the thread that
 * held the CPU meanwhile, the reason and stack of time off the CPU, the functions sampled,
 * against what the workloads measured themselves or are known to do. What holds the CPU that
 * the trace does not record is named, never idle: an untraced program beside a target, and
 * lxtrace itself. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"
#include "user/model/model.h"
#include "user/report/cpu.h"
#include "user/report/notes.h"
#include "user/report/offcpu.h"
#include "user/report/report.h"
#include "user/report/sched.h"
#include "user/report/syslat.h"
#include "user/report/walk.h"

#define ROUNDS 10
#define HOLD_MS 20

#define TRACEFS "/sys/kernel/tracing"

/* perf's recording, and whether the test mounted tracefs for perf (then it unmounts it). */
static char perf_data[64];
static bool mounted_tracefs;
/* The workloads a test started in the background. */
static struct workload *busy, *target;

static void report_fini(void)
{
	workload__free(busy);
	workload__free(target);
	busy = target = NULL;
	if (perf_data[0])
		unlink(perf_data);
	perf_data[0] = '\0';
	if (mounted_tracefs)
		umount2(TRACEFS, MNT_DETACH);
	mounted_tracefs = false;
	itest_fini();
}

TestSuite(report, .fini = report_fini, .timeout = 180);

/* The recorder's trace read for pid's threads (of name comm, unless NULL), every section,
 * the worst `top` waits kept; whether each of them reaches back to its start among the runs
 * the report keeps is not asked. */
static void read_report(uint32_t pid, const char *comm, size_t top, struct report *r)
{
	struct report_opts o = { .sections = REPORT_ALL, .top = top,
				 .filter = { .pid = pid, .comm = comm, .to_ns = UINT64_MAX } };
	char err[512];
	int fd = open(recorder__path(it.rec), O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(report__read(fd, &o, r, err, sizeof(err)), 0, "%s", err);
	close(fd);
}

/* The same, each worst wait reaching back to its start. */
static void read_threads(uint32_t pid, const char *comm, size_t top, struct report *r)
{
	read_report(pid, comm, top, r);
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
	long long wl_max_us, blocked;
	size_t stolen = 0, named = 0;
	uint64_t longest = 0, lost, triggers, repaired;
	char pidbuf[16];

	itest_record(NULL, "steal", args, 60);
	pid = workload__pid(it.wl);
	hog = workload__tid(it.wl, "hog");
	victim = workload__tid(it.wl, "victim");
	wl_max_us = workload__stat(it.wl, "wait_max_us", -1);
	blocked = workload__stat(it.wl, "blocked", -1);
	cr_assert(hog > 0 && victim > 0 && wl_max_us >= HOLD_MS * 1000);
	cr_expect_geq(blocked, ROUNDS / 2, "the victim's read slept %lld times of %d", blocked, ROUNDS);
	read_threads((uint32_t)pid, "victim", ROUNDS + 5, &s);

	/* Every round's wait is at least the hog's hold, the hog on the CPU through it. On a
	 * loaded machine its creation's wait may be as long, and other threads may run after the
	 * hog; a switch the kernel did not report (this machine's init hides its threads'
	 * switch-outs, docs/model.md) leaves who ran unknown. */
	for (size_t i = 0; sched_report__worst(s.sched, i, &x); i++) {
		/* A round's: the hog ran first (the creation's wait, long on a loaded machine, is
		 * no round the workload measured). */
		if (x.kind == WALK_WAKEUP && x.nruns && x.runs[0].who.tid == (uint32_t)hog &&
		    x.ns > longest)
			longest = x.ns;
		if (x.ns < HOLD_MS * 1000000ull * 9 / 10)
			continue;
		stolen++;
		cr_expect_eq(x.who.tid, (uint32_t)victim);
		cr_expect_eq(x.kind, WALK_WAKEUP);
		if (x.nruns && x.runs[0].who.tid == (uint32_t)hog &&
		    x.runs[0].ns * 100 >= HOLD_MS * 1000000ull * 90)
			named++;
		else
			cr_log_info("a %.3f ms wait: %s tid %u ran %.3f ms, %.3f ms not known", x.ns / 1e6,
				    x.nruns ? "first" : "no thread;", x.nruns ? x.runs[0].who.tid : 0,
				    x.nruns ? x.runs[0].ns / 1e6 : 0, x.unsure_ns / 1e6);
	}
	/* A wakeup the kernel's records lost is the model's (a repair): its wait is not known. */
	notes__counts(s.notes, &lost, &triggers, &repaired);
	cr_expect(stolen + repaired >= (size_t)blocked && stolen <= (size_t)blocked + 1, "%zu waits "
		  "of about %d ms (%llu events repaired), the victim's read slept %lld times", stolen,
		  HOLD_MS, (unsigned long long)repaired, blocked);
	cr_expect_geq(named + 2, stolen, "the hog held the CPU through %zu of the %zu waits", named,
		      stolen);
	/* The workload's own measure holds the trace's wait: from before the hog's write to after
	 * the read in the workload, from sched_waking to the switch in the trace. On a quiet
	 * machine the longest of each are the same wait; on a busy one the victim may also be
	 * preempted after its read, a wait of another kind that the workload's measure adds. */
	if (!repaired)
		cr_expect_leq(longest, (uint64_t)wl_max_us * 1000 + 200000, "the trace's longest "
			      "wait of a round, %.3f ms, is longer than the workload's, %.3f ms",
			      longest / 1e6, wl_max_us / 1e3);
	/* Its wakeups: the rounds, and its creation. */
	cr_assert(sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)victim, WALK_WAKEUP));
	cr_expect_geq(sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)victim,
					 WALK_WAKEUP)->count + repaired, (uint64_t)blocked + 1);
	report__free(&s);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	expect_report("victim (tid", pidbuf);
}

/* Every thread of process pid runs on CPU cpu only (its later threads inherit it). */
static void pin(pid_t pid, int cpu)
{
	char path[64];
	cpu_set_t set;
	struct dirent *d;
	DIR *dir;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	cr_assert(dir, "%s: %s", path, strerror(errno));
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			cr_assert_eq(sched_setaffinity(atoi(d->d_name), sizeof(set), &set), 0,
				     "pinning %s: %s", d->d_name, strerror(errno));
	closedir(dir);
}

static int last_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (int)n - 1 : 0;
}

/* What held the CPU during wait x that the trace does not record: the time of the stand-ins
 * for lxtrace (self) or for untraced programs, and whether one of them names process pid. */
static uint64_t standin_ns(const struct sched_worst *x, bool self, pid_t pid, bool *named)
{
	uint64_t ns = 0;

	for (size_t j = 0; j < x->nruns; j++) {
		if (!model__standin(x->runs[j].who.g) ||
		    model__standin_self(x->runs[j].who.g) != self)
			continue;
		ns += x->runs[j].ns;
		if (x->runs[j].who.id.pid == (uint32_t)pid)
			*named = true;
	}
	return ns;
}

/* A target (-p) that wakes often, pinned with a busy untraced shell to one CPU: its waits for
 * that CPU are the shell's time, shown as "untraced: sh (pid PID)", never as no thread. It
 * was "no thread (the CPU idle, or the wakeup's way to it)" before untraced programs had
 * stand-ins: to the recording they were the idle task. Other programs outside the target may
 * take the CPU too (the machine is shared): they are untraced as well. */
Test(report, an_untraced_hog_beside_the_target_holds_the_cpu_in_its_waits)
{
	char pidbuf[16], want[64];
	struct sched_worst x;
	struct report r;
	size_t waits = 0, covered = 0;
	bool named = false;
	int cpu = last_cpu();

	itest_require_root();
	busy = workload__start("/bin/sh", (const char *[]){ "-c", "while :; do :; done", NULL });
	cr_assert(busy, "cannot start the busy shell: %s", strerror(errno));
	pin(workload__pid(busy), cpu);
	/* 400 sleeps of 10 ms: it outlives the recorder's start, and then ends the recording. */
	target = workload__start("sleeper", (const char *[]){ "400", NULL });
	cr_assert(target, "cannot start sleeper: %s", strerror(errno));
	pin(workload__pid(target), cpu);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)workload__pid(target));
	itest_start((const char *[]){ "-p", pidbuf, NULL });
	cr_assert_eq(workload__finish(target, 60), 0);
	itest_stop(0, 0);
	itest_load();

	read_threads((uint32_t)workload__pid(target), NULL, 10, &r);
	for (size_t i = 0; sched_report__worst(r.sched, i, &x); i++) {
		uint64_t un = standin_ns(&x, false, workload__pid(busy), &named);

		if (x.ns < 1000000)
			continue;
		waits++;
		/* The wakeup's way to the CPU is short: most of a wait of 1 ms or more is the
		 * holder's. */
		if (un * 2 >= x.ns)
			covered++;
		else
			cr_log_info("a %.3f ms wait: %.3f ms untraced, %.3f ms no thread, %.3f not known",
				    x.ns / 1e6, un / 1e6, x.idle_ns / 1e6, x.unsure_ns / 1e6);
	}
	report__free(&r);
	cr_assert_gt(waits, 0, "no wait of 1 ms or more beside a busy shell");
	cr_expect_geq(covered * 10, waits * 8, "untraced programs held the CPU through %zu of the "
		      "%zu waits", covered, waits);
	cr_expect(named, "no wait names the busy shell (pid %d)", (int)workload__pid(busy));
	snprintf(want, sizeof(want), "untraced: sh (pid %d)", (int)workload__pid(busy));
	expect_report(want, pidbuf);
}

/* The whole machine, the recorder pinned with two threads that yield to each other (40,000
 * switches to record): while it reads them the yielders wait for the CPU, and the report names
 * lxtrace there, as "lxtrace (the tracer)". Its threads are never recorded, so before they had
 * stand-ins their time was "no thread (the CPU idle, ...)". On a loaded machine a wait may
 * reach back past the runs the report keeps of the CPU (16384, the yielders' own): what it
 * keeps of it is enough. */
Test(report, the_tracers_own_time_on_a_cpu_is_named_not_idle)
{
	char cpubuf[16];
	struct sched_worst x;
	struct report r;
	uint64_t self = 0;
	bool named = false;
	int cpu = last_cpu();
	pid_t rec;

	itest_start(NULL);
	rec = recorder__pid(it.rec);
	pin(rec, cpu);
	snprintf(cpubuf, sizeof(cpubuf), "%d", cpu);
	itest_run("yielder", (const char *[]){ "20000", cpubuf, NULL }, 120);
	itest_stop(SIGINT, 0);
	itest_load();

	read_report((uint32_t)workload__pid(it.wl), NULL, 20, &r);
	for (size_t i = 0; sched_report__worst(r.sched, i, &x); i++)
		self += standin_ns(&x, true, rec, &named);
	report__free(&r);
	cr_expect_gt(self, 0, "lxtrace held the CPU in none of the yielders' 20 worst waits");
	cr_expect(named, "no wait names the recorder (pid %d)", (int)rec);
}

Test(report, a_sleeper_sleeps_n_times_in_its_syscall)
{
	const char *args[] = { "50", NULL };
	const struct hist *h;
	struct report s;
	uint64_t entries, lost, triggers, repaired;
	pid_t pid;
	char pidbuf[16];

	itest_record(NULL, "sleeper", args, 60);
	pid = workload__pid(it.wl);
	read_threads((uint32_t)pid, NULL, 10, &s);
	h = syslat__hist(s.sys, "clock_nanosleep", &entries);
	cr_assert(h, "no clock_nanosleep in the report of pid %d", pid);
	cr_expect_eq(h->count, 50, "%llu sleeps; the recorder said:\n%s", (unsigned long long)h->count,
		     recorder__stderr(it.rec));
	/* A sleep's time off the CPU is the sleep, as late as the timer fires (3.8 ms late once
	 * on this loaded VM), and the wait for a CPU after it. */
	cr_expect_geq(h->min, 10000000);
	cr_expect_lt(h->max, 1000000000, "a 10 ms sleep took %.3f ms", h->max / 1e6);
	/* A wakeup the kernel's records did not show is the model's (a repair): no wait known. */
	notes__counts(s.notes, &lost, &triggers, &repaired);
	h = sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)pid, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_geq(h->count + repaired, 50, "%llu wakeups, %llu events repaired",
		      (unsigned long long)h->count, (unsigned long long)repaired);
	report__free(&s);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	expect_report("clock_nanosleep", pidbuf);
}

/* itest_record in the go1.23 format (ropts after --format=go1.23): the file passes Go
 * 1.23's reader. */
static void record123(const char *ropt, const char *name, const char *const *wargs)
{
	const char *ropts[] = { "--format=go1.23", ropt, NULL };
	struct goparse_result r;

	itest_start(ropts);
	itest_run(name, wargs, 60);
	itest_stop(SIGINT, 0);
	cr_assert_eq(goparse_123(recorder__path(it.rec), &r), 0);
	cr_assert(r.ok, "go 1.23: %s", r.error);
}

/* The sleeper's report from a go1.23 file: the same 50 sleeps and their wakeups. */
/* syncer calls fdatasync 200 times, timing each call itself: with --syscalls=all the go1.19
 * report has 200 calls whose lengths add up to the thread's own measure within 10% (the
 * tracer's programs run inside it), each call once however many times it blocked (before:
 * "ENTERED 200, BLOCKED 788", 147 ms where the program measured 167 ms, a p50 per block). */
Test(report, syscalls_per_call_are_what_the_program_measures)
{
	const struct hist *calls, *blocks;
	struct report s;
	uint64_t entries;
	long long measured, delay;
	pid_t pid;

	itest_record((const char *[]){ "--syscalls=all", NULL }, "syncer",
		     (const char *[]){ "200", NULL }, 120);
	pid = workload__pid(it.wl);
	measured = itest_stat("sync_ns");
	read_report((uint32_t)pid, NULL, 10, &s);
	calls = syslat__calls(s.sys, "fdatasync");
	blocks = syslat__hist(s.sys, "fdatasync", &entries);
	cr_assert(calls, "no fdatasync call with a length in the report of pid %d", pid);
	cr_log_info("%llu calls, %llu ns in all (the program: %lld ns); %llu blocks, %llu ns",
		    (unsigned long long)calls->count, (unsigned long long)calls->sum, measured,
		    (unsigned long long)(blocks ? blocks->count : 0),
		    (unsigned long long)(blocks ? blocks->sum : 0));
	if (itest_summary_lost() == 0) {
		cr_expect_eq(calls->count, 200);
		cr_expect_eq(entries, 200);
	}
	/* The program's clock reads hold each call, and on a busy machine also the waits for a
	 * CPU between a read and the call, which the kernel's run delay over the loop holds. */
	delay = itest_stat("run_delay_ns");
	cr_expect((long long)calls->sum * 10 >= (measured - delay) * 9 *
			  (long long)calls->count / 200 &&
		  (long long)calls->sum * 10 <= measured * 11,
		  "the calls last %llu ns in the report, %lld ns as the program measured, %lld ns "
		  "of it or around it waiting for a CPU", (unsigned long long)calls->sum, measured,
		  delay);
	cr_expect_leq(calls->max, (uint64_t)itest_stat("sync_max_ns") * 11 / 10);
	report__free(&s);
}

Test(report, go123_a_sleeper_sleeps_n_times_in_its_syscall)
{
	const char *args[] = { "50", NULL };
	const struct hist *h;
	struct report s;
	uint64_t entries, lost, triggers, repaired;
	pid_t pid;
	char pidbuf[16];

	record123(NULL, "sleeper", args);
	pid = workload__pid(it.wl);
	read_threads((uint32_t)pid, NULL, 10, &s);
	h = syslat__hist(s.sys, "clock_nanosleep", &entries);
	cr_assert(h, "no clock_nanosleep in the report of pid %d", pid);
	cr_expect_eq(h->count, 50, "%llu sleeps; the recorder said:\n%s", (unsigned long long)h->count,
		     recorder__stderr(it.rec));
	cr_expect_geq(h->min, 10000000);
	cr_expect_lt(h->max, 1000000000, "a 10 ms sleep took %.3f ms", h->max / 1e6);
	cr_expect_eq(offcpu__hist(s.off, WALK_OFF_SLEEP)->count, 50);
	notes__counts(s.notes, &lost, &triggers, &repaired);
	h = sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)pid, WALK_WAKEUP);
	cr_assert(h);
	cr_expect_geq(h->count + repaired, 50, "%llu wakeups, %llu events repaired",
		      (unsigned long long)h->count, (unsigned long long)repaired);
	report__free(&s);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	expect_report("clock_nanosleep", pidbuf);
}

Test(report, a_lock_held_is_time_off_the_cpu_for_a_lock_in_pthread_mutex_lock)
{
	const char *args[] = { "10", "20", NULL };
	const struct hist *h;
	struct report s;
	long long wl_max_us, wl_min_us, blocked;
	pid_t pid;

	itest_record(NULL, "lockhold", args, 60);
	pid = workload__pid(it.wl);
	wl_max_us = workload__stat(it.wl, "lock_wait_max_us", -1);
	wl_min_us = workload__stat(it.wl, "lock_wait_min_us", -1);
	blocked = workload__stat(it.wl, "lock_blocked", -1);
	read_threads((uint32_t)pid, "waiter", 10, &s);
	h = offcpu__hist(s.off, WALK_OFF_LOCK);
	cr_assert(h, "no time off the CPU for a lock in the waiter's report");
	/* 10 on a quiet machine; fewer when a loaded one ran the waiter after the holder let go. */
	cr_expect_geq(blocked, 5, "the waiter blocked %lld times of 10", blocked);
	/* (one the workload measured under 0.1 ms may have blocked too) */
	cr_expect(h->count == (uint64_t)blocked || h->count == (uint64_t)blocked + 1, "%llu "
		  "stretches off the CPU for the lock, the workload blocked %lld times",
		  (unsigned long long)h->count, blocked);
	/* The trace's stretch begins at the switch-out inside the lock call and ends when the
	 * thread runs: inside the workload's own measure (which a loaded machine makes longer,
	 * waiting for a CPU before the call blocks), and at least most of the hold. */
	cr_expect_leq(h->max, (uint64_t)wl_max_us * 1000 + 1000, "trace %.3f ms, workload %.3f ms",
		      h->max / 1e6, wl_max_us / 1e3);
	cr_expect_geq(h->max, 18000000ull, "trace %.3f ms, workload %.3f ms (%.3f ms at least)",
		      h->max / 1e6, wl_max_us / 1e3, wl_min_us / 1e3);
	/* All of it in futex, under pthread_mutex_lock when user stacks are walked. */
	cr_expect_eq(offcpu__stack_ns(s.off, WALK_OFF_LOCK, "syscall futex"), h->sum);
	report__free(&s);
}

/* `lxtrace pprof FILE --cpu -p PID -o OUT`, then Go's `pprof -top OUT`: its first row is
 * function `func`, `flat` samples. */
static void expect_pprof_top(pid_t pid, const char *func, uint64_t flat)
{
	char out_path[64], pidbuf[16], *out = NULL, *err = NULL, *row, *end;
	unsigned long long got = 0;
	int rc;

	cr_assert_eq(record__tmpfile(out_path, sizeof(out_path), ".pb.gz"), 0);
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	rc = run_capture((const char *[]){ record__build_path("lxtrace"), "pprof",
					   recorder__path(it.rec), "--cpu", "-p", pidbuf, "-o",
					   out_path, NULL }, 60, NULL, &err);
	cr_assert_eq(rc, 0, "lxtrace pprof exited %d: %s", rc, err);
	free(err);
	rc = run_capture((const char *[]){ "/usr/lib/go-1.19/pkg/tool/linux_amd64/pprof", "-top",
					   out_path, NULL }, 60, &out, &err);
	unlink(out_path);
	cr_assert_eq(rc, 0, "pprof -top exited %d: %s", rc, err);
	row = out ? strstr(out, "cum%\n") : NULL;
	cr_assert(row && sscanf(row + 5, " %llu", &got) == 1, "pprof -top:\n%s", out);
	row += 5;
	end = strchr(row, '\n');
	cr_assert(end);
	*end = '\0';
	cr_expect(strstr(row, func), "pprof -top's first row is not %s: %s", func, row);
	cr_expect_eq(got, flat, "pprof -top's first row: %llu samples, the report's %s: %llu",
		     got, func, (unsigned long long)flat);
	free(out);
	free(err);
}

Test(report, cpu_samples_of_a_known_loop_by_function)
{
	const char *ropts[] = { "-F", "999", NULL };
	const char *args[] = { "chain", "500", "cpu", NULL };
	uint64_t samples, idle, self, total;
	struct report s;
	pid_t pid;

	itest_record(ropts, "hotspin", args, 60);
	pid = workload__pid(it.wl);
	read_threads((uint32_t)pid, NULL, 10, &s);
	samples = cpu_report__samples(s.cpu, &idle);
	/* 0.5 s of its own CPU time at 999 Hz: about 500 samples of the thread however busy the
	 * machine, less those lost while a reader was far behind (counted, the machine's
	 * together: shed by the reader, or left in a ring that filled meanwhile); the
	 * shares below are what the loop fixes. */
	cr_expect(samples > (itest_summary_lost() > 0 ? 20 : 250) && samples < 600,
		  "%llu samples, %lld records lost", (unsigned long long)samples,
		  itest_summary_lost());
	cr_expect_eq(idle, 0, "the idle task is no thread of the process");
	/* hot_inner is inlined into hot_middle: the symbolizer gives both frames. */
	cpu_report__function(s.cpu, "hot_inner", &self, &total);
	cr_expect_geq(self * 100, samples * 85, "hot_inner the leaf of %llu of %llu samples",
		      (unsigned long long)self, (unsigned long long)samples);
	cpu_report__function(s.cpu, "hot_outer", &self, &total);
	cr_expect_leq(self * 100, samples * 2, "hot_outer the leaf of %llu of %llu samples",
		      (unsigned long long)self, (unsigned long long)samples);
	cr_expect_geq(total * 100, samples * 90, "hot_outer on %llu of %llu samples",
		      (unsigned long long)total, (unsigned long long)samples);
	cpu_report__function(s.cpu, "hot_inner", &self, &total);
	report__free(&s);
	expect_pprof_top(pid, "hot_inner", self);
}

/* The loop's samples from a go1.23 file, each with its thread: the same shares, and pprof. */
Test(report, go123_cpu_samples_of_a_known_loop_by_function)
{
	const char *args[] = { "chain", "500", "cpu", NULL };
	uint64_t samples, idle, self, total;
	struct report s;
	pid_t pid;

	record123("-F999", "hotspin", args);
	pid = workload__pid(it.wl);
	read_threads((uint32_t)pid, NULL, 10, &s);
	samples = cpu_report__samples(s.cpu, &idle);
	cr_expect(samples > (itest_summary_lost() > 0 ? 20 : 250) && samples < 600,
		  "%llu samples, %lld records lost", (unsigned long long)samples,
		  itest_summary_lost());
	cr_expect_eq(idle, 0, "the idle task is no thread of the process");
	cpu_report__function(s.cpu, "hot_inner", &self, &total);
	cr_expect_geq(self * 100, samples * 85, "hot_inner the leaf of %llu of %llu samples",
		      (unsigned long long)self, (unsigned long long)samples);
	cpu_report__function(s.cpu, "hot_outer", &self, &total);
	cr_expect_geq(total * 100, samples * 90, "hot_outer on %llu of %llu samples",
		      (unsigned long long)total, (unsigned long long)samples);
	cpu_report__function(s.cpu, "hot_inner", &self, &total);
	report__free(&s);
	expect_pprof_top(pid, "hot_inner", self);
}

/* A thread's waits after a wakeup of min_ms or more as perf sched timehist prints them: each
 * line is one run, its "sch delay" (ms, three decimals) the wait from the waking
 * (sched_waking, before the enqueue lxtrace starts it at) to the run. */
static void timehist_waits(const char *text, pid_t tid, double min_ms, size_t *n, double *max_ms)
{
	char pat[32];
	const char *line = text;

	*n = 0;
	*max_ms = 0;
	snprintf(pat, sizeof(pat), "[%d", tid);
	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *at = strstr(line, pat), *nl = strchr(line, '\n');
		double wait, delay, run;

		if (!at || (nl && at > nl) || (at[strlen(pat)] != '/' && at[strlen(pat)] != ']'))
			continue;
		at = strchr(at, ']');
		if (sscanf(at + 1, "%lf %lf %lf", &wait, &delay, &run) != 3 || delay <= 0 ||
		    delay < min_ms)
			continue;
		(*n)++;
		if (delay > *max_ms)
			*max_ms = delay;
	}
}

/* A task's row of perf sched latency: "  COMM:TID | RUNTIME ms | SWITCHES | avg: ... | max: M ms". */
static bool latency_row(const char *text, pid_t tid, long *switches, double *max_ms)
{
	char pat[32];
	const char *at;

	snprintf(pat, sizeof(pat), ":%d ", tid);
	at = strstr(text, pat);
	if (!at || !(at = strchr(at, '|')) || !(at = strchr(at + 1, '|')))
		return false;
	if (sscanf(at + 1, "%ld", switches) != 1 || !(at = strstr(at, "max:")))
		return false;
	return sscanf(at + 4, "%lf", max_ms) == 1;
}

static char *run_perf(const char *const *argv)
{
	char *out = NULL, *err = NULL;
	int rc = run_capture(argv, 120, &out, &err);

	cr_assert_eq(rc, 0, "%s %s exited %d: %s", argv[0], argv[1], rc, err);
	free(err);
	return out;
}

/* Both tools record the same run: per thread of the workload, the number of waits after a
 * wakeup and the longest agree with perf sched latency's, which starts a wait at sched_wakeup
 * (the enqueue) as lxtrace does, and with perf sched timehist's, which starts it at
 * sched_waking, a few microseconds earlier (the victim is woken from its own CPU: 1-3 us), and
 * a new thread's at sched_wakeup_new, where lxtrace starts it at the fork: one wait each that
 * may differ by some microseconds.
 *
 * Both take their time at the tracepoint, one after the other: lxtrace records without
 * stacks here, since the walk of a stack in its probe delays perf's timestamps behind it by
 * 1-12 us (measured here). perf stamps with CLOCK_MONOTONIC (-k), lxtrace's clock. */
Test(report, perf_sched_agrees_on_wakeups_and_the_longest_wait)
{
	const char *perf = "/usr/bin/perf";
	const char *ropts[] = { "--stacks=none", "-F", "0", NULL };
	struct stat sb;
	struct report s;
	struct sched_worst x;
	const struct hist *h, *preempted;
	char *out = NULL, *err = NULL, *timehist, *latency;
	size_t n_th, stolen_th, stolen = 0;
	uint64_t last_at = 0, last_ns = 0, shown_max = 0;
	double th_max, lat_max;
	long lat_switches;
	pid_t pid, victim;
	int status;

	itest_require_root();
	if (stat(perf, &sb))
		cr_skip_test("no %s", perf);
	if (stat(TRACEFS "/events", &sb)) {
		cr_assert_eq(mount("nodev", TRACEFS, "tracefs", 0, NULL), 0, "mount tracefs: %s",
			     strerror(errno));
		mounted_tracefs = true;
	}
	cr_assert_eq(record__tmpfile(perf_data, sizeof(perf_data), ".data"), 0);
	itest_start(ropts);
	{
		/* perf sched record's own events and sched_wakeup, which its latency reads. */
		const char *argv[] = { perf, "sched", "record", "-k", "CLOCK_MONOTONIC", "-e",
				       "sched:sched_wakeup", "-o", perf_data, "--",
				       record__workload_path("steal"), "10", "20", "10", NULL };

		status = run_capture(argv, 120, &out, &err);
		cr_assert_eq(status, 0, "perf sched record exited %d: %s", status, err);
		it.wl = workload__from_output(out, status);
		cr_assert(it.wl);
		free(out);
		free(err);
	}
	itest_stop(SIGINT, 0);
	itest_load();
	pid = workload__pid(it.wl);
	victim = workload__tid(it.wl, "victim");
	cr_assert(pid > 0 && victim > 0);
	read_threads((uint32_t)pid, "victim", 20, &s);
	h = sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)victim, WALK_WAKEUP);
	cr_assert(h, "no waits of the victim in the report");
	/* timehist prints a run at its end: the victim's last wait, whose run its exit ends, has
	 * no line. Its longest is the longest of the others. */
	for (size_t i = 0; sched_report__worst(s.sched, i, &x); i++)
		if (x.kind == WALK_WAKEUP && x.at > last_at) {
			last_at = x.at;
			last_ns = x.ns;
		}
	for (size_t i = 0; sched_report__worst(s.sched, i, &x); i++) {
		stolen += x.kind == WALK_WAKEUP && x.ns >= 1000000;
		if (x.kind == WALK_WAKEUP && x.at != last_at && x.ns > shown_max)
			shown_max = x.ns;
	}

	timehist = run_perf((const char *[]){ perf, "sched", "timehist", "-i", perf_data, NULL });
	latency = run_perf((const char *[]){ perf, "sched", "latency", "-i", perf_data, NULL });
	timehist_waits(timehist, victim, 0, &n_th, &th_max);
	timehist_waits(timehist, victim, 1.0, &stolen_th, &th_max);
	cr_assert(latency_row(latency, victim, &lat_switches, &lat_max), "no row of tid %d:\n%s",
		  victim, latency);
	cr_log_info("victim tid %d: lxtrace %llu waits after a wakeup (%zu of 1 ms or more), the "
		    "longest %.6f ms; perf timehist %zu (%zu), %.3f ms; perf latency %ld, %.3f ms",
		    victim, (unsigned long long)h->count, stolen, h->max / 1e6, n_th, stolen_th,
		    th_max, lat_switches, lat_max);
	cr_expect(stolen == stolen_th || stolen == stolen_th + 1, "waits of 1 ms or more: lxtrace "
		  "%zu, perf timehist %zu", stolen, stolen_th);
	cr_expect(stolen == 10 || stolen == 11, "%zu waits of 1 ms or more", stolen);
	cr_expect(h->count == n_th || h->count == n_th + 1, "waits: lxtrace %llu, perf timehist %zu",
		  (unsigned long long)h->count, n_th);
	/* Its "Switches" are every wait, after a preemption too (a loaded machine preempts it). */
	preempted = sched_report__hist(s.sched, (uint32_t)pid, (uint32_t)victim, WALK_PREEMPT);
	cr_expect_leq(labs((long)(h->count + (preempted ? preempted->count : 0)) - lat_switches), 1,
		      "waits: lxtrace %llu after a wakeup and %llu after a preemption, perf latency "
		      "%ld", (unsigned long long)h->count,
		      (unsigned long long)(preempted ? preempted->count : 0), lat_switches);
	/* timehist prints 0.001 ms, and the tools' timestamps of one event are 0-3 us apart
	 * (measured with perf script --ns): they agree to that, but an interrupt between the two
	 * probes of one tracepoint can set a wait apart by some tens of us (21 us once in 12
	 * runs here). */
	cr_expect_leq(fabs(shown_max / 1e6 - th_max), 0.05, "longest wait but the last (%.6f ms): "
		      "lxtrace %.6f ms, perf timehist %.3f ms", last_ns / 1e6, shown_max / 1e6, th_max);
	cr_expect_leq(lat_max, h->max / 1e6 + 0.05, "longest wait: lxtrace %.6f ms, perf "
		      "latency %.3f ms", h->max / 1e6, lat_max);
	cr_expect_geq(lat_max, h->max / 1e6 - 0.1, "longest wait: lxtrace %.6f ms, perf latency "
		      "%.3f ms", h->max / 1e6, lat_max);
	free(timehist);
	free(latency);
	report__free(&s);
}

/* `lxtrace pprof FILE --offcpu --folded --comm vforker` (and extra, unless NULL): of its lines
 * naming nanosleep, how many, their values' sum and how many name a process frame. */
static void folded_nanosleeps(const char *extra, unsigned *lines, uint64_t *sum, unsigned *pids)
{
	const char *argv[] = { record__build_path("lxtrace"), "pprof", recorder__path(it.rec),
			       "--offcpu", "--folded", "--comm", "vforker", extra, NULL };
	char *out = NULL, *err = NULL, *line, *save;
	int rc = run_capture(argv, 60, &out, &err);

	cr_assert_eq(rc, 0, "lxtrace pprof exited %d: %s", rc, err);
	*lines = *pids = 0;
	*sum = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *value = strrchr(line, ' ');

		if (!strstr(line, "nanosleep") || !value)
			continue;
		(*lines)++;
		*sum += strtoull(value + 1, NULL, 10);
		*pids += strstr(line, " (pid ") != NULL;
	}
	free(out);
	free(err);
}

/* pprof --merge-pids: vforker's children, each a process of its own sleeping in nanosleep, are
 * a stack each by their process frames, and merged the same time on fewer stacks, none naming
 * a process (before: an unknown option). */
Test(report, merge_pids_adds_up_the_processes_of_one_program)
{
	unsigned lines, pids, mlines, mpids;
	uint64_t sum, msum;

	itest_record(NULL, "vforker", (const char *[]){ "5", NULL }, 60);
	folded_nanosleeps(NULL, &lines, &sum, &pids);
	folded_nanosleeps("--merge-pids", &mlines, &msum, &mpids);
	cr_log_info("%u stacks of %u processes, %llu ns; merged %u stacks", lines, pids,
		    (unsigned long long)sum, mlines);
	cr_expect_geq(pids, 5, "%u stacks name a process", pids);
	cr_expect_eq(mpids, 0, "%u merged stacks name a process", mpids);
	cr_expect_gt(mlines, 0);
	cr_expect_lt(mlines, lines);
	cr_expect_eq(msum, sum);
	/* Five sleeps of 20 ms at least. */
	cr_expect_geq(sum, 5 * 20000000ull);
}

/* `report --depth N` shows N frames of code of each stack, the rest counted: the sleeper's
 * stack (clock_nanosleep <- nanosleep <- main <- libc's start, and the kernel's frames) cut at
 * one, and whole at 100. */
Test(report, depth_shows_as_many_frames_as_asked)
{
	char *one = NULL, *all = NULL, pid[16];
	const char *argv[] = { NULL, "report", "--offcpu", "-p", pid, "--depth", NULL, NULL,
			       NULL };
	int rc;

	itest_record(NULL, "sleeper", (const char *[]){ "20", NULL }, 60);
	snprintf(pid, sizeof(pid), "%d", (int)workload__pid(it.wl));
	argv[0] = record__build_path("lxtrace");
	argv[7] = recorder__path(it.rec);
	argv[6] = "1";
	rc = run_capture(argv, 60, &one, NULL);
	cr_assert_eq(rc, 0, "report --depth 1: exit %d", rc);
	argv[6] = "100";
	rc = run_capture(argv, 60, &all, NULL);
	cr_assert_eq(rc, 0, "report --depth 100: exit %d", rc);
	cr_expect(strstr(one, " more\n") && strstr(one, "clock_nanosleep"),
		  "--depth 1 counts no frames left out:\n%s", one);
	cr_expect(!strstr(all, " more\n") && strstr(all, "main"),
		  "--depth 100 leaves frames out, or has no main:\n%s", all);
	free(one);
	free(all);
}
