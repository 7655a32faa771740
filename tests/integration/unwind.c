/* unwind.c - user stacks of code without frame pointers, as Debian builds it: blocking stacks
 * down to main with lines, a frameless leaf with its caller, a changed caller at the same
 * stack pointer seen through the walk cache, Python's stacks against gdb's, samples that reach
 * main, short-lived processes fully named, wakeups from interrupts attributed to them, code
 * mapped anew where other code was named as it is now, rows taken from the cache a recording
 * before filled, and the rows map mapped only as far as rows fill it. */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/integration/itest.h"
#include "tests/lib/tcgroup.h"
#include "user/report/offcpu.h"
#include "user/report/report.h"

#define PYTHON "/usr/bin/python3"
#define GDB "/usr/bin/gdb"
#define NGINX "/usr/sbin/nginx"

TestSuite(unwind, .fini = itest_fini, .timeout = 240);

/* itest_record, with the workload started once the recorder has settled: lxtrace's first
 * second symbolizes the first stacks of every process of the machine (reading large debug
 * files), while new binaries' unwind rows wait; what is measured here is a program started
 * under a running recorder (docs/stacks.md, "First sight"). */
static void record_settled(const char *const *ropts, const char *name, const char *const *wargs)
{
	itest_start(ropts);
	usleep(1000 * 1000);
	itest_run(name, wargs, 60);
	itest_stop(SIGINT, 0);
	itest_load();
}

/* The index of the first frame of s named func, from index from on, or -1. */
static int frame_from(const struct gt_stack *s, size_t from, const char *func)
{
	for (size_t i = from; s && i < s->n; i++)
		if (!strcmp(s->frames[i].func, func))
			return (int)i;
	return -1;
}

static void print_stack(const struct gt_stack *s)
{
	for (size_t j = 0; s && j < s->n; j++)
		fprintf(stderr, "    %s %s:%llu pc=%#llx\n", s->frames[j].func, s->frames[j].file,
			(unsigned long long)s->frames[j].line, (unsigned long long)s->frames[j].pc);
}

/* Events of the types in mask about tid that have a stack, and in *ok how many pass check;
 * prints a few that fail. With before: a binary new to the recorder gets its rows a few
 * milliseconds after it is mapped (docs/stacks.md, "First sight") and its first stacks may end
 * early, so counting starts at the first stack that passes, with those before it in *before. */
static size_t count_stacks(uint64_t mask, uint32_t tid, bool (*check)(const struct gt_stack *),
			   size_t *ok, size_t *before)
{
	const struct gt_event *e;
	size_t i = 0, n = 0, shown = 0;

	*ok = 0;
	if (before)
		*before = 0;
	while ((e = tq_next(it.trace, &i, mask, tid))) {
		i++;
		if (!e->stack)
			continue;
		if (check(e->stack)) {
			(*ok)++;
		} else if (before && !*ok) {
			(*before)++;
			continue;
		} else if (shown++ < 3) {
			fprintf(stderr, "--- stack failing the check:\n");
			print_stack(e->stack);
		}
		n++;
	}
	return n;
}

/* ---- a read() reached through code without frame pointers ---- */

/* A read that waits for a pipe: a wait for a file descriptor (docs/model.md). */
#define PIPE_WAIT TQ_BIT(GT_EV_GO_BLOCK_SELECT)

static long long read_line, outer_a_line, main_line;

/* syscall read <- read <- inner_b:read_line <- outer_a:outer_a_line <- main's loop at
 * main_line (in reads(), which gcc inlines into main) ... main. */
static bool read_chain(const struct gt_stack *s)
{
	int r = frame_from(s, 0, "read"), b = frame_from(s, 0, "inner_b");

	return r >= 0 && b == r + 1 && s->n > (size_t)b + 2 &&
	       s->frames[b].line == (uint64_t)read_line && strstr(s->frames[b].file, "frameless.c") &&
	       !strcmp(s->frames[b + 1].func, "outer_a") &&
	       s->frames[b + 1].line == (uint64_t)outer_a_line &&
	       s->frames[b + 2].line == (uint64_t)main_line && frame_from(s, (size_t)b + 2, "main") > 0;
}

static void frameless_read(void)
{
	size_t n, ok;

	record_settled(NULL, "frameless", (const char *[]){ "read", "300", NULL });
	read_line = itest_stat("read_line");
	outer_a_line = itest_stat("outer_a_line");
	main_line = itest_stat("main_line");
	n = count_stacks(PIPE_WAIT, itest_tid("reader"), read_chain, &ok, NULL);
	cr_log_info("frameless read: %zu blocking reads, %zu with the whole chain", n, ok);
	cr_assert_geq(n, 250, "only %zu reads of 300 with a stack", n);
	cr_assert_geq(ok * 100, n * 95, "only %zu of %zu blocking stacks are read <- inner_b:%lld <- "
		      "outer_a:%lld <- main:%lld", ok, n, read_line, outer_a_line, main_line);
}

Test(unwind, blocking_read_through_frameless_code)
{
	frameless_read();
}

/* Without the VMA iterator (before 6.7) the mapping tables are read from /proc. */
Test(unwind, blocking_read_through_frameless_code_with_tables_from_proc)
{
	itest_mask("vma_iter");
	frameless_read();
	itest_expect_without("VMA iterator");
}

/* ---- the cache proves a stack unchanged by the words its walk read ---- */

Test(unwind, changed_caller_at_same_place_is_seen)
{
	const struct gt_event *e;
	size_t i = 0, n = 0, alternating = 0, named = 0, ones = 0, before = 0;
	int last = 0;
	const char *cached;
	pid_t tid;

	/* -v: the cache's figures are among the summary's internals. */
	record_settled((const char *[]){ "-v", NULL }, "frameless",
		       (const char *[]){ "callers", "400", NULL });
	tid = itest_tid("reader");
	/* call_one and call_two alternate, at the same stack pointer and depth: a cache keyed
	 * by the registers alone would repeat the first caller. */
	while ((e = tq_next(it.trace, &i, PIPE_WAIT, tid))) {
		int one, two, which;

		i++;
		if (!e->stack || frame_from(e->stack, 0, "read") < 0)
			continue;
		one = frame_from(e->stack, 0, "call_one");
		two = frame_from(e->stack, 0, "call_two");
		which = one >= 0 ? 1 : two >= 0 ? 2 : 0;
		/* Until the binary's rows are loaded its frameless frames cannot be unwound
		 * (docs/stacks.md, "First sight"): counted from the first read that names a caller. */
		if (!named && !which) {
			before++;
			continue;
		}
		n++;
		if (!which)
			continue;
		named++;
		ones += which == 1;
		alternating += last && which != last;
		if (last && which == last) {
			fprintf(stderr, "--- the same caller twice in a row:\n");
			print_stack(e->stack);
		}
		last = which;
	}
	cached = strstr(recorder__stderr(it.rec), "unchanged (cached)");
	cr_log_info("callers: %zu reads, %zu name their caller, %zu changes of caller, after %zu "
		    "before the first that did", n, named, alternating, before);
	cr_assert_geq(n + before, 350, "only %zu reads of 400 with a stack", n + before);
	cr_assert_leq(before, 50, "%zu reads before the first that names its caller", before);
	cr_assert_geq(named * 100, n * 95, "only %zu of %zu stacks name call_one or call_two", named, n);
	/* A read that the machine's load let run after its byte arrived does not block, and the
	 * next blocking read then repeats the caller: a few repeats are the workload's, not the
	 * cache's. A cache keyed by the registers alone would repeat one caller throughout. */
	cr_assert_geq(alternating * 100, (named - 1) * 95, "the caller changed %zu times in %zu "
		      "reads that alternate it", alternating, named);
	cr_assert(ones * 100 >= named * 40 && ones * 100 <= named * 60,
		  "call_one named %zu of %zu reads that alternate it", ones, named);
	/* The cache was in play: most walks were proven unchanged rather than walked. */
	cr_assert(cached, "no cache figures in the summary:\n%s", recorder__stderr(it.rec));
}

/* ---- a frameless leaf keeps its caller ---- */

static long long leaf_line, middle_line, outer_line;

static bool leaf_chain(const struct gt_stack *s)
{
	int l = frame_from(s, 0, "spin_leaf");

	return l == 0 && s->n > 4 && s->frames[0].line == (uint64_t)leaf_line &&
	       !strcmp(s->frames[1].func, "spin_middle") && s->frames[1].line == (uint64_t)middle_line &&
	       !strcmp(s->frames[2].func, "spin_outer") && s->frames[2].line == (uint64_t)outer_line &&
	       !strcmp(s->frames[3].func, "main");
}

static bool in_leaf(const struct gt_stack *s)
{
	return s && s->n && !strcmp(s->frames[0].func, "spin_leaf");
}

Test(unwind, frameless_leaf_keeps_its_caller)
{
	const struct gt_event *e;
	size_t i = 0, n = 0, ok = 0, shown = 0;
	pid_t tid;

	record_settled((const char *[]){ "-F", "999", NULL }, "frameless",
		       (const char *[]){ "leaf", "2000", NULL });
	tid = itest_tid("spinner");
	leaf_line = itest_stat("leaf_line");
	middle_line = itest_stat("middle_line");
	outer_line = itest_stat("outer_line");
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_CPU_SAMPLE), tid))) {
		i++;
		if (!in_leaf(e->stack))
			continue;
		n++;
		if (leaf_chain(e->stack))
			ok++;
		else if (shown++ < 3)
			print_stack(e->stack);
	}
	cr_log_info("leaf: %zu samples in spin_leaf, %zu with its callers", n, ok);
	cr_assert_geq(n, 200, "only %zu samples in spin_leaf in 2 s at 999 Hz", n);
	cr_assert_geq(ok * 100, n * 95, "only %zu of %zu samples are spin_leaf:%lld <- spin_middle:%lld "
		      "<- spin_outer:%lld <- main", ok, n, leaf_line, middle_line, outer_line);
}

/* ---- through a signal handler ---- */

static long long handler_line;

/* syscall clock_nanosleep ... on_alarm:handler_line <- __restore_rt <- the code the signal
 * interrupted (spin_leaf or its callers, or main's loop) ... main. */
static bool through_signal(const struct gt_stack *s)
{
	int h = frame_from(s, 0, "on_alarm");

	return h > 0 && s->frames[h].line == (uint64_t)handler_line && (size_t)h + 2 < s->n &&
	       !strcmp(s->frames[h + 1].func, "__restore_rt") &&
	       frame_from(s, (size_t)h + 2, "main") > h + 1;
}

Test(unwind, signal_handler_stack_reaches_the_interrupted_code)
{
	size_t n, ok, before;

	record_settled(NULL, "frameless", (const char *[]){ "signal", "100", NULL });
	handler_line = itest_stat("handler_line");
	n = count_stacks(TQ_BIT(GT_EV_GO_SLEEP) | TQ_BIT(GT_EV_GO_SYSCALL), itest_tid("spinner"),
			 through_signal, &ok, &before);
	cr_log_info("signal: %zu sleeps, %zu through the trampoline to main, after %zu before the "
		    "first that did", n, ok, before);
	cr_assert_geq(n + before, 90, "only %zu of 100 handler sleeps with a stack", n + before);
	cr_assert_leq(before, 50, "%zu sleeps before the first through the trampoline", before);
	cr_assert_geq(ok * 100, n * 95, "only %zu of %zu sleeps are on_alarm <- __restore_rt <- ... "
		      "<- main", ok, n);
}

/* ---- a wakeup raised by an interrupt is the interrupt's ---- */

Test(unwind, interrupt_wakeups_carry_the_interrupt)
{
	const struct gt_event *e;
	size_t i = 0, n = 0, irq = 0, spinner = 0, sleeps;
	const char *ident;
	pid_t tid;

	itest_record(NULL, "frameless", (const char *[]){ "irq", "300", NULL }, 60);
	tid = itest_tid("sleeper");
	sleeps = (size_t)itest_stat("sleeps");
	ident = itest_ident("frameless");
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_UNBLOCK), tid))) {
		const char *outer;

		i++;
		n++;
		outer = tq_outermost(e->stack);
		irq += outer && !strcmp(outer, "[irq]");
		spinner += outer && !strcmp(outer, ident);
	}
	cr_log_info("irq: %zu wakeups of the sleeper, %zu by [irq], %zu by the spinner", n, irq,
		    spinner);
	/* Each sleep ends in a wakeup, in the trace unless records were lost, which must then
	 * be counted there (on a loaded machine the reader can fall behind whatever this does). */
	cr_assert_gt(n, 0, "no wakeup of the sleeper");
	if (itest_summary_lost() > 0)
		itest_expect_losses_counted();
	else
		cr_assert_geq(n, sleeps, "only %zu wakeups of the sleeper's %zu sleeps, no record "
			      "lost", n, sleeps);
	cr_assert_eq(spinner, 0, "%zu of %zu timer wakeups carry the interrupted thread's stack",
		     spinner, n);
	cr_assert_geq(irq * 100, n * 95, "only %zu of %zu timer wakeups carry [irq]", irq, n);
}

/* ---- Python against gdb ---- */

/* What gdb's Python prints for each frame of the selected thread, leaf first: its type, pc
 * and function. */
#define GDB_FRAMES "python exec(\"f = gdb.newest_frame()\\n" \
	"while f is not None:\\n" \
	"    print('FRAME %d %#x %s' % (f.type(), f.pc(), f.name()))\\n" \
	"    f = f.older()\\n\")"

/* The pcs of gdb's real frames, leaf first. gdb also shows frames inlined into them, which
 * share their pc (lxtrace shows them as frames of their own too), and "tail call" frames it
 * infers from DWARF call-site records: a function that jumped to the next one instead of
 * calling it left nothing on the stack, so no unwinder finds it; those are left out. The leaf's
 * pc is where the thread is; the others are return addresses, which lxtrace resolves (and names
 * its frame by) one byte back, inside the call. */
static size_t gdb_pcs(const char *out, uint64_t *pcs, size_t max)
{
	size_t n = 0;

	for (const char *l = strstr(out, "FRAME "); l && n < max; l = strstr(l + 1, "FRAME ")) {
		unsigned long long pc;
		int type;

		/* gdb.NORMAL_FRAME is 0, gdb.SIGTRAMP_FRAME 4 (INLINE 2, TAILCALL 3). */
		if (sscanf(l, "FRAME %d %llx", &type, &pc) != 2 || (type != 0 && type != 4))
			continue;
		pcs[n] = n ? pc - 1 : pc;
		n++;
	}
	return n;
}

/* Whether every gdb frame's pc is a frame of s, in the same order. */
static bool has_pcs_in_order(const struct gt_stack *s, const uint64_t *pcs, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		while (j < s->n && s->frames[j].pc != pcs[i])
			j++;
		if (j == s->n)
			return false;
	}
	return true;
}

/* Runs python3 -c code, waits for it to block, takes gdb's backtrace of its main thread,
 * kills it, and checks that the last stack lxtrace recorded for that thread before gdb
 * attached has every frame gdb shows, in order, and reaches Py_RunMain or main. */
static void python_like_gdb(const char *code, uint64_t mask)
{
	uint64_t pcs[128];
	char pidarg[32];
	const struct gt_event *e, *last = NULL;
	struct workload *py;
	char *bt = NULL;
	size_t n, i = 0;
	pid_t pid;
	int rc;

	if (access(GDB, X_OK) || access(PYTHON, X_OK))
		cr_skip_test("needs %s and %s (scripts/deps.sh installs them)", GDB, PYTHON);
	itest_start(NULL);
	py = workload__start(PYTHON, (const char *[]){ "-c", code, NULL });
	cr_assert(py, "cannot start python3: %s", strerror(errno));
	pid = workload__pid(py);
	usleep(1500 * 1000);	/* started, blocked, its stack recorded */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex", "bt", "-ex",
					   GDB_FRAMES, NULL }, 60, &bt, NULL);
	kill(pid, SIGKILL);
	workload__finish(py, 10);
	workload__free(py);
	itest_stop(SIGINT, 0);
	itest_load();
	cr_assert(rc == 0 && bt, "gdb failed (%d)", rc);
	n = gdb_pcs(bt, pcs, 128);
	cr_log_info("gdb's backtrace:\n%s", bt ? bt : "");
	cr_assert_geq(n, 5, "gdb showed %zu frames:\n%s", n, bt);
	/* The blocking event that was the thread's last before gdb stopped it. */
	while ((e = tq_next(it.trace, &i, mask, (uint32_t)pid))) {
		i++;
		if (e->stack && tq_leaf(e->stack) && !strncmp(tq_leaf(e->stack), "syscall ", 8) &&
		    has_pcs_in_order(e->stack, pcs, 1))
			last = e;
	}
	if (!last)
		tq_dump(it.trace, (uint32_t)pid, 60, stderr);
	cr_assert(last, "no blocking stack of python3 (pid %d) with gdb's leaf %#llx", (int)pid,
		  (unsigned long long)pcs[0]);
	if (!has_pcs_in_order(last->stack, pcs, n))
		print_stack(last->stack);
	cr_assert(has_pcs_in_order(last->stack, pcs, n), "lxtrace's stack lacks frames gdb shows");
	cr_assert(frame_from(last->stack, 0, "Py_RunMain") >= 0 || frame_from(last->stack, 0, "main") >= 0,
		  "the stack does not reach Py_RunMain or main");
	free(bt);
}

Test(unwind, python_sleep_has_every_frame_gdb_shows)
{
	python_like_gdb("import time\ntime.sleep(60)\n", TQ_BIT(GT_EV_GO_SLEEP) | TQ_BIT(GT_EV_GO_SYSCALL));
}

/* The threads gdb's "FRAME tid ..." lines of bt name, each once in the order first named, in
 * tids (at most max); how many. */
static int gdb_tids(const char *bt, int *tids, int max)
{
	int ntids = 0;

	for (const char *l = strstr(bt, "FRAME "); l && ntids < max; l = strstr(l + 1, "FRAME ")) {
		int t, k = 0;

		if (sscanf(l, "FRAME %d", &t) != 1)
			continue;
		while (k < ntids && tids[k] != t)
			k++;
		if (k == ntids)
			tids[ntids++] = t;
	}
	return ntids;
}

Test(unwind, python_join_has_every_frame_gdb_shows)
{
	python_like_gdb("import threading, time\n"
			"t = threading.Thread(target=time.sleep, args=(60,))\n"
			"t.start()\nt.join()\n",
			TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SYNC) |
			TQ_BIT(GT_EV_GO_BLOCK_COND) | TQ_BIT(GT_EV_GO_SYSCALL));
}

/* ---- Go against gdb ---- */

/* What gdb's Python prints for each frame of every thread, leaf first: the thread, the frame's
 * type, pc and function. */
#define GDB_THREADS_FRAMES "python exec(\"for t in gdb.selected_inferior().threads():\\n" \
	"    t.switch()\\n" \
	"    f = gdb.newest_frame()\\n" \
	"    while f is not None:\\n" \
	"        print('FRAME %d %d %#x %s' % (t.ptid[1], f.type(), f.pc(), f.name()))\\n" \
	"        f = f.older()\\n\")"

/* Where Go's own traceback ends a stack (user/stacks/callstacks.c, go_top_frame): past it gdb
 * reads the words of another stack or of the thread's creator as frames. */
static bool go_top(const char *func)
{
	static const char *const tops[] = { "runtime.mstart", "runtime.mcall", "runtime.morestack",
					    "runtime.goexit", "runtime.rt0_go" };

	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (!strcmp(func, tops[i]))
			return true;
	return false;
}

/* gdb's real frames of thread tid (as gdb_pcs: leaf pc, then return addresses one byte back),
 * up to the first frame whose function stop says to end at. *has_func: whether one of them is
 * func. 0 when the thread's frames never reach such a frame. */
static size_t gdb_pcs_until(const char *out, int tid, uint64_t *pcs, size_t max,
			    bool (*stop)(const char *), const char *func, bool *has_func)
{
	size_t n = 0;

	*has_func = false;
	for (const char *l = strstr(out, "FRAME "); l && n < max; l = strstr(l + 1, "FRAME ")) {
		unsigned long long pc;
		char name[256];
		int t, type;

		if (sscanf(l, "FRAME %d %d %llx %255s", &t, &type, &pc, name) != 4 || t != tid ||
		    (type != 0 && type != 4))
			continue;
		pcs[n] = n ? pc - 1 : pc;
		n++;
		*has_func |= !strcmp(name, func);
		if (stop(name))
			return n;
	}
	return 0;
}

/* Where gdb ends a C program's stack: at main (its backtrace stops there by default), a
 * thread's clone, or the entry. */
static bool c_top(const char *func)
{
	return !strcmp(func, "main") || !strcmp(func, "clone3") || !strcmp(func, "clone") ||
	       !strcmp(func, "_start");
}

/* The Go part of a thread's frames: up to the first frame where Go's traceback ends. */
static size_t gdb_go_pcs(const char *out, int tid, uint64_t *pcs, size_t max, const char *func,
			 bool *has_func)
{
	return gdb_pcs_until(out, tid, pcs, max, go_top, func, has_func);
}

/* Runs the Go fixture blocked (gostacks block: the main goroutine in Accept, so one thread in
 * epoll_wait, the other threads idle in futex waits), takes gdb's backtrace of every thread,
 * and checks that each thread's last blocking stack before gdb attached has every frame gdb
 * shows in its Go part, in order. At least one thread waits in futexsleep, one in epoll_func.
 * Before: runtime.futexsleep and the epoll wrapper were missing from all of them (runtime.futex
 * and the syscall stubs keep no frame). */
static void go_blocked_like_gdb(const char *name, const char *epoll_func)
{
	const uint64_t mask = TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SYNC) |
			      TQ_BIT(GT_EV_GO_BLOCK_COND) | TQ_BIT(GT_EV_GO_BLOCK_SELECT) |
			      TQ_BIT(GT_EV_GO_BLOCK_NET) | TQ_BIT(GT_EV_GO_SLEEP) |
			      TQ_BIT(GT_EV_GO_SYSCALL);
	size_t futexes = 0, epolls = 0, compared = 0, failed = 0;
	uint64_t pcs[128];
	char pidarg[32], addrs[64], *bt = NULL;
	struct workload *w;
	int tids[64], ntids = 0, rc;
	pid_t pid;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	itest_start(NULL);
	/* Most threads block once, at the start, and stay: a first short run of the same file has
	 * its rows loaded by then, so those stacks do not depend on how fast a loaded machine's
	 * recorder finishes first-sight walks (docs/stacks.md, "First sight"). */
	snprintf(addrs, sizeof(addrs), "/tmp/lxtrace-test-goaddrs-%d", (int)getpid());
	rc = run_capture((const char *[]){ record__build_path(name), "cpu", "200", addrs, NULL },
			 30, &bt, NULL);
	unlink(addrs);
	free(bt);
	bt = NULL;
	cr_assert_eq(rc, 0, "%s cpu: status %d", name, rc);
	usleep(500 * 1000);
	w = workload__start(record__build_path(name), (const char *[]){ "block", NULL });
	cr_assert(w, "cannot start %s: %s", name, strerror(errno));
	pid = workload__pid(w);
	usleep(1500 * 1000);	/* started, blocked, its stacks recorded */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex",
					   GDB_THREADS_FRAMES, NULL }, 60, &bt, NULL);
	kill(pid, SIGKILL);
	workload__finish(w, 10);
	workload__free(w);
	itest_stop(SIGINT, 0);
	itest_load();
	cr_assert(rc == 0 && bt, "gdb failed (%d)", rc);
	cr_log_info("gdb's frames:\n%s", bt);
	ntids = gdb_tids(bt, tids, 64);
	for (int k = 0; k < ntids; k++) {
		const struct gt_event *e, *last = NULL;
		bool futex, epoll;
		size_t n = gdb_go_pcs(bt, tids[k], pcs, 128, "runtime.futexsleep", &futex), i = 0;

		gdb_go_pcs(bt, tids[k], pcs, 128, epoll_func, &epoll);
		if (n < 2)
			continue;	/* no Go frames */
		/* The blocking event that was the thread's last before gdb stopped it. */
		while ((e = tq_next(it.trace, &i, mask, (uint32_t)tids[k]))) {
			i++;
			if (e->stack && tq_leaf(e->stack) && !strncmp(tq_leaf(e->stack), "syscall ", 8) &&
			    has_pcs_in_order(e->stack, pcs, 1))
				last = e;
		}
		if (!last)
			continue;	/* blocked before the recording (none is) or not in a syscall */
		compared++;
		futexes += futex;
		epolls += epoll;
		if (!has_pcs_in_order(last->stack, pcs, n)) {
			fprintf(stderr, "thread %d lacks frames gdb shows:\n", tids[k]);
			print_stack(last->stack);
			failed++;
		}
	}
	cr_log_info("%s: %d threads, %zu compared with gdb (%zu in futexsleep, %zu in %s), %zu "
		    "lacking frames", name, ntids, compared, futexes, epolls, epoll_func, failed);
	cr_assert_eq(failed, 0, "%zu of %zu threads' stacks lack frames gdb shows", failed, compared);
	cr_assert_geq(futexes, 1, "no thread waiting in runtime.futexsleep compared");
	cr_assert_geq(epolls, 1, "no thread waiting in %s compared", epoll_func);
}

Test(unwind, go119_blocked_threads_have_every_frame_gdb_shows)
{
	go_blocked_like_gdb("tests/symfix/gostacks-go1.19", "runtime.netpoll");
}

Test(unwind, go123_blocked_threads_have_every_frame_gdb_shows)
{
	go_blocked_like_gdb("tests/symfix/gostacks-go1.23", "internal/runtime/syscall.EpollWait");
}

/* ---- cgo: C frames over Go frames ---- */

/* The functions of goroutine 1 in Go's own traceback (runtime.Stack) in text, leaf first. */
static size_t go_traceback_funcs(const char *text, char names[][128], size_t max)
{
	const char *l = strstr(text, "goroutine 1 [");
	size_t n = 0;

	for (l = l ? strchr(l, '\n') : NULL; l && l[1] && l[1] != '\n' && n < max;
	     l = strchr(l + 1, '\n')) {
		const char *open = strchr(l + 1, '(');

		if (l[1] == '\t' || !open || open - l - 1 >= 128)
			continue;
		snprintf(names[n], 128, "%.*s", (int)(open - l - 1), l + 1);
		n++;
	}
	return n;
}

/* Frame f's function is name, as Go names it (the recorder keeps an assembly function's
 * ".abi0"). */
static bool go_named(const char *func, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(func, name, len) && (!func[len] || !strcmp(func + len, ".abi0"));
}

/* Where gdb, reading words of the g0 stack past it, loses its way in a cgo call. */
static bool is_asmcgocall(const char *func)
{
	return !strcmp(func, "runtime.asmcgocall");
}

/* A Go program blocked in C (a cgo call: C compiled by gcc without frame pointers, described by
 * .eh_frame only) has, in the stack of its blocking read, every frame gdb shows from the leaf
 * down to runtime.asmcgocall (where gdb, reading words of the g0 stack, loses its way), then
 * the Go frames under the call as Go's own traceback names them (runtime frames hidden). Before:
 * the walk stopped at the first C frame without a frame pointer ([truncated]). */
static void cgo_blocked_like_gdb(const char *name)
{
	const uint64_t mask = TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SYNC) |
			      TQ_BIT(GT_EV_GO_BLOCK_COND) | TQ_BIT(GT_EV_GO_BLOCK_SELECT) |
			      TQ_BIT(GT_EV_GO_BLOCK_NET) | TQ_BIT(GT_EV_GO_SLEEP) |
			      TQ_BIT(GT_EV_GO_SYSCALL) | TQ_BIT(GT_EV_GO_SYSBLOCK);
	char pidarg[32], *bt = NULL, go[16][128];
	const struct gt_event *e, *last = NULL;
	uint64_t pcs[64];
	size_t n = 0, ngo, i = 0, j;
	struct workload *w;
	int tid = 0, rc;
	bool in_c;
	pid_t pid;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	itest_start(NULL);
	/* A first run of the same file: its rows are loaded when the second one blocks. */
	rc = run_capture((const char *[]){ record__build_path(name), "cpu", "200", NULL }, 30,
			 &bt, NULL);
	free(bt);
	bt = NULL;
	cr_assert_eq(rc, 0, "%s cpu: status %d", name, rc);
	usleep(500 * 1000);
	w = workload__start(record__build_path(name), (const char *[]){ "block", NULL });
	cr_assert(w, "cannot start %s: %s", name, strerror(errno));
	pid = workload__pid(w);
	usleep(1500 * 1000);	/* blocked in C, its traceback printed, its stacks recorded */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex",
					   GDB_THREADS_FRAMES, NULL }, 60, &bt, NULL);
	kill(pid, SIGKILL);
	workload__finish(w, 10);
	itest_stop(SIGINT, 0);
	itest_load();
	cr_assert(rc == 0 && bt, "gdb failed (%d)", rc);
	ngo = go_traceback_funcs(workload__stdout(w), go, 16);
	cr_log_info("gdb's frames:\n%s\nGo's traceback:\n%s", bt, workload__stdout(w));
	/* gdb's frames of the thread in c_block, down to runtime.asmcgocall. */
	for (const char *l = strstr(bt, "FRAME "); l && !tid; l = strstr(l + 1, "FRAME ")) {
		char func[256];
		int t, type;

		if (sscanf(l, "FRAME %d %d %*x %255s", &t, &type, func) == 3 && !strcmp(func, "c_block"))
			tid = t;
	}
	n = tid ? gdb_pcs_until(bt, tid, pcs, 64, is_asmcgocall, "c_block", &in_c) : 0;
	workload__free(w);
	cr_assert_gt(tid, 0, "gdb shows no thread in c_block");
	cr_assert(in_c && n >= 4, "gdb shows %zu frames down to runtime.asmcgocall", n);
	cr_assert_geq(ngo, 3, "Go's traceback of goroutine 1 has %zu functions", ngo);
	while ((e = tq_next(it.trace, &i, mask, (uint32_t)tid))) {
		i++;
		if (e->stack && has_pcs_in_order(e->stack, pcs, 1))
			last = e;
	}
	if (!last) {
		for (i = 0; (e = tq_next(it.trace, &i, ~0ull, (uint32_t)tid)); i++) {
			fprintf(stderr, "event %u of thread %d:\n", e->type, tid);
			print_stack(e->stack);
		}
	}
	cr_assert_not_null(last, "no blocking stack of thread %d at gdb's leaf %#llx", tid,
			   (unsigned long long)pcs[0]);
	print_stack(last->stack);
	cr_expect(has_pcs_in_order(last->stack, pcs, n), "the stack lacks C frames gdb shows");
	/* Go's frames, in order, after the C ones. */
	for (j = 0; j < last->stack->n && last->stack->frames[j].pc != pcs[n - 1]; j++)
		;
	for (size_t g = 0; g < ngo; g++) {
		while (j < last->stack->n && !go_named(last->stack->frames[j].func, go[g]))
			j++;
		cr_expect_lt(j, last->stack->n, "the stack lacks %s, which Go's traceback shows",
			     go[g]);
	}
}

Test(unwind, go119_cgo_call_has_its_c_and_go_frames)
{
	cgo_blocked_like_gdb("tests/symfix/cgostacks-go1.19");
}

Test(unwind, go123_cgo_call_has_its_c_and_go_frames)
{
	cgo_blocked_like_gdb("tests/symfix/cgostacks-go1.23");
}

/* ---- first sight: whole from the first event ---- */

/* read <- inner_b <- outer_a <- main, by name: the lines are the workload's report, which a
 * command run by the recorder does not give the test. */
static bool read_chain_named(const struct gt_stack *s)
{
	int r = frame_from(s, 0, "read"), b = frame_from(s, 0, "inner_b");

	return r >= 0 && b == r + 1 && s->n > (size_t)b + 2 &&
	       !strcmp(s->frames[b + 1].func, "outer_a") && frame_from(s, (size_t)b + 2, "main") > 0;
}

/* The blocking reads of frameless's reader (main; its writer thread reads too, elsewhere) in
 * the trace, and in *ok how many carry read <- inner_b <- outer_a <- main. Not the read it was
 * in when the recording started, written on the housekeeping P from a copy of its stack taken
 * then (docs/model.md, "The stacks of the threads asleep"): the attached_* tests compare those
 * with gdb's; here, whose rows were ready in time varies (one cut in six runs of --cgroup). */
static size_t frameless_reads(size_t *ok)
{
	const long hk = sysconf(_SC_NPROCESSORS_CONF);
	const struct gt_event *e;
	size_t i = 0, n = 0;

	*ok = 0;
	while ((e = tq_next(it.trace, &i, PIPE_WAIT, TQ_ANY_THREAD))) {
		const char *proc = tq_process(e->stack);
		unsigned pid;

		i++;
		if (!proc || sscanf(proc, "frameless (pid %u)", &pid) != 1 ||
		    (uint32_t)tq_subject(e) != pid || e->p == hk)
			continue;
		if (read_chain_named(e->stack))
			(*ok)++;
		else if (n - *ok < 3)
			print_stack(e->stack);
		n++;
	}
	return n;
}

/* frameless's reads recorded in one way of choosing what to record: its binary and libc are
 * new to the recorder (a command, a process started on a recorded machine) or a running
 * process's rows and mapping table do not exist yet (-p, --cgroup); every read's stack, from
 * the first, is whole (walks that met a file before its rows were loaded are finished from a
 * copy of the stack: late_walk.h). Before: the first reads ended in libc or at inner_b. */
static void reads_whole_from_the_first(const char *mode)
{
	char path[4096], arg[64], cgroup[640] = "";
	struct workload *w = NULL;
	size_t n, ok;
	int err;

	snprintf(path, sizeof(path), "%s", record__workload_path("frameless"));
	if (!strcmp(mode, "command")) {
		itest_start((const char *[]){ "--", path, "read", "300", NULL });
		itest_stop(0, 0);
	} else if (!strcmp(mode, "machine")) {
		itest_start(NULL);
		itest_run("frameless", (const char *[]){ "read", "300", NULL }, 60);
		itest_stop(SIGINT, 0);
	} else {
		/* About 4 s of reads, the first 0.3 s before the recorder. */
		w = workload__start(path, (const char *[]){ "read", "1500", NULL });
		cr_assert(w, "cannot start frameless: %s", strerror(errno));
		usleep(300 * 1000);
		snprintf(arg, sizeof(arg), "%d", (int)workload__pid(w));
		if (!strcmp(mode, "pid")) {
			itest_start((const char *[]){ "-p", arg, NULL });
		} else {
			err = tcgroup_make(cgroup, sizeof(cgroup));
			if (!err)
				err = tcgroup_move(cgroup, workload__pid(w));
			if (err)
				workload__free(w);
			cr_assert_eq(err, 0, "cannot put frameless in a cgroup: %s", strerror(-err));
			itest_start((const char *[]){ "--cgroup", cgroup, NULL });
		}
		cr_assert_eq(workload__finish(w, 60), 0);
		workload__free(w);
		itest_stop(cgroup[0] ? SIGINT : 0, 0);
		if (cgroup[0])
			tcgroup_remove(cgroup);
	}
	itest_load();
	n = frameless_reads(&ok);
	cr_log_info("frameless read, %s: %zu blocking reads, %zu whole", mode, n, ok);
	cr_assert_geq(n, 250, "only %zu reads with a stack", n);
	cr_assert_eq(ok, n, "%zu of %zu blocking stacks are not read <- inner_b <- outer_a <- main",
		     n - ok, n);
}

Test(unwind, command_reads_are_whole_from_the_first)
{
	reads_whole_from_the_first("command");
}

Test(unwind, machine_reads_are_whole_from_the_first)
{
	reads_whole_from_the_first("machine");
}

Test(unwind, attached_reads_are_whole_from_the_first)
{
	reads_whole_from_the_first("pid");
}

Test(unwind, cgroup_reads_are_whole_from_the_first)
{
	reads_whole_from_the_first("cgroup");
}

/* ---- unwind rows kept across recordings ---- */

/* The binaries whose rows the recording took from its cache, by its -v summary; -1 when it
 * does not say. */
static long long rows_from_cache(void)
{
	const char *s = strstr(recorder__stderr(it.rec), "row cache:");
	long long n;

	return s && sscanf(s, "row cache: %lld binaries from", &n) == 1 ? n : -1;
}

/* A second recording takes the rows of frameless and libc from the cache the first filled, in
 * a private directory (tests never use the machine's), and every read's stack is as whole as
 * in command_reads_are_whole_from_the_first. */
Test(unwind, second_recording_takes_rows_from_the_cache)
{
	char base[] = "/tmp/lxtrace-test-rowcache-XXXXXX", dir[64], cmd[96], path[4096];
	long long cached[2];
	size_t n[2], ok[2];

	itest_require_root();
	cr_assert_not_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/rows", base);
	snprintf(path, sizeof(path), "%s", record__workload_path("frameless"));
	setenv("LXTRACE_CACHE_DIR", dir, 1);
	for (int i = 0; i < 2; i++) {
		itest_start((const char *[]){ "-v", "--", path, "read", "300", NULL });
		itest_stop(0, 0);
		itest_load();
		cached[i] = rows_from_cache();
		n[i] = frameless_reads(&ok[i]);
		cr_log_info("recording %d: rows of %lld binaries from the cache; %zu blocking reads, "
			    "%zu whole", i + 1, cached[i], n[i], ok[i]);
		if (cached[i] < 0)
			fprintf(stderr, "%s", recorder__stderr(it.rec));
		itest_fini();
	}
	unsetenv("LXTRACE_CACHE_DIR");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	cr_expect_eq(system(cmd), 0);
	cr_assert_eq(cached[0], 0, "the first recording found %lld binaries in an empty cache",
		     cached[0]);
	cr_assert_geq(cached[1], 2, "the second took only %lld binaries from the cache",
		      cached[1]);
	for (int i = 0; i < 2; i++) {
		cr_assert_geq(n[i], 250, "recording %d: only %zu reads with a stack", i + 1, n[i]);
		cr_assert_eq(ok[i], n[i], "recording %d: %zu of %zu blocking stacks are not read <- "
			     "inner_b <- outer_a <- main", i + 1, n[i] - ok[i], n[i]);
	}
}

/* python3 running before the recorder, attached with -p: none of its binaries' rows are
 * loaded when its first sleeps are recorded. Every sleep of its loop, from the first, has
 * every frame gdb shows at that sleep afterwards. Before: the first stacks stopped at
 * `syscall clock_nanosleep <- [truncated]` or in libc (docs/stacks.md, "First sight"). */
Test(unwind, attached_python_is_whole_from_the_first_sleep)
{
	static const char code[] = "import time\n"
				   "def nap():\n    time.sleep(0.02)\n"
				   "while True:\n    nap()\n";
	const struct gt_event *e;
	uint64_t pcs[128];
	struct workload *py;
	char pidarg[32], *bt = NULL;
	size_t n = 0, ok = 0, i = 0, npcs;
	pid_t pid;
	int rc;

	if (access(GDB, X_OK) || access(PYTHON, X_OK))
		cr_skip_test("needs %s and %s (scripts/deps.sh installs them)", GDB, PYTHON);
	itest_require_root();
	py = workload__start(PYTHON, (const char *[]){ "-c", code, NULL });
	cr_assert(py, "cannot start python3: %s", strerror(errno));
	pid = workload__pid(py);
	usleep(300 * 1000);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	itest_start((const char *[]){ "-p", pidarg, NULL });
	usleep(1000 * 1000);
	itest_stop(SIGINT, 0);
	/* gdb stops it in the sleep of its loop, as every stack recorded was. */
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex", "bt", "-ex",
					   GDB_FRAMES, NULL }, 60, &bt, NULL);
	kill(pid, SIGKILL);
	workload__finish(py, 10);
	workload__free(py);
	itest_load();
	cr_assert(rc == 0 && bt, "gdb failed (%d)", rc);
	npcs = gdb_pcs(bt, pcs, 128);
	cr_log_info("gdb's backtrace:\n%s", bt);
	cr_assert_geq(npcs, 5, "gdb showed %zu frames:\n%s", npcs, bt);
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_SLEEP), (uint32_t)pid))) {
		i++;
		n++;
		if (e->stack && has_pcs_in_order(e->stack, pcs, npcs))
			ok++;
		else if (n - ok < 3)
			print_stack(e->stack);
	}
	cr_log_info("attached python3: %zu sleeps, %zu with every frame gdb shows", n, ok);
	cr_assert_geq(n, 20, "only %zu sleeps of python3 (pid %d) recorded", n, (int)pid);
	cr_assert_eq(ok, n, "%zu of %zu sleeps lack frames gdb shows", n - ok, n);
	free(bt);
}

/* ---- the state at the start: threads asleep throughout ---- */

/* The events a thread blocks with. */
#define START_BLOCKS (TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SYNC) |                    \
		      TQ_BIT(GT_EV_GO_BLOCK_SELECT) | TQ_BIT(GT_EV_GO_SLEEP) |                      \
		      TQ_BIT(GT_EV_GO_BLOCK_COND) | TQ_BIT(GT_EV_GO_SYSBLOCK))

/* Waits up to 10 s until each of pid's n threads sleeps (state S), their tids in tids; false
 * if they never do. */
static bool all_asleep(pid_t pid, size_t n, pid_t *tids)
{
	for (int tries = 0; tries < 1000; tries++) {
		char path[64], line[512];
		size_t asleep = 0, seen = 0;
		struct dirent *d;
		DIR *dir;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		dir = opendir(path);
		while (dir && (d = readdir(dir))) {
			const char *paren;
			FILE *f;

			if (d->d_name[0] == '.')
				continue;
			if (seen < n)
				tids[seen] = atoi(d->d_name);
			seen++;
			snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", (int)pid, d->d_name);
			f = fopen(path, "r");
			if (f && fgets(line, sizeof(line), f) && (paren = strrchr(line, ')')) &&
			    paren[1] == ' ' && paren[2] == 'S')
				asleep++;
			if (f)
				fclose(f);
		}
		if (dir)
			closedir(dir);
		if (seen == n && asleep == n)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* The pcs gdb shows for thread tid in the output of `thread apply all` GDB_FRAMES. */
static size_t gdb_thread_pcs(const char *out, pid_t tid, uint64_t *pcs, size_t max)
{
	char lwp[32], *section;
	const char *at, *end;
	size_t n;

	snprintf(lwp, sizeof(lwp), "(LWP %d)", (int)tid);
	at = strstr(out, lwp);
	if (!at)
		return 0;
	end = strstr(at, "\nThread ");
	section = strndup(at, end ? (size_t)(end - at) : strlen(at));
	cr_assert(section);
	n = gdb_pcs(section, pcs, max);
	free(section);
	return n;
}

/* A process whose n threads already sleep when `lxtrace record -p` attaches, for 2 s, and
 * sleep on after it: each thread's block at the start has every frame gdb shows for it
 * afterwards, in order; and `report --offcpu` counts each the whole recording, one stretch
 * each, for the reasons in whys (n counts, indexed by enum walk_off). Before: the block at
 * the start named the syscall alone, and no time off the CPU was counted. */
static void asleep_throughout(struct workload *w, size_t n, const size_t *whys)
{
	pid_t pid = workload__pid(w), tids[16];
	char pidarg[32], *bt = NULL;
	struct report s;
	int rc;

	cr_assert(n <= 16 && all_asleep(pid, n, tids),
		  "the %zu threads of pid %d did not all fall asleep", n, (int)pid);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	itest_start((const char *[]){ "-p", pidarg, "-d", "2", NULL });
	itest_stop(0, 0);
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex",
					   "thread apply all " GDB_FRAMES, NULL }, 60, &bt, NULL);
	cr_assert(rc == 0 && bt, "gdb failed (%d)", rc);
	cr_log_info("gdb's backtraces:\n%s", bt);
	itest_load();
	{
		struct report_opts o = { .sections = REPORT_OFFCPU, .top = 10,
					 .filter = { .pid = (uint32_t)pid, .to_ns = UINT64_MAX } };
		char err[512];
		int fd = open(recorder__path(it.rec), O_RDONLY);

		cr_assert_geq(fd, 0);
		cr_assert_eq(report__read(fd, &o, &s, err, sizeof(err)), 0, "%s", err);
		close(fd);
	}
	for (size_t k = 0; k < n; k++) {
		const struct gt_event *e;
		uint64_t pcs[128];
		size_t i = 0, npcs = gdb_thread_pcs(bt, tids[k], pcs, 128);

		cr_assert_geq(npcs, 3, "gdb showed %zu frames of thread %d", npcs, (int)tids[k]);
		e = tq_next(it.trace, &i, START_BLOCKS, (uint32_t)tids[k]);
		itest_expect(e && e->stack, (uint32_t)tids[k], "no block of thread %d", (int)tids[k]);
		if (!has_pcs_in_order(e->stack, pcs, npcs))
			print_stack(e->stack);
		cr_assert(has_pcs_in_order(e->stack, pcs, npcs),
			  "thread %d's block at the start lacks frames gdb shows", (int)tids[k]);
		i++;
		cr_assert_null(tq_next(it.trace, &i, TQ_WAKEUPS, (uint32_t)tids[k]),
			       "thread %d woke during the recording", (int)tids[k]);
	}
	for (int why = 0; why < WALK_OFFS; why++) {
		const struct hist *h = offcpu__hist(s.off, why);

		cr_assert_eq(h ? h->count : 0, whys[why], "%zu stretches off the CPU for %s, not %zu",
			     h ? (size_t)h->count : 0, offcpu__reason(why), whys[why]);
		if (!h || !h->count)
			continue;
		/* From the recording's start to its end: the span but the init phase's ticks. */
		cr_assert_geq(h->min * 100, s.st.span_ns * 99, "%s: %llu ns of %llu",
			      offcpu__reason(why), (unsigned long long)h->min,
			      (unsigned long long)s.st.span_ns);
	}
	report__free(&s);
	free(bt);
}

/* A stuck pool built without frame pointers: five threads in read() of a pipe nobody writes
 * (pool_wait <- pool_worker), main in pthread_join. */
Test(unwind, attached_stuck_pool_has_gdbs_stacks_for_the_whole_recording)
{
	size_t whys[WALK_OFFS] = { [WALK_OFF_FD] = 5, [WALK_OFF_LOCK] = 1 };
	struct workload *w;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	itest_require_root();
	w = workload__start("frameless", (const char *[]){ "pool", "5", NULL });
	cr_assert(w, "cannot start frameless: %s", strerror(errno));
	asleep_throughout(w, 6, whys);
	workload__free(w);
}

/* python3's threads asleep in a lock and in a read of a pipe, main in join. */
Test(unwind, attached_python_threads_have_gdbs_stacks_for_the_whole_recording)
{
	static const char code[] = "import os, threading\n"
				   "r, w = os.pipe()\n"
				   "lock = threading.Lock()\nlock.acquire()\n"
				   "ts = [threading.Thread(target=lock.acquire) for _ in range(2)]\n"
				   "ts += [threading.Thread(target=os.read, args=(r, 1)) for _ in range(2)]\n"
				   "for t in ts: t.start()\n"
				   "for t in ts: t.join()\n";
	size_t whys[WALK_OFFS] = { [WALK_OFF_FD] = 2, [WALK_OFF_LOCK] = 3 };
	struct workload *w;

	if (access(GDB, X_OK) || access(PYTHON, X_OK))
		cr_skip_test("needs %s and %s (scripts/deps.sh installs them)", GDB, PYTHON);
	itest_require_root();
	w = workload__start(PYTHON, (const char *[]){ "-c", code, NULL });
	cr_assert(w, "cannot start python3: %s", strerror(errno));
	asleep_throughout(w, 5, whys);
	workload__free(w);
}

/* Processes pids (n), whose threads sleep already, recorded for 2 s with ropts (a target,
 * or none for the whole machine, then "-d", "2"), then stopped by gdb (`thread apply all`):
 * each thread asleep throughout has, in its block at the start, every frame gdb shows for
 * it, in order, to main or the thread's clone (in a Go program, go, as far as Go's
 * traceback goes). Threads that woke during the recording are left out (their later stacks
 * are other tests'). Returns how many were compared; counts[k]: of which gdb shows funcs[k]
 * for (nfuncs of them). */
static size_t start_stacks_like_gdb(const pid_t *pids, size_t n, const char *const *ropts,
				    bool go, const char *const *funcs, size_t *counts,
				    size_t nfuncs)
{
	char *bt = NULL, *all = calloc(1, 1);
	size_t compared = 0, failed = 0, len = 0;
	int tids[256], ntids = 0, rc = 0;

	itest_start(ropts);
	itest_stop(0, 0);
	for (size_t k = 0; k < n && rc == 0 && all; k++) {
		char pidarg[32];

		snprintf(pidarg, sizeof(pidarg), "%d", (int)pids[k]);
		rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex",
						   GDB_THREADS_FRAMES, NULL }, 60, &bt, NULL);
		if (rc == 0 && bt && (all = realloc(all, len + strlen(bt) + 1)))
			len += (size_t)sprintf(all + len, "%s", bt);
		free(bt);
		bt = NULL;
	}
	cr_assert(rc == 0 && all, "gdb failed (%d)", rc);
	cr_log_info("gdb's frames:\n%s", all);
	itest_load();
	ntids = gdb_tids(all, tids, 256);
	for (int k = 0; k < ntids; k++) {
		const struct gt_event *e;
		uint64_t pcs[128];
		size_t i = 0, npcs = 0;
		bool has[8] = { false };

		for (size_t f = 0; f < nfuncs && f < 8; f++)
			npcs = gdb_pcs_until(all, tids[k], pcs, 128, go ? go_top : c_top, funcs[f],
					     &has[f]);
		if (!nfuncs)
			npcs = gdb_pcs_until(all, tids[k], pcs, 128, go ? go_top : c_top, "",
					     &has[0]);
		if (npcs < 2)
			continue;
		e = tq_next(it.trace, &i, START_BLOCKS, (uint32_t)tids[k]);
		i++;
		if (e && tq_next(it.trace, &i, TQ_WAKEUPS, (uint32_t)tids[k]))
			continue;	/* woke during the recording */
		compared++;
		for (size_t f = 0; f < nfuncs && f < 8; f++)
			counts[f] += has[f];
		if (!e || !e->stack || !has_pcs_in_order(e->stack, pcs, npcs)) {
			fprintf(stderr, "thread %d's block at the start lacks frames gdb shows:\n",
				tids[k]);
			if (e && e->stack)
				print_stack(e->stack);
			failed++;
		}
	}
	cr_log_info("%d threads, %zu asleep throughout compared with gdb, %zu lacking frames",
		    ntids, compared, failed);
	cr_assert_eq(failed, 0, "%zu of %zu threads' stacks at the start lack frames gdb shows",
		     failed, compared);
	free(all);
	return compared;
}

/* An idle nginx, master and two workers, from its own configuration in a temporary
 * directory: master in sigsuspend, workers in epoll_wait under
 * ngx_process_events_and_timers, all under ngx_master_process_cycle, attached with -p, for 2 s: each process's stack at the
 * start is gdb's. Before: the workers' blocks named `syscall epoll_wait` alone. */
Test(unwind, attached_idle_nginx_has_gdbs_stacks_at_the_start)
{
	static const char *const funcs[] = { "ngx_process_events_and_timers",
					     "ngx_master_process_cycle" };
	char dir[] = "/tmp/lxtrace-test-nginx.XXXXXX", conf[256], pidlist[64], line[128];
	size_t counts[2] = { 0 }, n;
	pid_t pids[3] = { 0 };
	struct workload *w;
	FILE *f;

	if (access(GDB, X_OK) || access(NGINX, X_OK))
		cr_skip_test("needs %s and %s (scripts/deps.sh installs them)", GDB, NGINX);
	itest_require_root();
	cr_assert(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/nginx.conf", dir);
	f = fopen(conf, "w");
	cr_assert(f);
	/* Its own pid file, logs and temporary files; a port of the loopback alone. */
	fprintf(f, "daemon off;\nworker_processes 2;\npid %s/nginx.pid;\nerror_log %s/error.log;\n"
		"events { worker_connections 64; }\nhttp { access_log off; "
		"client_body_temp_path %s; proxy_temp_path %s; fastcgi_temp_path %s;\n"
		"  server { listen 127.0.0.1:%d; root %s; } }\n", dir, dir, dir, dir, dir,
		20000 + (int)(getpid() % 20000), dir);
	fclose(f);
	w = workload__start(NGINX, (const char *[]){ "-p", dir, "-c", conf, "-e", "stderr", NULL });
	cr_assert(w, "cannot start nginx: %s", strerror(errno));
	pids[0] = workload__pid(w);
	/* Its two workers, once forked and asleep in epoll_wait. */
	for (int tries = 0; tries < 1000 && !pids[2]; tries++) {
		snprintf(line, sizeof(line), "/proc/%d/task/%d/children", (int)pids[0], (int)pids[0]);
		f = fopen(line, "r");
		if (f && fscanf(f, "%d %d", &pids[1], &pids[2]) != 2)
			pids[2] = 0;
		if (f)
			fclose(f);
		usleep(10 * 1000);
	}
	cr_assert(pids[2], "nginx started no two workers");
	for (int k = 0; k < 3; k++) {
		pid_t tid;

		cr_assert(all_asleep(pids[k], 1, &tid), "nginx process %d never slept", (int)pids[k]);
	}
	snprintf(pidlist, sizeof(pidlist), "%d,%d,%d", (int)pids[0], (int)pids[1], (int)pids[2]);
	n = start_stacks_like_gdb(pids, 3, (const char *[]){ "-p", pidlist, "-d", "2", NULL },
				  false, funcs, counts, 2);
	kill(pids[0], SIGQUIT);
	workload__finish(w, 10);
	workload__free(w);
	snprintf(line, sizeof(line), "rm -rf '%s'", dir);
	(void)!system(line);
	cr_assert_eq(n, 3, "%zu of nginx's 3 processes compared", n);
	cr_assert_eq(counts[0], 2, "%zu workers in ngx_process_events_and_timers", counts[0]);
	cr_assert_eq(counts[1], 3, "%zu of 3 under ngx_master_process_cycle", counts[1]);
}

/* A Go 1.23 program blocked (gostacks block: main in Accept, so one thread in epoll_wait,
 * idle threads in futex waits) before `-p` attaches: each thread asleep throughout has, at
 * the start, every Go frame gdb shows. */
Test(unwind, attached_go_program_has_gdbs_stacks_at_the_start)
{
	static const char *const funcs[] = { "runtime.futexsleep",
					     "internal/runtime/syscall.EpollWait" };
	size_t counts[2] = { 0 }, n;
	char pidarg[32];
	struct workload *w;
	pid_t pid;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	itest_require_root();
	w = workload__start(record__build_path("tests/symfix/gostacks-go1.23"),
			    (const char *[]){ "block", NULL });
	cr_assert(w, "cannot start gostacks: %s", strerror(errno));
	pid = workload__pid(w);
	usleep(1500 * 1000);	/* its threads started and blocked */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	n = start_stacks_like_gdb(&pid, 1, (const char *[]){ "-p", pidarg, "-d", "2", NULL }, true,
				  funcs, counts, 2);
	kill(pid, SIGKILL);
	workload__finish(w, 10);
	workload__free(w);
	cr_assert_geq(n, 2, "only %zu threads asleep throughout compared", n);
	cr_assert_geq(counts[0], 1, "no thread in runtime.futexsleep compared");
	cr_assert_geq(counts[1], 1, "no thread in EpollWait compared");
}

/* The stuck pool of frameless (5 threads in read(), main in join) recorded as a cgroup's and
 * as part of the whole machine: each thread's stack at the start is gdb's. */
static void stuck_pool_like_gdb(bool cgroup)
{
	char cg[640] = "";
	struct workload *w;
	pid_t pid, tids[6];
	size_t n;
	int err;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	itest_require_root();
	w = workload__start("frameless", (const char *[]){ "pool", "5", NULL });
	cr_assert(w, "cannot start frameless: %s", strerror(errno));
	pid = workload__pid(w);
	if (cgroup) {
		err = tcgroup_make(cg, sizeof(cg));
		if (!err)
			err = tcgroup_move(cg, pid);
		cr_assert_eq(err, 0, "cannot put frameless in a cgroup: %s", strerror(-err));
	}
	cr_assert(all_asleep(pid, 6, tids), "the pool's 6 threads did not all fall asleep");
	n = start_stacks_like_gdb(&pid, 1, cgroup ? (const char *[]){ "--cgroup", cg, "-d", "2",
								     NULL } :
						    (const char *[]){ "-d", "2", NULL },
				  false, NULL, NULL, 0);
	kill(pid, SIGKILL);
	workload__finish(w, 10);
	workload__free(w);
	if (cgroup)
		tcgroup_remove(cg);
	cr_assert_eq(n, 6, "%zu of the pool's 6 threads compared", n);
}

Test(unwind, stuck_pool_of_a_cgroup_has_gdbs_stacks_at_the_start)
{
	stuck_pool_like_gdb(true);
}

Test(unwind, stuck_pool_on_the_whole_machine_has_gdbs_stacks_at_the_start)
{
	stuck_pool_like_gdb(false);
}

/* The access mode of pid's fd and what it is (readlink), or -1 when it has none. */
static int fd_mode(pid_t pid, int fd, char *link, size_t len)
{
	char path[64], info[256];
	unsigned flags;
	ssize_t n;
	int mode = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, link, len - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	f = fopen(path, "r");
	while (f && mode < 0 && fgets(info, sizeof(info), f))
		if (sscanf(info, "flags: %o", &flags) == 1)
			mode = (int)(flags & O_ACCMODE);
	if (f)
		fclose(f);
	return mode;
}

/* Wakes one reader of the pipe pid holds both ends of: one byte written to it. */
static void write_to_pool(pid_t pid)
{
	char wlink[128], rlink[128], path[64];

	for (int fd = 3; fd < 64; fd++) {
		int w;

		if (fd_mode(pid, fd, wlink, sizeof(wlink)) != O_WRONLY || strncmp(wlink, "pipe:", 5))
			continue;
		for (int r = 3; r < 64; r++) {
			if (fd_mode(pid, r, rlink, sizeof(rlink)) != O_RDONLY || strcmp(rlink, wlink))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
			w = open(path, O_WRONLY | O_CLOEXEC);
			cr_assert(w >= 0, "cannot open the pool's pipe: %s", strerror(errno));
			cr_assert_eq(write(w, "x", 1), 1);
			close(w);
			return;
		}
	}
	cr_assert_fail("the pool holds no pipe of its own");
}

/* The stuck pool of frameless, asleep in read() outside the cgroup when `lxtrace record
 * --cgroup` starts, moved into a cgroup below it once recording, then one of its workers woken: that
 * worker, first seen at its wakeup, is blocked first at the stack gdb showed for it while it
 * slept. Before: created runnable at its wakeup, with no block nor stack. */
Test(unwind, pool_moved_into_the_cgroup_has_gdbs_stacks_when_first_seen)
{
	char cg[640] = "", sub[700], *bt = NULL, pidarg[32];
	size_t compared = 0;
	pid_t pid, tids[6];
	struct workload *w;
	int err, rc;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	itest_require_root();
	w = workload__start("frameless", (const char *[]){ "pool", "5", NULL });
	cr_assert(w, "cannot start frameless: %s", strerror(errno));
	pid = workload__pid(w);
	cr_assert(all_asleep(pid, 6, tids), "the pool's 6 threads did not all fall asleep");
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	/* Before the move: gdb's attach interrupts the reads, which its records would show. */
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-ex",
					   GDB_THREADS_FRAMES, NULL }, 60, &bt, NULL);
	cr_assert(rc == 0 && bt, "gdb failed (%d)", rc);
	cr_assert(all_asleep(pid, 6, tids), "the pool's threads did not sleep again after gdb");
	err = tcgroup_make(cg, sizeof(cg));
	cr_assert_eq(err, 0, "cannot make a cgroup: %s", strerror(-err));
	/* Below the target: its cgroups are the target too. */
	snprintf(sub, sizeof(sub), "%s/below", cg);
	cr_assert(!mkdir(sub, 0755), "cannot make %s: %s", sub, strerror(errno));
	itest_start((const char *[]){ "--cgroup", cg, "-d", "30", NULL });
	err = tcgroup_move(sub, pid);
	/* The recorder looks for threads new to the target once a second. */
	usleep(3000 * 1000);
	if (!err)
		write_to_pool(pid);
	usleep(500 * 1000);
	itest_stop(SIGINT, 0);
	kill(pid, SIGKILL);
	workload__finish(w, 10);
	workload__free(w);
	tcgroup_remove(sub);
	tcgroup_remove(cg);
	cr_assert_eq(err, 0, "cannot put frameless in the cgroup: %s", strerror(-err));
	itest_load();
	for (size_t k = 0; k < 6; k++) {
		const struct gt_event *e;
		uint64_t pcs[128];
		size_t i = 0, npcs;
		bool has = false;

		if (!tq_next(it.trace, &i, ~0ULL, (uint32_t)tids[k]))
			continue;	/* not woken: never seen */
		npcs = gdb_pcs_until(bt, tids[k], pcs, 128, c_top, "", &has);
		i = 0;
		e = tq_next(it.trace, &i, START_BLOCKS | TQ_WAKEUPS, (uint32_t)tids[k]);
		cr_assert(npcs >= 2, "gdb shows %zu frames for thread %d", npcs, (int)tids[k]);
		if (e && e->stack && !has_pcs_in_order(e->stack, pcs, npcs))
			print_stack(e->stack);
		cr_assert(e && !(TQ_BIT(e->type) & TQ_WAKEUPS) && e->stack &&
			  has_pcs_in_order(e->stack, pcs, npcs),
			  "thread %d, first seen at its wakeup, is not blocked first at gdb's stack",
			  (int)tids[k]);
		compared++;
	}
	free(bt);
	cr_log_info("%zu threads first seen at their wakeup compared with gdb; the recorder:\n%s",
		    compared, recorder__stderr(it.rec));
	cr_assert_geq(compared, 1, "no thread of the pool in the trace");
}

/* Four processes spinning in frameless's leaf (main -> spin_outer -> spin_middle ->
 * spin_leaf), all pinned to CPU 0, so that at any moment three wait for it: attached with -p,
 * those waiting when the recording starts are preempted in its init phase (on the
 * housekeeping P, where lxtrace's own goroutine starts first) at the stack they wait at. At
 * least two of the four: the one on the CPU has none, and one whose switch count moved while
 * it was read is left out. Before: each was created runnable at its program's frame alone. */
Test(unwind, threads_waiting_for_a_cpu_at_the_start_have_their_stacks)
{
	static const char *const chain[] = { "spin_middle", "spin_outer", "main" };
	struct workload *w[4];
	char pidlist[64] = "";
	size_t found = 0, i = 0;
	const struct gt_event *first;
	int64_t hk;

	itest_require_root();
	for (int k = 0; k < 4; k++) {
		w[k] = workload__start("/usr/bin/taskset",
				       (const char *[]){ "-c", "0", record__workload_path("frameless"),
							 "leaf", "30000", NULL });
		cr_assert(w[k], "cannot start frameless: %s", strerror(errno));
		snprintf(pidlist + strlen(pidlist), sizeof(pidlist) - strlen(pidlist), "%s%d",
			 k ? "," : "", (int)workload__pid(w[k]));
	}
	usleep(500 * 1000);
	itest_start((const char *[]){ "-p", pidlist, "-d", "1", NULL });
	itest_stop(0, 0);
	for (int k = 0; k < 4; k++) {
		kill(workload__pid(w[k]), SIGKILL);
		workload__finish(w[k], 10);
	}
	itest_load();
	first = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_START), 0);
	cr_assert(first, "no GoStart in the file");
	hk = first->p;
	for (int k = 0; k < 4; k++) {
		uint32_t tid = (uint32_t)workload__pid(w[k]);
		const struct gt_event *run, *next;
		bool whole = true;

		i = 0;
		run = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_START), tid);
		i++;
		next = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_START) | TQ_BIT(GT_EV_GO_PREEMPT) |
				   START_BLOCKS, tid);
		workload__free(w[k]);
		if (!run || run->p != hk || !next || next->type != GT_EV_GO_PREEMPT)
			continue;
		for (size_t f = 0; f < 3; f++)
			whole &= next->stack && tq_stack_has(next->stack, chain[f]);
		if (!whole && next->stack)
			print_stack(next->stack);
		cr_assert(whole, "thread %u preempted at the start without spin_middle <- spin_outer "
			  "<- main", tid);
		found++;
	}
	cr_log_info("%zu of 4 spinning threads waiting for a CPU at the start", found);
	cr_assert_geq(found, 2, "only %zu of 4 threads sharing a CPU found waiting for it", found);
}

/* ---- samples of Debian's programs reach main ---- */

/* main or _start by name, or, in a stripped program, the frame libc calls main from (the
 * frame below it is main). */
static bool reaches_main(const struct gt_stack *s)
{
	return frame_from(s, 0, "main") >= 0 || frame_from(s, 0, "_start") >= 0 ||
	       frame_from(s, 0, "__libc_start_call_main") > 0;
}

/* Samples of the process pid whose leaf is a user frame, and how many reach main/_start. */
static size_t user_samples(pid_t pid, size_t *ok)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	char ident[64];
	size_t n = 0, shown = 0;

	snprintf(ident, sizeof(ident), "(pid %d)", (int)pid);
	*ok = 0;
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *proc = tq_process(ev[i].stack);

		if (ev[i].type != GT_EV_CPU_SAMPLE || !proc || !strstr(proc, ident))
			continue;
		n++;
		if (reaches_main(ev[i].stack))
			(*ok)++;
		else if (shown++ < 3)
			print_stack(ev[i].stack);
	}
	return n;
}

static void samples_reach_main(const char *const *argv, const char *what)
{
	struct workload *w;
	size_t n, ok;
	pid_t pid;

	/* 999 Hz: enough samples even when the machine is shared. */
	itest_start((const char *[]){ "-F", "999", NULL });
	w = workload__start(argv[0], argv + 1);
	cr_assert(w, "cannot start %s: %s", argv[0], strerror(errno));
	pid = workload__pid(w);
	cr_assert_eq(workload__finish(w, 120), 0);
	cr_assert_eq(workload__status(w), 0, "%s exited with %d", what, workload__status(w));
	workload__free(w);
	itest_stop(SIGINT, 0);
	itest_load();
	n = user_samples(pid, &ok);
	cr_log_info("%s: %zu samples, %zu reach main or _start", what, n, ok);
	cr_assert_geq(n, 300, "only %zu samples of %s", n, what);
	cr_assert_geq(ok * 100, n * 80, "only %zu of %zu samples of %s reach main or _start", ok, n,
		      what);
}

Test(unwind, python_loop_samples_reach_main)
{
	if (access(PYTHON, X_OK))
		cr_skip_test("needs %s", PYTHON);
	samples_reach_main((const char *[]){ PYTHON, "-c",
		"import time\nt = time.time()\nwhile time.time() - t < 3:\n    sum(range(1000))\n",
		NULL }, "python3");
}

Test(unwind, sha256sum_samples_reach_main)
{
	char path[64];
	int fd;

	cr_assert_eq(record__tmpfile(path, sizeof(path), ".data"), 0);
	/* A sparse file: its zeros come from no disk. */
	fd = open(path, O_WRONLY);
	cr_assert(fd >= 0 && !ftruncate(fd, 1200ll << 20), "cannot size %s", path);
	close(fd);
	samples_reach_main((const char *[]){ "/usr/bin/sha256sum", path, NULL }, "sha256sum");
	unlink(path);
}

/* Whether s, a sample inside a throw, is whole: ... <- __cxa_throw <- thrower <- catcher <-
 * main, in that order (thrower's throwing path is its .cold clone). */
static bool throw_is_whole(const struct gt_stack *s)
{
	int t = frame_from(s, 0, "__cxa_throw");

	return t >= 0 && (size_t)t + 3 < s->n && !strncmp(s->frames[t + 1].func, "thrower(int)", 12) &&
	       !strcmp(s->frames[t + 2].func, "catcher(int)") && !strcmp(s->frames[t + 3].func, "main");
}

/* Samples inside C++ exceptions (libgcc_s's unwinder, libstdc++'s __cxa_throw, a .cold clone,
 * no frame pointers anywhere): whole, or marked. The few taken while _Unwind_RaiseException
 * installs the handler's context (its stack pointer already the catcher's) end [truncated].
 * Before: `_Unwind_RaiseException <- catcher(int) <- thrower(int) [clone .cold]`, unmarked. */
Test(unwind, cxx_throw_samples_are_whole_or_marked)
{
	const struct gt_event *ev;
	size_t n = 0, whole = 0, marked = 0;
	char ident[64];
	struct workload *w;
	pid_t pid;

	itest_start((const char *[]){ "-F", "999", NULL });
	w = workload__start(record__build_path("tests/symfix/throw"), (const char *[]){ "400000", NULL });
	cr_assert(w, "cannot start tests/symfix/throw: %s", strerror(errno));
	pid = workload__pid(w);
	cr_assert_eq(workload__finish(w, 120), 0);
	workload__free(w);
	itest_stop(SIGINT, 0);
	itest_load();
	snprintf(ident, sizeof(ident), "(pid %d)", (int)pid);
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_stack *s = ev[i].stack;
		const char *proc = tq_process(s);

		if (ev[i].type != GT_EV_CPU_SAMPLE || !proc || !strstr(proc, ident) ||
		    (frame_from(s, 0, "_Unwind_RaiseException") < 0 &&
		     frame_from(s, 0, "__cxa_throw") < 0))
			continue;
		n++;
		if (throw_is_whole(s))
			whole++;
		else if (frame_from(s, 0, "[truncated]") >= 0)
			marked++;
		else
			print_stack(s);
	}
	cr_log_info("C++ throws: %zu samples inside them, %zu whole, %zu marked truncated", n,
		    whole, marked);
	cr_assert_geq(n, 200, "only %zu samples inside a throw", n);
	cr_assert_eq(whole + marked, n, "%zu samples inside a throw are wrong and unmarked",
		     n - whole - marked);
	cr_assert_geq(whole * 100, n * 95, "only %zu of %zu samples inside a throw are whole", whole,
		      n);
}

/* ---- short-lived processes: every frame has its module, libc and ld.so frames a name ---- */

/* What started each program a shell script runs: the exec's creation event (its creator's
 * stack) reaches the shell's main, through the function of the script that ran it, although
 * the kernel replaced the address space that stack was in before the exec was done
 * (bpf/lxtrace.bpf.c, exec_ustacks). Before: `syscall execve <- execve <- [truncated]`. */
Test(unwind, exec_from_a_shell_function_has_the_shells_stack)
{
	static const char script[] = "f() { /bin/true; }; for i in $(seq 60); do f; sleep 0.01; done";
	const struct gt_event *ev;
	size_t execs = 0, deep = 0, first = 0;

	record_settled(NULL, "/bin/sh", (const char *[]){ "-c", script, NULL });
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_stack *made = tq_create_stack(it.trace, &ev[i]);
		const struct gt_stack *s = ev[i].stack;

		if (!made || strcmp(tq_outermost(made), "true") || !tq_stack_has(s, "syscall execve"))
			continue;
		execs++;
		if (tq_stack_has(s, "execve") && reaches_main(s))
			deep++;
		else if (!deep)
			first++;
		else
			print_stack(s);
	}
	cr_log_info("%zu execs of true: %zu reach the shell's main, %zu before the first that did",
		    execs, deep, first);
	cr_assert_eq(execs, 60, "%zu execs of true, not 60", execs);
	cr_assert_eq(deep + first, execs, "%zu exec stacks stop short", execs - deep - first);
	cr_assert_leq(first, 3, "%zu exec stacks before the first that reached main", first);
}

/* Whether the process frame proc is one of the first n of procs; adds it if not and there is
 * room. */
static bool seen_process(const char **procs, size_t *n, size_t max, const char *proc)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(procs[i], proc))
			return true;
	if (*n < max)
		procs[(*n)++] = proc;
	return false;
}

/* Whether sleep stack s has no user frame at all: "[truncated]" right after the syscall. */
static bool cut_at_the_syscall(const struct gt_stack *s)
{
	int at = frame_from(s, 0, "syscall clock_nanosleep");

	return at >= 0 && (size_t)at + 1 < s->n && !strncmp(s->frames[at + 1].func, "[truncated", 10);
}

/* Processes whose maps were asked of /proc and gone before the answer, as the recorder's
 * summary counts them ("maps read: ... (N processes gone)"); 0 when it does not say. */
static long long maps_gone(void)
{
	const char *p = strstr(recorder__stderr(it.rec), "reads of /proc/PID/maps (");
	long long v;

	return p && sscanf(p + strlen("reads of /proc/PID/maps ("), "%lld", &v) == 1 ? v : 0;
}

/* min_pct: of the sleeps after the first that reached main, the share that must too. */
static void short_lived_processes(size_t min_pct)
{
	const struct gt_event *ev;
	const char *procs[256];
	size_t frames = 0, anonymous = 0, unnamed = 0, stacks = 0, nprocs = 0, sleeps = 0, deep = 0;
	size_t first = 0;	/* sleeps before the first that reached main */
	size_t bare = 0;	/* sleeps after it without a user frame */
	char dir[] = "/tmp/lxtrace-sleep-XXXXXX", script[256], copy[64];

	/* sleep blocks once in clock_nanosleep through libc: each process has a stack. A copy of
	 * it named lxsleep, so that the machine's other sleeps are not counted. The first ones
	 * may end early: its rows are compiled when it is first mapped, and may come after those
	 * processes have blocked (docs/stacks.md, "First sight"); from then on every one reaches
	 * main (no failure is kept). */
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(copy, sizeof(copy), "%s/lxsleep", dir);
	snprintf(script, sizeof(script), "cp /usr/bin/sleep %s && for i in $(seq 200); do %s 0.001; "
		 "done", copy, copy);
	itest_start((const char *[]){ "-v", NULL });	/* the summary's "maps read:" */
	cr_assert_eq(run_capture((const char *[]){ "/bin/sh", "-c", script, NULL }, 120, NULL, NULL),
		     0);
	itest_stop(SIGINT, 0);
	unlink(copy);
	rmdir(dir);
	itest_load();
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_stack *s = ev[i].stack;
		const char *proc = tq_process(s);

		if (!proc || strncmp(proc, "lxsleep (pid", 12))
			continue;
		stacks++;
		seen_process(procs, &nprocs, sizeof(procs) / sizeof(procs[0]), proc);
		if (tq_stack_has(s, "syscall clock_nanosleep")) {
			sleeps++;
			if (reaches_main(s))
				deep++;
			else if (!deep)
				first++;
			else if (cut_at_the_syscall(s))
				bare++;
			else
				print_stack(s);
		}
		for (size_t j = 0; j < s->n; j++) {
			const struct gt_rframe *f = &s->frames[j];

			frames++;
			/* "[unknown] 0xADDR": in no mapping known; "[unknown] FILE+0xOFF": in a
			 * file without a symbol there. */
			if (!strncmp(f->func, "[unknown] 0x", 12)) {
				anonymous++;
				print_stack(s);
			} else if (!strncmp(f->func, "[unknown]", 9) &&
				   (strstr(f->file, "/libc.so") || strstr(f->file, "/ld-linux"))) {
				unnamed++;
				print_stack(s);
			}
		}
	}
	cr_log_info("200 lxsleep runs: %zu processes with stacks, %zu stacks, %zu frames; %zu of %zu "
		    "sleeps reach main, %zu before the first that did, %zu after it without a user "
		    "frame; %lld processes of the machine gone before their maps were read", nprocs,
		    stacks, frames, deep, sleeps, first, bare, maps_gone());
	cr_assert_eq(nprocs, 200, "%zu lxsleep processes with a stack, not 200", nprocs);
	cr_assert_geq(sleeps, 200, "only %zu stacks in clock_nanosleep", sleeps);
	/* Before 6.7 a process that exits before its maps are read from /proc leaves nothing to
	 * walk its stacks with (docs/stacks.md): each such sleep is cut at the syscall, marked,
	 * and its process counted gone. With the VMA iterator nothing is asked of /proc. */
	cr_assert_leq((long long)bare, maps_gone(), "%zu sleeps have no user frame, and only %lld "
		      "processes were gone before their maps were read", bare, maps_gone());
	cr_assert_geq(deep * 100, (sleeps - first - bare) * min_pct, "only %zu of the %zu sleeps "
		      "after the first that reached main reach it", deep, sleeps - first - bare);
	cr_assert_eq(anonymous, 0, "%zu frames of short-lived processes have no module", anonymous);
	cr_assert_eq(unnamed, 0, "%zu libc/ld.so frames are unnamed", unnamed);
}

Test(unwind, short_lived_processes_fully_named)
{
	short_lived_processes(99);
}

/* Before 6.7 each exec's mappings are asked of user space, and answered from /proc while the
 * process runs: a sleep that comes before the answer is finished by the daemon from a copy of
 * its stack, with the mappings the answer gave (before that: 9-23% of them cut here), the
 * records after the ask held back until the answer is in (before that, beside CPU hogs: 8 of
 * 201 cut at the syscall, the answer handed on after the process's stacks). */
Test(unwind, short_lived_processes_fully_named_with_tables_from_proc)
{
	itest_mask("vma_iter");
	short_lived_processes(97);
	itest_expect_without("VMA iterator");
}

/* ---- every user stack is whole or marked ---- */

/* The outermost frames a whole user stack can end in: a program's entry (_start, ld.so's, Go's
 * _rt0_amd64_linux and _rt0_amd64, which it jumps to: a sample there, before rt0_go is called,
 * has no caller), a thread's (clone3, clone), Go's top frames (user/stacks/callstacks.c,
 * go_top_frame). */
static bool outermost_frame(const char *func)
{
	static const char *const ends[] = { "_start", "_dl_start_user", "_rt0_amd64_linux",
					    "_rt0_amd64", "clone3",
					    "clone", "__clone",
					    "runtime.goexit", "runtime.mstart", "runtime.mcall",
					    "runtime.morestack", "runtime.rt0_go" };

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t len = strlen(ends[i]);

		if (!strncmp(func, ends[i], len) && (!func[len] || !strcmp(func + len, ".abi0")))
			return true;
	}
	return false;
}

/* Whether f, "[unknown] NAME+0xOFF" of file f->file, is that ELF file's entry point: a stripped
 * program's _start, where its first instruction faulted the page in. */
static bool at_elf_entry(const struct gt_rframe *f)
{
	const char *plus = strrchr(f->func, '+');
	unsigned long long off;
	Elf64_Ehdr eh;
	bool at = false;
	int fd;

	if (!plus || sscanf(plus, "+0x%llx", &off) != 1)
		return false;
	fd = open(f->file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, &eh, sizeof(eh)) == sizeof(eh))
		at = eh.e_entry == off;
	if (fd >= 0)
		close(fd);
	return at;
}

/* Whether user stack s is whole: it ends in an outermost frame, or in a stripped program's
 * entry (a nameless frame of it below libc's __libc_start_main, or the entry point itself). */
static bool user_stack_whole(const struct gt_stack *s, size_t last)
{
	const struct gt_rframe *f = &s->frames[last];

	return outermost_frame(f->func) ||
	       (!strncmp(f->func, "[unknown] ", 10) &&
		((last > 0 && !strcmp(s->frames[last - 1].func, "__libc_start_main")) ||
		 at_elf_entry(f)));
}

/* Debian's programs and the workloads, new to the recorder, blocking and sampled at 199 Hz on a
 * recorded machine: every stack with user frames ends in an outermost frame or is marked
 * [truncated] (or, too deep for the viewers, `[trimmed N frames]`; docs/stacks.md). Issue 20:
 * waits in a thread's first ~90 ms, and `_int_free` alone, ended short with no mark. */
Test(unwind, every_user_stack_is_whole_or_marked)
{
	static const char *const progs[] = { "python3", "perl", "sh", "ls", "sleep", "sha256sum",
					     "tgroup", "frameless", "spin-go1.19" };
	static const char script[] = "for i in 1 2 3; do ls / >/dev/null; sleep 0.05; done; "
				     "perl -e 'select(undef, undef, undef, 0.2)'; "
				     "python3 -c 'import time; time.sleep(0.2); sum(range(10**6))'; "
				     "sha256sum /usr/bin/perl >/dev/null";
	const struct gt_event *ev;
	size_t n = 0, whole = 0, marked = 0, shown = 0;
	char first[512] = "";

	itest_start((const char *[]){ "-F", "199", NULL });
	cr_assert_eq(run_capture((const char *[]){ "/bin/sh", "-c", script, NULL }, 60, NULL, NULL),
		     0);
	itest_run("tgroup", (const char *[]){ "2", "2", NULL }, 60);
	itest_run("frameless", (const char *[]){ "read", "100", NULL }, 60);
	run_capture((const char *[]){ record__build_path("tests/symfix/spin-go1.19"), NULL }, 1,
		    NULL, NULL);
	itest_stop(SIGINT, 0);
	itest_load();
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_stack *s = ev[i].stack;
		const char *proc = tq_process(s);
		const struct gt_rframe *f;
		bool ours = false;
		size_t last;

		for (size_t k = 0; proc && k < sizeof(progs) / sizeof(progs[0]) && !ours; k++)
			ours = !strncmp(proc, progs[k], strlen(progs[k])) &&
			       !strncmp(proc + strlen(progs[k]), " (pid ", 6);
		if (!ours || s->n < 3)
			continue;
		/* The frame above the identity (process, program): the outermost user frame,
		 * or the mark after it; a kernel or syscall frame there: no user frames. */
		last = s->n - 3;
		f = &s->frames[last];
		if (!strcmp(f->file, "kernel") || f->pc >= 0xffff800000000000ull)
			continue;
		n++;
		if (!strncmp(f->func, "[truncated", 10) || !strncmp(f->func, "[trimmed ", 9))
			marked++;
		else if (user_stack_whole(s, last))
			whole++;
		else {
			if (!shown)
				snprintf(first, sizeof(first), "%s <- %s <- %s, of %s",
					 last > 1 ? s->frames[last - 2].func : "",
					 last > 0 ? s->frames[last - 1].func : "", f->func, proc);
			if (shown++ < 5)
				print_stack(s);
		}
	}
	cr_log_info("%zu user stacks of the programs: %zu whole, %zu marked [truncated], %zu short "
		    "and unmarked", n, whole, marked, n - whole - marked);
	cr_assert_geq(n, 300, "only %zu user stacks of the programs", n);
	cr_assert_eq(whole + marked, n, "%zu user stacks end short without a mark; the first ends "
		     "%s", n - whole - marked, first);
}

/* ---- code mapped anew at an address that held other code ---- */

/* Samples in the page mapchurn spins in, mapped where spin_a's page was unmapped: each must
 * name spin_b, the code mapped there now, and reach main through it (the table read its range
 * again, not the old mapping's rows). Counted from the first that does: the binary's rows load
 * a few ms after its exec (docs/stacks.md, "First sight"), and its spinning starts at once. */
static void code_moved(void)
{
	const struct gt_event *e;
	size_t i = 0, n = 0, ok = 0, before = 0, shown = 0;
	uint64_t reused;
	pid_t tid;

	record_settled((const char *[]){ "-F", "999", NULL }, "mapchurn",
		       (const char *[]){ "64", "3000", NULL });
	tid = itest_tid("churn");
	reused = (uint64_t)itest_stat("reused");
	while ((e = tq_next(it.trace, &i, TQ_BIT(GT_EV_CPU_SAMPLE), tid))) {
		const struct gt_stack *s = e->stack;
		bool good;

		i++;
		if (!s || !s->n || s->frames[0].pc < reused || s->frames[0].pc >= reused + 4096)
			continue;
		good = !strcmp(s->frames[0].func, "spin_b") && frame_from(s, 1, "main") > 0;
		if (!good && !ok) {
			before++;
			continue;
		}
		n++;
		if (good)
			ok++;
		else if (shown++ < 3)
			print_stack(s);
	}
	cr_log_info("moved code: %zu samples in the reused page, %zu name spin_b and reach main, "
		    "after %zu before the first that did", n, ok, before);
	cr_assert_geq(n, 200, "only %zu samples in the reused page in 3 s of CPU at 999 Hz", n);
	cr_assert_leq(before, 100, "%zu samples before the first that names spin_b", before);
	cr_assert_geq(ok * 100, n * 95, "only %zu of %zu samples in the reused page name spin_b "
		      "and reach main", ok, n);
}

Test(unwind, code_moved_to_new_mappings_resolves_where_it_runs_now)
{
	code_moved();
}

/* The same where the kernel does not count its write sections (6.7-6.12 but Debian's 6.12):
 * the table is rebuilt from all the VMAs at each change. */
Test(unwind, code_moved_to_new_mappings_resolves_where_it_runs_now_rebuilt_whole)
{
	itest_mask("mm_seq");
	code_moved();
	itest_expect_without("mm_lock_seq seqcount");
}

/* The KiB of the recorder's mappings of BPF maps whose size is a whole number of MiB: the rows
 * map's (the rings' mappings have a page or two more than their data twice over). */
static long rows_mapped_kb(pid_t pid)
{
	char path[64], line[512];
	long size = 0, kb = 0;
	bool bpf = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ')) {
			bpf = strstr(line, "anon_inode:bpf-map") != NULL;
			size = (long)((hi - lo) >> 10);
		} else if (bpf && size >= 1024 && size % 1024 == 0 && !strncmp(line, "Rss:", 4)) {
			kb += size;
		}
	}
	fclose(f);
	return kb;
}

/* The rows map is 16 MiB of kernel memory, and the kernel puts every page of a BPF array in a
 * mapping of it at once: mapped whole, all of it counted in the recorder's RSS from the start.
 * The recorder maps it in 1 MiB steps as rows are appended (docs/stacks.md, "Rows"): a
 * recording of one program holds what that program's rows take. */
Test(unwind, the_rows_map_is_mapped_as_far_as_rows_fill_it)
{
	unsigned long long files = 0, rows = 0;
	const char *line;
	long kb;

	itest_start((const char *[]){ "-v", "-b", "2", "--", "/bin/sleep", "3", NULL });
	/* sleep blocks: its walk asks for libc's rows. */
	usleep(1500 * 1000);
	kb = rows_mapped_kb(recorder__pid(it.rec));
	itest_stop(0, 0);
	line = strstr(recorder__stderr(it.rec), "unwind rows:");
	cr_assert(line && sscanf(line, "unwind rows: %llu binaries (%llu rows)", &files, &rows) == 2,
		  "no rows in the summary:\n%s", recorder__stderr(it.rec));
	cr_log_info("rows map: %ld KiB mapped for %llu rows of %llu binaries", kb, rows, files);
	cr_expect_gt(kb, 0, "no rows mapped, %llu rows", rows);
	cr_expect_leq(kb, (long)((rows * 8 + (1 << 20) - 1) >> 20 << 10) + 1024,
		      "%ld KiB of the rows map mapped for %llu rows", kb, rows);
}
