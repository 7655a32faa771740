/* stacks.c - CPU samples and call stacks: samples of known code name its functions and lines
 * (inlined calls as their own frames, Go functions, kernel frames of a syscall on top of the
 * user frames), a process that exited before the recording ended still resolves, the shares
 * agree with perf's, and --stacks / -F / --sample-idle choose what is recorded. */
#include "tests/integration/itest.h"
#include "tests/lib/schedstat.h"

/* perf(1), run by path: run_capture does not search PATH. */
#define PERF "/usr/bin/perf"

TestSuite(stacks, .fini = itest_fini, .timeout = 180);

/* The index of the first frame of s whose func is func (contains it, when sub), or -1. */
static int frame_at(const struct gt_stack *s, const char *func, bool sub)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (sub ? !!strstr(s->frames[i].func, func) : !strcmp(s->frames[i].func, func))
			return (int)i;
	return -1;
}

/* CPU samples whose stack's process frame (the thread's identity; the outermost frame for a
 * "[...]" one, which stands alone) starts with ident. */
static size_t samples_of(const char *ident, bool (*match)(const struct gt_stack *), size_t *matched)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t n = 0;

	*matched = 0;
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *outer;

		if (ev[i].type != GT_EV_CPU_SAMPLE)
			continue;
		outer = ident[0] == '[' ? tq_outermost(ev[i].stack) : tq_process(ev[i].stack);
		if (!outer || strncmp(outer, ident, strlen(ident)))
			continue;
		n++;
		*matched += match ? match(ev[i].stack) : 0;
	}
	return n;
}

/* Prints the first few samples of ident, for a failing assertion. */
static void dump_samples(const char *ident, size_t max)
{
	const struct gt_event *ev = gt_trace__events(it.trace);

	for (size_t i = 0; i < gt_trace__nevents(it.trace) && max; i++) {
		const struct gt_stack *s = ev[i].stack;
		const char *outer = ident[0] == '[' ? tq_outermost(s) : tq_process(s);

		if (ev[i].type != GT_EV_CPU_SAMPLE || !outer || strncmp(outer, ident, strlen(ident)))
			continue;
		max--;
		fprintf(stderr, "--- sample:\n");
		for (size_t j = 0; j < s->n; j++)
			fprintf(stderr, "    %s %s:%llu\n", s->frames[j].func, s->frames[j].file,
				(unsigned long long)s->frames[j].line);
	}
}

static long long inner_lo, inner_hi, middle_call, outer_call;

/* hot_inner (inlined, on a line of its loop) <- hot_middle (at its call) <- hot_outer (at its
 * call) <- main, then the identity. */
static bool hot_chain(const struct gt_stack *s)
{
	int i = frame_at(s, "hot_inner", false);

	return i >= 0 && (size_t)i + 4 < s->n &&
	       (long long)s->frames[i].line >= inner_lo && (long long)s->frames[i].line <= inner_hi &&
	       strstr(s->frames[i].file, "hotspin.c") &&
	       !strcmp(s->frames[i + 1].func, "hot_middle") &&
	       (long long)s->frames[i + 1].line == middle_call &&
	       !strcmp(s->frames[i + 2].func, "hot_outer") &&
	       (long long)s->frames[i + 2].line == outer_call &&
	       !strcmp(s->frames[i + 3].func, "main");
}

static void inlined_chain(void)
{
	size_t n, chained;
	const char *ident;

	/* The workload exits before the recorder stops: its last stacks are symbolized after it
	 * is gone, from the snapshot taken when it exec'ed. 1.5 s of its own CPU time: as many
	 * samples on a busy machine. */
	itest_record(NULL, "hotspin", (const char *[]){ "chain", "1500", "cpu", NULL }, 60);
	inner_lo = itest_stat("inner_lo");
	inner_hi = itest_stat("inner_hi");
	middle_call = itest_stat("middle_call");
	outer_call = itest_stat("outer_call");
	ident = itest_ident("hotspin");
	n = samples_of(ident, hot_chain, &chained);
	cr_log_info("hotspin: %zu samples, %zu with the inlined chain", n, chained);
	if (n < 50 || chained * 10 < n * 8)
		dump_samples(ident, 5);
	cr_assert_geq(n, 50, "%zu samples of a spin of 1.5 s of CPU at 99 Hz", n);
	cr_assert_geq(chained * 10, n * 8, "only %zu of %zu samples carry hot_inner:%lld-%lld <- "
		      "hot_middle:%lld <- hot_outer:%lld <- main", chained, n, inner_lo, inner_hi,
		      middle_call, outer_call);
}

Test(stacks, inlined_chain_with_lines_even_after_exit)
{
	inlined_chain();
}

/* On 5.10 (the compat programs, no mmap_lock tracepoint) user stacks are the kernel's
 * frame-pointer walk, with the process's mappings read from /proc at its exec: code with frame
 * pointers, as the workloads are built, is walked whole. */
Test(stacks, inlined_chain_from_frame_pointers_on_what_kernel_5_10_has)
{
	itest_mask("modern,mmap_tp,vma_iter");
	inlined_chain();
	itest_expect_without("frame pointers only");
}

static bool in_main_spin(const struct gt_stack *s)
{
	return s && s->n > 1 && !strcmp(s->frames[0].func, "main.spin");
}

/* Stacks of ident's events that end where Go's traceback does (runtime.mstart, on each M's
 * g0 stack) and are marked truncated all the same (user/stacks/callstacks.c, go_top_frame). */
static size_t marked_at_go_top(const char *ident)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t n = 0;

	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_stack *s = ev[i].stack;
		const char *proc = tq_process(s);

		if (!proc || strncmp(proc, ident, strlen(ident)))
			continue;
		for (size_t j = 1; j < s->n; j++)
			if (!strcmp(s->frames[j].func, "[truncated]") &&
			    !strncmp(s->frames[j - 1].func, "runtime.mstart", 14))
				n++;
	}
	return n;
}

static bool through_spin_now(const struct gt_stack *s)
{
	return s && tq_stack_has(s, "main.spinNow");
}

/* The Go fixture spins in main.spin (or with "now" in main.spinNow) until killed, once it has
 * had 1.5 s of CPU time (however long a busy machine takes to give it that, a minute at most:
 * about 150 samples at 99 Hz, fewer where records were lost); at least 80% of its
 * samples match. */
static void go_spin(const char *name, const char *mode, bool (*match)(const struct gt_stack *),
		    const char *what)
{
	struct workload *w;
	char ident[64];
	size_t n, named;
	const char *out;

	itest_start(NULL);
	snprintf(ident, sizeof(ident), "%s (pid ", strrchr(name, '/') + 1);
	w = workload__start(record__build_path(name), (const char *[]){ mode, NULL });
	cr_assert(w, "cannot start %s: %s", name, strerror(errno));
	for (int i = 0; i < 600 && schedstat__cpu_ms(workload__pid(w)) >= 0 &&
			schedstat__cpu_ms(workload__pid(w)) < 1500; i++)
		usleep(100 * 1000);
	kill(workload__pid(w), SIGKILL);
	workload__finish(w, 10);
	cr_assert_eq(workload__status(w), 128 + SIGKILL, "%s: status %d (expected to be killed)",
		     name, workload__status(w));
	out = workload__stdout(w);
	cr_assert(out && strstr(out, "spin="), "%s printed no address: %s", name, out ? out : "");
	workload__free(w);
	itest_stop(SIGINT, 0);
	itest_load();
	n = samples_of(ident, match, &named);
	cr_log_info("%s %s: %zu samples, %zu %s", name, mode ? mode : "", n, named, what);
	if (n < 50 || named * 10 < n * 8)
		dump_samples(ident, 5);
	cr_assert_geq(n, itest_summary_lost() > 0 ? 20 : 50, "%zu samples of a Go spin of "
		      "1.5 s of CPU at 99 Hz, %lld records lost", n, itest_summary_lost());
	cr_assert_geq(named * 10, n * 8, "only %zu of %zu samples %s", named, n, what);
	cr_assert_eq(marked_at_go_top(ident), 0, "stacks of %s that reach the top of a Go stack are "
		     "marked [truncated]", name);
}

Test(stacks, go119_function_named)
{
	go_spin("tests/symfix/spin-go1.19", NULL, in_main_spin, "have main.spin as leaf");
}

Test(stacks, go123_function_named)
{
	go_spin("tests/symfix/spin-go1.23", NULL, in_main_spin, "have main.spin as leaf");
}

/* Go calls the vDSO on the thread's own stack and keeps its callers' frames on the goroutine's:
 * the frame-pointer chain goes from one stack to the other (bpf/unwind.bpf.h, fp_step). Before:
 * `__vdso_clock_gettime <- time.now <- [truncated]`; 66 of 1873 samples reached main.spinNow. */
Test(stacks, go_samples_in_the_vdso_keep_their_callers)
{
	go_spin("tests/symfix/spin-go1.19", "now", through_spin_now, "reach main.spinNow");
}

/* The Go fixture's frameless leaf: main.leaf has no frame (a nosplit function without locals,
 * `go tool objdump -s main.leaf`), so a frame-pointer step from it skips its caller. Frames
 * are told by name, or where a frame has none ("[unknown] FILE+0xADDR", as a stripped build's
 * had before its pc tables named them) by address, against where the program said its
 * functions begin (leaf, cpuLoop, then main). */
static unsigned long long go_leaf, go_loop, go_main;

static bool go_frame_in(const struct gt_rframe *f, const char *name, unsigned long long lo,
			unsigned long long hi)
{
	const char *plus = strstr(f->func, "+0x");
	unsigned long long a;

	if (!strcmp(f->func, name))
		return true;
	if (strncmp(f->func, "[unknown] ", 10) || !plus)
		return false;
	a = strtoull(plus + 1, NULL, 16);
	return a >= lo && a < hi;
}

/* Whether s is in main.leaf (*in; *by_name: that frame is named so), and with main.cpuLoop
 * as its caller. */
static bool leaf_under_cpu_loop(const struct gt_stack *s, bool *in, bool *by_name)
{
	*in = *by_name = false;
	for (size_t i = 0; s && i < s->n; i++) {
		if (!go_frame_in(&s->frames[i], "main.leaf", go_leaf, go_loop))
			continue;
		*in = true;
		*by_name = !strcmp(s->frames[i].func, "main.leaf");
		return i + 1 < s->n &&
		       go_frame_in(&s->frames[i + 1], "main.cpuLoop", go_loop, go_main);
	}
	return false;
}

/* At least 90% of the samples in main.leaf name main.cpuLoop as its caller, unwound from the
 * program's pc tables (user/stacks/gopclntab.c). Counted from the first that does: a binary
 * new to the recorder gets its rows a few milliseconds after it is mapped, and on a loaded
 * machine its first stacks may be finished without them (docs/stacks.md, "First sight").
 * Before: none of them (76 of 76 samples of the 1.23 build went main.leaf <- main.main). */
static void go_frameless_leaf(const char *name)
{
	const struct gt_event *ev;
	size_t in_leaf = 0, named = 0, before = 0, shown = 0, by_name = 0;
	char ident[64], addrs[64], path[4096];
	FILE *f;

	/* The program alone (the whole of a shared machine would bury the recorder's reader), at
	 * 999 Hz: the machine may give the loop a tenth of a CPU. The thread's name is its
	 * program's, cut to 15 bytes as the kernel keeps it. */
	snprintf(path, sizeof(path), "%s", record__build_path(name));
	snprintf(addrs, sizeof(addrs), "/tmp/lxtrace-test-goaddrs-%d", (int)getpid());
	itest_start((const char *[]){ "-F", "999", "--", path, "cpu", "2000", addrs, NULL });
	itest_stop(0, 0);
	itest_load();
	snprintf(ident, sizeof(ident), "%.15s (pid ", strrchr(name, '/') + 1);
	f = fopen(addrs, "r");
	cr_assert(f && fscanf(f, "leaf=%llx cpuLoop=%llx main=%llx", &go_leaf, &go_loop,
			      &go_main) == 3 && go_leaf < go_loop && go_loop < go_main,
		  "%s wrote no addresses to %s", name, addrs);
	fclose(f);
	unlink(addrs);
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *proc = tq_process(ev[i].stack);
		bool in, ok, has_name;

		if (ev[i].type != GT_EV_CPU_SAMPLE || !proc || strncmp(proc, ident, strlen(ident)))
			continue;
		ok = leaf_under_cpu_loop(ev[i].stack, &in, &has_name);
		if (!in)
			continue;
		by_name += has_name;
		if (!ok && !named) {
			before++;
			continue;
		}
		in_leaf++;
		named += ok;
		if (!ok && shown++ < 3) {
			fprintf(stderr, "--- in main.leaf, not under main.cpuLoop:\n");
			for (size_t j = 0; j < ev[i].stack->n; j++)
				fprintf(stderr, "    %s\n", ev[i].stack->frames[j].func);
		}
	}
	cr_log_info("%s: %zu samples in main.leaf before the first under main.cpuLoop, then %zu, "
		    "%zu of them under main.cpuLoop", name, before, in_leaf, named);
	cr_assert_geq(before + in_leaf, 30, "%zu samples in main.leaf in 2 s at 999 Hz",
		      before + in_leaf);
	cr_assert_gt(named, 0, "none of %zu samples in main.leaf names main.cpuLoop", before);
	cr_assert_geq(named * 10, in_leaf * 9, "only %zu of %zu samples in main.leaf name "
		      "main.cpuLoop", named, in_leaf);
	/* A stripped build too: its pc tables name its functions (user/stacks/sym_elf.c). Before:
	 * "[unknown] gostacks-stripped-go1.23+0x4dc5b9" for each of them. */
	cr_assert_geq(by_name * 10, (before + in_leaf) * 9, "only %zu of %zu samples in main.leaf "
		      "name it", by_name, before + in_leaf);
	cr_assert_eq(marked_at_go_top(ident), 0, "stacks of %s that reach the top of a Go stack are "
		     "marked [truncated]", name);
}

Test(stacks, go119_frameless_leaf_keeps_its_caller)
{
	go_frameless_leaf("tests/symfix/gostacks-go1.19");
}

Test(stacks, go123_frameless_leaf_keeps_its_caller)
{
	go_frameless_leaf("tests/symfix/gostacks-go1.23");
}

/* Stripped (-ldflags='-s -w'): no symbols, no DWARF, the pc tables still there. */
Test(stacks, go123_stripped_frameless_leaf_keeps_its_caller)
{
	go_frameless_leaf("tests/symfix/gostacks-stripped-go1.23");
}

/* Whether frame i exists and is a user frame: neither kernel, nor lxtrace's syscall frame, nor
 * the identity (outermost). */
static bool user_frame_at(const struct gt_stack *s, int i)
{
	return i >= 0 && (size_t)i + 1 < s->n && strcmp(s->frames[i].file, "[kernel]") &&
	       strncmp(s->frames[i].func, "syscall ", 8);
}

/* do_syscall_64 (the kernel's syscall path), then `syscall getppid`, then user frames. The user
 * frames stop short of main: libc's syscall() keeps no frame pointer, so a frame-pointer walk
 * goes from it straight to main's caller (docs/stacks.md). */
static bool getppid_on_user(const struct gt_stack *s)
{
	int k = frame_at(s, "do_syscall_64", false), sys = frame_at(s, "syscall getppid", false);

	return k >= 0 && !strcmp(s->frames[k].file, "[kernel]") && sys > k && user_frame_at(s, sys + 1);
}

Test(stacks, syscall_kernel_frames_on_user_frames)
{
	size_t n, matched;

	itest_record(NULL, "sysloop", (const char *[]){ "5000000", NULL }, 60);
	n = samples_of(itest_ident("sysloop"), getppid_on_user, &matched);
	cr_log_info("sysloop: %zu samples, %zu with getppid's kernel path on user frames", n, matched);
	if (matched * 10 < n || matched < 5 || n < 20)
		dump_samples(itest_ident("sysloop"), 5);
	cr_assert_geq(n, 20, "%zu samples of a 5M getppid loop", n);
	/* Not most: the timer interrupt that samples is held off while the kernel runs with
	 * interrupts disabled, and often lands on the first user instruction after the syscall. */
	cr_assert(matched * 10 >= n && matched >= 5, "only %zu of %zu samples show kernel frames, "
		  "`syscall getppid`, then user frames", matched, n);
}

static bool leaf_work_a(const struct gt_stack *s)
{
	return s && s->n && !strcmp(s->frames[0].func, "work_a");
}

/* perf's share of work_a among hotspin's samples, from `perf report`; -1 when not found. */
static double perf_share(const char *data)
{
	char *out = NULL, *line;
	double share = -1;
	int rc;

	rc = run_capture((const char *[]){ PERF, "report", "-i", data, "--stdio", "--no-children",
					   "-g", "none", "--sort", "sym", "--comm", "hotspin",
					   "--percentage", "relative", "-q",
					   NULL }, 60, &out, NULL);
	cr_assert_eq(rc, 0, "perf report failed (%d)", rc);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, "work_a") && sscanf(line, " %lf%%", &share) == 1)
			break;
	free(out);
	return share;
}

Test(stacks, top_function_share_agrees_with_perf)
{
	char data[64], *out = NULL;
	size_t n, in_a;
	double ours, theirs;
	int rc, pid = 0;

	cr_assert_eq(record__tmpfile(data, sizeof(data), ".perf"), 0);
	/* Each share is a sampling estimate: with work_a at 90% and ~2,000 samples each, the two
	 * differ by 0.9 points (one standard deviation), so 5 points is a real disagreement. */
	itest_start((const char *[]){ "-F", "999", NULL });
	/* The same run seen by both: perf samples its child, lxtrace the whole machine. 2 s of
	 * the workload's own CPU time, however long a busy machine takes to give it. */
	rc = run_capture((const char *[]){ PERF, "record", "-q", "-e", "cpu-clock", "-F", "999", "-g",
					   "-o", data, "--", record__build_path("tests/workloads/hotspin"),
					   "split", "2000", "cpu", NULL }, 240, &out, NULL);
	itest_stop(SIGINT, 0);
	if (rc) {
		unlink(data);
		cr_assert_eq(rc, 0, "perf record failed (%d)", rc);
	}
	cr_assert(out && sscanf(out, "pid %d", &pid) == 1, "no pid from hotspin: %s", out ? out : "");
	free(out);
	theirs = perf_share(data);
	unlink(data);
	itest_load();
	{
		char ident[64];

		snprintf(ident, sizeof(ident), "hotspin (pid %d)", pid);
		n = samples_of(ident, leaf_work_a, &in_a);
	}
	cr_assert_geq(n, 1000, "%zu samples of a spin of 2 s of CPU at 999 Hz", n);
	ours = 100.0 * in_a / n;
	cr_log_info("work_a: lxtrace %.1f%% of %zu samples, perf %.1f%%", ours, n, theirs);
	cr_assert_geq(theirs, 0, "perf report shows no work_a");
	cr_assert(ours - theirs <= 5 && theirs - ours <= 5,
		  "work_a: lxtrace %.1f%%, perf %.1f%%: more than 5 points apart", ours, theirs);
}

/* The sleeper's GoSleep events, checked with check(). */
static size_t sleeps(pid_t tid, bool (*check)(const struct gt_stack *), size_t *ok)
{
	const struct gt_event *e;
	size_t i = 0, n = 0;

	*ok = 0;
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_SLEEP), tid))) {
		n++;
		*ok += check(e->stack);
		i++;
	}
	return n;
}

/* The syscall frame as leaf, then user frames (libc's, at least: its functions keep no frame
 * pointer, so a walk from them may end there), the identity (process, program) outermost. */
static bool user_frames(const struct gt_stack *s)
{
	int sys = frame_at(s, "syscall clock_nanosleep", false);

	return sys == 0 && user_frame_at(s, 1) && frame_at(s, "sleeper (pid", true) == (int)s->n - 2 &&
	       !strcmp(tq_outermost(s), "sleeper");
}

static bool kernel_and_user(const struct gt_stack *s)
{
	int sys = frame_at(s, "syscall clock_nanosleep", false), k = frame_at(s, "do_syscall_64", false);

	return !strcmp(s->frames[0].file, "[kernel]") && k >= 0 && sys > k && user_frame_at(s, sys + 1);
}

static bool name_only(const struct gt_stack *s)
{
	return s && s->n == 3 && !strcmp(s->frames[0].func, "syscall clock_nanosleep");
}

static void check_sleeps(const char *stacks, bool (*check)(const struct gt_stack *), const char *what)
{
	size_t n, ok;
	pid_t tid;

	itest_record((const char *[]){ stacks, NULL }, "sleeper", (const char *[]){ "10", NULL }, 60);
	tid = itest_tid("sleeper");
	n = sleeps(tid, check, &ok);
	itest_expect(n >= 10 && ok == n, tid, "%s: %zu of %zu GoSleep stacks show %s", stacks, ok, n, what);
}

Test(stacks, default_user_stacks_on_blocking_events)
{
	check_sleeps("--stacks=user", user_frames, "`syscall clock_nanosleep` <- user frames <- identity");
}

Test(stacks, both_puts_kernel_frames_first)
{
	check_sleeps("--stacks=both", kernel_and_user, "kernel frames <- syscall <- user frames");
}

Test(stacks, none_keeps_only_the_name)
{
	check_sleeps("--stacks=none", name_only, "only the syscall and identity frames");
}

static bool any(const struct gt_stack *s)
{
	return true;
}

/* An idle sample: kernel frames only (the idle loop), then "[idle]". */
static bool idle_loop(const struct gt_stack *s)
{
	return s->n >= 2 && !strcmp(s->frames[0].file, "[kernel]") &&
	       !strcmp(s->frames[s->n - 2].file, "[kernel]");
}

Test(stacks, idle_samples_only_when_asked)
{
	size_t idle, ok;

	itest_record((const char *[]){ "--sample-idle", "-F", "199", NULL }, "sleeper",
		     (const char *[]){ "100", NULL }, 60);
	idle = samples_of("[idle]", idle_loop, &ok);
	cr_log_info("%zu idle samples with --sample-idle", idle);
	/* cpu-clock stops on a CPU in NOHZ idle (perf too sees idle samples only from the CPU
	 * that keeps the tick): a machine busy elsewhere may give none. */
	if (!idle)
		cr_log_info("note: no idle samples: were the CPUs ever idle?");
	cr_assert_eq(ok, idle, "%zu of %zu idle samples are not kernel frames under [idle]", idle - ok, idle);
	itest_fini();

	itest_record(NULL, "sleeper", (const char *[]){ "50", NULL }, 60);
	idle = samples_of("[idle]", any, &ok);
	cr_assert_eq(idle, 0, "%zu samples of the idle task without --sample-idle", idle);
}

Test(stacks, freq_zero_turns_sampling_off)
{
	itest_record((const char *[]){ "-F", "0", NULL }, "hotspin", (const char *[]){ "chain", "300", NULL }, 60);
	cr_assert_eq(tq_count(it.trace, TQ_BIT(GT_EV_CPU_SAMPLE), TQ_ANY_THREAD), 0,
		     "-F 0 still wrote CPU samples");
}
