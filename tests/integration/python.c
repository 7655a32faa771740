/* python.c - Python frames: a CPython program's samples and blocking stacks name its Python
 * functions (module.qualname, file and line) where its evaluation loop runs them, for
 * Debian's own python3 (3.11) and pyenv's 3.10, 3.12 and 3.13 where installed; a program that
 * forges its own frame, or the offsets 3.13 publishes, gets native frames and a count. The
 * workload is tests/workloads/pyspin.py. */
#include <limits.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"
#include "bpf/python.h"
#include "tests/lib/busy.h"

static struct workload *client;

static void python_fini(void)
{
	workload__free(client);
	client = NULL;
	busy__stop();
	unsetenv("LXTRACE_CACHE_DIR");
	itest_fini();
}

TestSuite(python, .fini = python_fini, .timeout = 240);

#define DEBIAN_PY "/usr/bin/python3"
#define PYENV_PY(v) "/root/.pyenv/versions/" v "/bin/python3"

/* The index of the first frame of s whose func is func, or -1. */
static int frame_at(const struct gt_stack *s, const char *func)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strcmp(s->frames[i].func, func))
			return (int)i;
	return -1;
}

static void dump_stack(const struct gt_stack *s)
{
	fprintf(stderr, "--- stack:\n");
	for (size_t j = 0; s && j < s->n; j++)
		fprintf(stderr, "    %s %s:%llu\n", s->frames[j].func, s->frames[j].file,
			(unsigned long long)s->frames[j].line);
}

/* Runs pyspin.py MODE SECS under python, recorded with -p (-F 999): the script waits for the
 * recorder to start. */
static void record_py(const char *python, const char *mode, const char *secs,
		      const char *format)
{
	static char script[PATH_MAX], pid[16];
	struct stat sb;

	if (stat(python, &sb)) {
		cr_skip_test("%s is not installed", python);
		return;
	}
	snprintf(script, sizeof(script), "%s", record__workload_path("pyspin.py"));
	it.wl = workload__start(python, (const char *[]){ script, mode, secs, "wait", NULL });
	cr_assert(it.wl, "cannot start %s: %s", python, strerror(errno));
	snprintf(pid, sizeof(pid), "%d", (int)workload__pid(it.wl));
	itest_start((const char *[]){ "-F", "999", "-p", pid, "--format", format, NULL });
	cr_assert_eq(workload__send(it.wl, "go\n"), 0);
	cr_assert_eq(workload__finish(it.wl, 120), 0);
	cr_assert_eq(workload__status(it.wl), 0, "%s exited with %d", python,
		     workload__status(it.wl));
	itest_stop(0, 0);
	itest_load();
}

static long long inner_line, middle_line, outer_line;

/* Whether frame i of s is a Python frame: in a .py file. */
static bool py_frame(const struct gt_stack *s, size_t i)
{
	size_t len = strlen(s->frames[i].file);

	return len > 3 && !strcmp(s->frames[i].file + len - 3, ".py");
}

/* The index of the first Python frame of s after frame i (rootward), or s->n. */
static size_t next_py(const struct gt_stack *s, size_t i)
{
	while (++i < s->n && !py_frame(s, i))
		;
	return i;
}

/* lx_hidden_inner on its loop's line <- lx_hidden_middle at its call <- lx_hidden_outer at its
 * call <- spin, each in pyspin.py: the Python frames in that order, whatever native frames lie
 * between (3.10 calls each through C). */
static bool spin_chain(const struct gt_stack *s)
{
	int i = frame_at(s, "pyspin.lx_hidden_inner");
	size_t m, o, sp;

	if (i < 0 || !strstr(s->frames[i].file, "pyspin.py") ||
	    (long long)s->frames[i].line < inner_line - 1 ||
	    (long long)s->frames[i].line > inner_line + 1)
		return false;
	m = next_py(s, (size_t)i);
	o = m < s->n ? next_py(s, m) : s->n;
	sp = o < s->n ? next_py(s, o) : s->n;
	return sp < s->n && !strcmp(s->frames[m].func, "pyspin.lx_hidden_middle") &&
	       (long long)s->frames[m].line == middle_line &&
	       !strcmp(s->frames[o].func, "pyspin.lx_hidden_outer") &&
	       (long long)s->frames[o].line == outer_line &&
	       !strcmp(s->frames[sp].func, "pyspin.spin");
}

/* Of the spinning thread's samples from its first in pyspin.spin on (before it the interpreter
 * starts, before lxtrace has seen the thread), at least 95% name the chain. */
static void spin_named(const char *python, const char *format)
{
	const struct gt_event *ev;
	size_t n = 0, chained = 0, i = 0;
	bool started = false;
	pid_t tid;

	record_py(python, "spin", "3", format);
	inner_line = itest_stat("inner_line");
	middle_line = itest_stat("middle_line");
	outer_line = itest_stat("outer_line");
	tid = itest_tid("spin");
	while ((ev = tq_next(it.trace, &i, TQ_BIT(GT_EV_CPU_SAMPLE), tid))) {
		i++;
		started = started || frame_at(ev->stack, "pyspin.spin") >= 0;
		if (!started)
			continue;
		n++;
		if (spin_chain(ev->stack))
			chained++;
		else if (n - chained <= 3)
			dump_stack(ev->stack);
	}
	cr_log_info("%s: %zu samples of the spin, %zu name the chain", python, n, chained);
	if (n < 100 || chained * 100 < n * 95)
		fprintf(stderr, "recorder:\n%s", recorder__stderr(it.rec));
	cr_assert_geq(n, 100, "%zu samples of a 3 s spin at 999 Hz", n);
	cr_assert_geq(chained * 100, n * 95, "only %zu of %zu samples name lx_hidden_inner:%lld <- "
		      "lx_hidden_middle:%lld <- lx_hidden_outer:%lld <- spin", chained, n,
		      inner_line, middle_line, outer_line);
}

Test(python, debian_311_samples_name_the_chain)
{
	spin_named(DEBIAN_PY, "go1.19");
}

Test(python, pyenv_310_samples_name_the_chain)
{
	spin_named(PYENV_PY("3.10.13"), "go1.19");
}


Test(python, pyenv_312_samples_name_the_chain)
{
	spin_named(PYENV_PY("3.12.1"), "go1.19");
}

Test(python, pyenv_313_samples_name_the_chain)
{
	spin_named(PYENV_PY("3.13.0"), "go1.19");
}

/* The events that carry a thread's stack where it blocks. */
#define BLOCKS (TQ_BIT(GT_EV_GO_SLEEP) | TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SEND) | \
		TQ_BIT(GT_EV_GO_BLOCK_RECV) | TQ_BIT(GT_EV_GO_BLOCK_SELECT) |                 \
		TQ_BIT(GT_EV_GO_BLOCK_SYNC) | TQ_BIT(GT_EV_GO_BLOCK_COND) |                   \
		TQ_BIT(GT_EV_GO_BLOCK_NET) | TQ_BIT(GT_EV_GO_SYSCALL))

/* Each thread's blocking event (its switch out) names func at line, under the native
 * frames of the wait (the syscall, libc). */
static void blocked_in(const char *role, const char *func, const char *line_key)
{
	pid_t tid = itest_tid(role);
	long long line = itest_stat(line_key);
	const struct gt_event *e;
	size_t i = 0, n = 0, named = 0;

	while ((e = tq_next(it.trace, &i, BLOCKS, tid))) {
		int k = frame_at(e->stack, func);

		i++;
		n++;
		if (k >= 0 && (long long)e->stack->frames[k].line == line &&
		    strstr(e->stack->frames[k].file, "pyspin.py"))
			named++;
	}
	if (!named) {
		i = 0;
		if ((e = tq_next(it.trace, &i, BLOCKS, tid)))
			dump_stack(e->stack);
	}
	cr_assert_gt(named, 0, "%s: none of its %zu blocks names %s:%lld", role, n, func, line);
}

static void blocking_named(const char *python)
{
	record_py(python, "block", "1.5", "go1.19");
	blocked_in("sleeper", "pyspin.lx_sleeper", "sleep_line");
	blocked_in("receiver", "pyspin.lx_receiver", "recv_line");
	blocked_in("locker", "pyspin.lx_locker", "lock_line");
}

Test(python, debian_311_blocking_stacks_name_the_function)
{
	blocking_named(DEBIAN_PY);
}

Test(python, pyenv_313_blocking_stacks_name_the_function)
{
	blocking_named(PYENV_PY("3.13.0"));
}

Test(python, pyenv_310_blocking_stacks_name_the_function)
{
	blocking_named(PYENV_PY("3.10.13"));
}

/* The count the summary prints just before what, or -1: "..., N what". */
static long long summary_count(const char *what)
{
	const char *err = recorder__stderr(it.rec), *p = strstr(err, what);

	while (p && p > err && p[-1] == ' ')
		p--;
	while (p && p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? atoll(p) : -1;
}

/* A process that points its own frame's code at an int: native frames, counted, no crash. */
static void forged_code_native(const char *python)
{
	const struct gt_event *ev;
	size_t i = 0, n = 0, named = 0;
	long long unnamed;
	pid_t tid;

	record_py(python, "forge", "2", "go1.19");
	tid = itest_tid("forge");
	while ((ev = tq_next(it.trace, &i, TQ_BIT(GT_EV_CPU_SAMPLE), tid))) {
		i++;
		n++;
		named += frame_at(ev->stack, "pyspin.lx_forged") >= 0;
	}
	unnamed = summary_count("with a frame not named");
	cr_assert_gt(n, 50, "%zu samples of the forging thread", n);
	/* Before the forgery (the function's first lines) its frames are real. */
	cr_assert_leq(named * 10, n, "%zu of %zu samples name Python frames of a forged chain",
		      named, n);
	cr_assert_gt(unnamed, 0, "the summary does not count the stacks left native:\n%s",
		     recorder__stderr(it.rec));
}

Test(python, forged_code_pointer_gives_native_frames_and_a_count)
{
	forged_code_native(DEBIAN_PY);
}

Test(python, pyenv_310_forged_code_pointer_gives_native_frames_and_a_count)
{
	forged_code_native(PYENV_PY("3.10.13"));
}

/* 3.13 publishes its offsets (_Py_DebugOffsets): a process whose block says other than
 * lxtrace's table is left native, counted, though the table is right for it; the same
 * recording of a true block is counted as agreeing (none refused). */
Test(python, pyenv_313_own_offsets_that_disagree_leave_it_native)
{
	const struct gt_event *ev;
	size_t i = 0, n = 0, named = 0;
	pid_t tid;

	record_py(PYENV_PY("3.13.0"), "offsets", "2", "go1.19");
	tid = itest_tid("spin");
	while ((ev = tq_next(it.trace, &i, TQ_BIT(GT_EV_CPU_SAMPLE), tid))) {
		i++;
		n++;
		named += frame_at(ev->stack, "pyspin.lx_hidden_inner") >= 0;
	}
	cr_assert_gt(n, 50, "%zu samples of the spinning thread", n);
	cr_assert_eq(named, 0, "%zu of %zu samples name Python frames read by a table the "
		     "process's own offsets contradict", named, n);
	cr_assert_eq(summary_count("whose own offsets are not lxtrace's"), 1,
		     "the summary does not count the process refused:\n%s",
		     recorder__stderr(it.rec));
}

/* CPython's own view of a parked thread, as pyspin.py view prints it: "view TID FUNC:LINE ...",
 * leaf first. */
struct py_view {
	pid_t tid;
	char chain[2048];	/* " FUNC:LINE" each */
};

/* The views the workload printed, at most max. */
static size_t read_views(struct py_view *v, size_t max)
{
	const char *out = workload__stdout(it.wl);
	size_t n = 0;

	for (const char *l = out; l && *l && n < max; l = strchr(l, '\n')) {
		int tid, skip = 0;
		size_t len;

		l += *l == '\n';
		if (sscanf(l, "view %d%n", &tid, &skip) != 1)
			continue;
		len = strcspn(l + skip, "\n");
		v[n].tid = tid;
		snprintf(v[n].chain, sizeof(v[n].chain), "%.*s", (int)len, l + skip);
		n++;
	}
	return n;
}

/* The Python frames of s, leaf first, as the view prints them: " FUNC:LINE" each. */
static void python_chain(const struct gt_stack *s, char *out, size_t cap)
{
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; s && i < s->n && at < cap; i++)
		if (py_frame(s, i))
			at += (size_t)snprintf(out + at, cap - at, " %s:%llu", s->frames[i].func,
					       (unsigned long long)s->frames[i].line);
}

/* Each parked thread's last blocking stack names the Python frames CPython's own view of it
 * names, function and line, the whole chain in order. */
static void stacks_match_the_view(const char *python)
{
	struct py_view v[8];
	size_t n = read_views(v, 8);
	char got[2048];

	cr_assert_eq(n, 4, "%zu views of the 4 parked threads:\n%s", n, workload__stdout(it.wl));
	for (size_t k = 0; k < n; k++) {
		const struct gt_event *e, *last = NULL;
		size_t i = 0;

		while ((e = tq_next(it.trace, &i, BLOCKS, v[k].tid))) {
			i++;
			last = e;
		}
		cr_assert(last, "%s: thread %d has no blocking event", python, (int)v[k].tid);
		python_chain(last->stack, got, sizeof(got));
		if (strcmp(got, v[k].chain))
			dump_stack(last->stack);
		cr_assert_str_eq(got, v[k].chain, "%s: thread %d's last blocking stack names\n "
				 "%s\nCPython's own view names\n %s", python, (int)v[k].tid, got,
				 v[k].chain);
	}
}

/* Recorded first, the program parks its threads, takes its own view, and exits without
 * waking them. */
static void view_matches(const char *python)
{
	record_py(python, "view", "0.5", "go1.19");
	stacks_match_the_view(python);
}

Test(python, debian_311_stacks_match_cpythons_own_view)
{
	view_matches(DEBIAN_PY);
}

Test(python, pyenv_310_stacks_match_cpythons_own_view)
{
	view_matches(PYENV_PY("3.10.13"));
}

Test(python, pyenv_312_stacks_match_cpythons_own_view)
{
	view_matches(PYENV_PY("3.12.1"));
}

Test(python, pyenv_313_stacks_match_cpythons_own_view)
{
	view_matches(PYENV_PY("3.13.0"));
}

/* Started first, the program parks its threads and takes its own view; then recorded with -p:
 * the threads asleep through the whole recording have only their stacks read at the start,
 * which must carry their Python frames. */
static void parked_match_at_the_start(const char *python)
{
	static char script[PATH_MAX], ready[PATH_MAX], pid[16];
	struct stat sb;

	if (stat(python, &sb)) {
		cr_skip_test("%s is not installed", python);
		return;
	}
	cr_assert_eq(record__tmpfile(ready, sizeof(ready), ".ready"), 0);
	unlink(ready);
	snprintf(script, sizeof(script), "%s", record__workload_path("pyspin.py"));
	it.wl = workload__start(python, (const char *[]){ script, "parked", "0", ready, NULL });
	cr_assert(it.wl, "cannot start %s: %s", python, strerror(errno));
	/* Its threads park after their first 0.3 s, then it looks twice 0.5 s apart. */
	for (int i = 0; i < 600 && access(ready, F_OK); i++)
		usleep(100 * 1000);
	cr_assert_eq(access(ready, F_OK), 0, "%s did not park its threads in 60 s", python);
	unlink(ready);
	snprintf(pid, sizeof(pid), "%d", (int)workload__pid(it.wl));
	itest_start((const char *[]){ "-p", pid, "-d", "1", NULL });
	itest_stop(0, 0);
	cr_assert_eq(workload__send(it.wl, "go\n"), 0);
	cr_assert_eq(workload__finish(it.wl, 60), 0);
	itest_load();
	stacks_match_the_view(python);
}

Test(python, debian_311_parked_threads_have_python_frames_at_the_start)
{
	parked_match_at_the_start(DEBIAN_PY);
}

Test(python, pyenv_310_parked_threads_have_python_frames_at_the_start)
{
	parked_match_at_the_start(PYENV_PY("3.10.13"));
}

Test(python, pyenv_313_parked_threads_have_python_frames_at_the_start)
{
	parked_match_at_the_start(PYENV_PY("3.13.0"));
}

/* Thread role's last block (where it stays blocked until the program exits) names func at
 * the line the workload reported as line_key. */
static void last_block_named(const char *role, const char *func, const char *line_key)
{
	pid_t tid = itest_tid(role);
	long long line = itest_stat(line_key);
	const struct gt_event *e, *last = NULL;
	size_t i = 0, n = 0;
	int k;

	while ((e = tq_next(it.trace, &i, BLOCKS, tid))) {
		i++;
		n++;
		last = e;
	}
	cr_assert(last, "%s: no block in the trace", role);
	k = frame_at(last->stack, func);
	if (k < 0 || (long long)last->stack->frames[k].line != line)
		dump_stack(last->stack);
	cr_assert_geq(k, 0, "%s: its last block (of %zu) does not name %s", role, n, func);
	cr_assert_eq((long long)last->stack->frames[k].line, line, "%s: %s at line %llu, not %lld",
		     role, func, (unsigned long long)last->stack->frames[k].line, line);
}

/* Threads that block at their first line, within a millisecond of their start and long before
 * the daemon reads their thread list: Python's threads in time.sleep, Lock.acquire and
 * socket.recv, and a thread C created that calls Python through PyGILState_Ensure. Their one
 * block in Python names its function: BPF found the thread state itself. hogs: CPU hogs beyond
 * the cores beside it. */
static void first_blocks_named(const char *python, bool hogs)
{
	if (hogs)
		cr_assert_eq(busy__start(2 * (size_t)sysconf(_SC_NPROCESSORS_ONLN) + 2, false), 0);
	record_py(python, "first", "1", "go1.19");
	busy__stop();
	last_block_named("first_sleeper", "pyspin.lx_first_sleeper", "first_sleep_line");
	last_block_named("first_locker", "pyspin.lx_first_locker", "first_lock_line");
	last_block_named("first_receiver", "pyspin.lx_first_receiver", "first_recv_line");
	/* 3.10 has no qualified name: a nested function is named alone. */
	last_block_named("first_from_c", strstr(python, "3.10") ? "pyspin.lx_first_from_c" :
				       "pyspin.first.<locals>.lx_first_from_c", "first_from_c_line");
	cr_assert_gt(itest_summary_count("Python frames (", 0), 0,
		     "the summary counts no stack whose thread state BPF found:\n%s",
		     recorder__stderr(it.rec));
}

Test(python, debian_311_first_blocks_of_new_threads_are_named)
{
	first_blocks_named(DEBIAN_PY, false);
}

Test(python, debian_311_first_blocks_of_new_threads_are_named_under_load)
{
	first_blocks_named(DEBIAN_PY, true);
}

Test(python, pyenv_310_first_blocks_of_new_threads_are_named)
{
	first_blocks_named(PYENV_PY("3.10.13"), false);
}

Test(python, pyenv_312_first_blocks_of_new_threads_are_named)
{
	first_blocks_named(PYENV_PY("3.12.1"), false);
}

Test(python, pyenv_313_first_blocks_of_new_threads_are_named)
{
	first_blocks_named(PYENV_PY("3.13.0"), false);
}

/* A Python stack 100 calls deep: its samples keep the 32 leaf frames, lx_deep_leaf then 31
 * lx_deep, and mark where the rest were dropped; the summary counts them. (3.10, each call a
 * run of the evaluation loop of its own, 5 native frames, makes stacks longer than a trace's
 * stack may be: they lose their outer frames to "[trimmed N frames]" first.) */
static void deep_marked(const char *python)
{
	const struct gt_event *ev;
	size_t i = 0, n = 0, marked = 0;
	pid_t tid;

	record_py(python, "deep", "1", "go1.19");
	tid = itest_tid("deep");
	while ((ev = tq_next(it.trace, &i, TQ_BIT(GT_EV_CPU_SAMPLE), tid))) {
		int leaf = frame_at(ev->stack, "pyspin.lx_deep_leaf");
		int mark = frame_at(ev->stack, "[truncated: Python frames]");
		size_t deep = 0, k;

		i++;
		if (leaf < 0)
			continue;
		n++;
		for (k = (size_t)leaf + 1; k < ev->stack->n && (int)k != mark; k++)
			deep += !strcmp(ev->stack->frames[k].func, "pyspin.lx_deep");
		if (mark > leaf && deep == LX_PY_FRAMES_MAX - 1)
			marked++;
		else if (n - marked <= 2)
			dump_stack(ev->stack);
	}
	cr_log_info("%s: %zu samples in lx_deep_leaf, %zu marked after 31 lx_deep", python, n,
		    marked);
	cr_assert_geq(n, 50, "%zu samples in lx_deep_leaf", n);
	cr_assert_geq(marked * 100, n * 95, "only %zu of %zu samples 100 calls deep keep 32 Python "
		      "frames and mark the rest", marked, n);
	/* Counted as the other stacks of the line are: each distinct stack once. */
	cr_assert_gt(summary_count("cut deeper than"), 0, "the summary counts no stack cut:\n%s",
		     recorder__stderr(it.rec));
}

Test(python, debian_311_deep_stacks_mark_the_python_frames_dropped)
{
	deep_marked(DEBIAN_PY);
}

Test(python, pyenv_313_deep_stacks_mark_the_python_frames_dropped)
{
	deep_marked(PYENV_PY("3.13.0"));
}

/* The service's events with a thread's stack: where it blocks and its samples. */
#define STACKED (BLOCKS | TQ_BIT(GT_EV_CPU_SAMPLE))

#define SERVICE_CPU_S "3"	/* the CPU time the service runs for, its own */
#define SERVICE_CONNS "64"	/* the client's connections: one a handler */
#define SERVICE_WAIT_S 800	/* the most the test waits for it */
#define SERVICE_THREADS 199	/* the threads it starts and reports */
#define MIN_STACKS 200		/* the service's stacks its first second must have */
#define MAX_ROLES 16

/* The service's threads the test knows: by tid, each with its role. */
struct service {
	char ident[32];		/* its process frame's "(pid N)" */
	struct svc_thread {
		pid_t tid;
		const char *role;
	} t[SERVICE_THREADS];
	size_t nt;
	const char *roles[MAX_ROLES];
	size_t nroles;
};

static int cmp_svc(const void *a, const void *b)
{
	const struct svc_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Runs tests/workloads/pyservice.py beside CPU hogs beyond the cores and an exec churn,
 * recorded with -p PID -F 999 from before it starts its threads (it waits for a line), the row
 * cache off (a first sight), and driven by its client; the recording ends with it, after its
 * CPU time. Loads the trace and the service's threads into *svc. */
static void record_service(struct service *svc)
{
	char sock[PATH_MAX], script[PATH_MAX], pid[16];
	const char *role;
	pid_t tid;

	itest_require_root();
	setenv("LXTRACE_CACHE_DIR", "off", 1);
	cr_assert_eq(busy__start(2 * (size_t)sysconf(_SC_NPROCESSORS_ONLN) + 2, true), 0);
	cr_assert_eq(record__tmpfile(sock, sizeof(sock), ".sock"), 0);
	unlink(sock);
	snprintf(script, sizeof(script), "%s", record__workload_path("pyservice.py"));
	it.wl = workload__start(DEBIAN_PY, (const char *[]){ script, "serve", sock, SERVICE_CPU_S,
							     NULL });
	cr_assert(it.wl, "cannot start %s: %s", DEBIAN_PY, strerror(errno));
	snprintf(pid, sizeof(pid), "%d", (int)workload__pid(it.wl));
	/* -v: the log shows how the first stacks were taken (first sight, rows). */
	itest_start((const char *[]){ "-p", pid, "-F", "999", "-v", NULL });
	cr_assert_eq(workload__send(it.wl, "go\n"), 0);
	client = workload__start(DEBIAN_PY, (const char *[]){ script, "client", sock,
							      SERVICE_CONNS, NULL });
	cr_assert(client, "cannot start the client: %s", strerror(errno));
	/* Its CPU time, however long a busy machine takes to give it (load 36: minutes). */
	cr_assert_eq(workload__finish(it.wl, SERVICE_WAIT_S), 0);
	cr_assert_eq(workload__status(it.wl), 0, "the service exited with %d",
		     workload__status(it.wl));
	/* The recorder stops by itself: every target process has exited. */
	itest_stop(0, 0);
	cr_assert_eq(workload__finish(client, 30), 0);
	busy__stop();
	unsetenv("LXTRACE_CACHE_DIR");
	itest_load();

	snprintf(svc->ident, sizeof(svc->ident), "(pid %s)", pid);
	while (svc->nt < SERVICE_THREADS && workload__thread(it.wl, svc->nt, &role, &tid)) {
		size_t r = 0;

		svc->t[svc->nt++] = (struct svc_thread){ tid, role };
		while (r < svc->nroles && strcmp(svc->roles[r], role))
			r++;
		if (r == svc->nroles && r < MAX_ROLES)
			svc->roles[svc->nroles++] = role;
	}
	cr_assert_eq(svc->nt, SERVICE_THREADS, "the service reported %zu threads", svc->nt);
	qsort(svc->t, svc->nt, sizeof(svc->t[0]), cmp_svc);
}

/* Whether e is a stacked event of the service with user frames; *th: its thread (NULL for the
 * main thread). */
static bool service_stack(const struct service *svc, const struct gt_event *e,
			  const struct svc_thread **th)
{
	const char *proc = tq_process(e->stack);
	struct svc_thread key = { (pid_t)(uint32_t)tq_subject(e), NULL };

	if (!(STACKED & TQ_BIT(e->type)) || !proc || !strstr(proc, svc->ident) ||
	    !tq_user_frames(e->stack))
		return false;
	*th = bsearch(&key, svc->t, svc->nt, sizeof(svc->t[0]), cmp_svc);
	return true;
}

/* The service's stacks from t0 within window ns. */
static size_t window_stacks(const struct service *svc, uint64_t t0, double window)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t nev = gt_trace__nevents(it.trace), n = 0;
	const struct svc_thread *th;

	for (size_t i = 0; i < nev; i++)
		n += service_stack(svc, &ev[i], &th) && ev[i].ts >= t0 &&
		     tq_ns(it.trace, t0, ev[i].ts) < window;
	return n;
}

/* The service's first second in the trace: from the first stack of a thread it started (into
 * *t0), a second, longer by half seconds while the machine's load let it make fewer than
 * MIN_STACKS stacks. Its length in ns. */
static double first_second(const struct service *svc, uint64_t *t0)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t nev = gt_trace__nevents(it.trace);
	const struct svc_thread *th;
	double window = 1e9;

	*t0 = UINT64_MAX;
	for (size_t i = 0; i < nev; i++)
		if (service_stack(svc, &ev[i], &th) && th && ev[i].ts < *t0)
			*t0 = ev[i].ts;
	while (window_stacks(svc, *t0, window) < MIN_STACKS && window < 10e9)
		window += 0.5e9;
	return window;
}

/* Stacks of the file cut short, whoever's. */
static size_t cut_stacks(void)
{
	const struct gt_event *ev = gt_trace__events(it.trace);
	size_t nev = gt_trace__nevents(it.trace), n = 0;

	for (size_t i = 0; i < nev; i++)
		n += tq_cut_mark(ev[i].stack) != NULL;
	return n;
}

/* The mark of s's native walk cut short ("[truncated]", "[truncated: no room for a copy]"),
 * not the one of Python frames cut deeper than the walk keeps (a limit of its own, not of the
 * first sight), or NULL. */
static const char *native_cut_mark(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strncmp(s->frames[i].func, "[truncated", 10) &&
		    strcmp(s->frames[i].func, "[truncated: Python frames]"))
			return s->frames[i].func;
	return NULL;
}

/* Whether s has a Python frame (its file a .py). */
static bool has_python_frame(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++) {
		size_t len = s->frames[i].file ? strlen(s->frames[i].file) : 0;

		if (len > 3 && !strcmp(s->frames[i].file + len - 3, ".py"))
			return true;
	}
	return false;
}

/* The service's stacks: in its first second, and in the interpreter (with its evaluation
 * loop's native frame) of a thread it started, over the recording and in the first second. */
struct tally {
	size_t n, whole, cut_shown;
	size_t py, named, bare;		/* in the interpreter: all, naming their thread's
					 * function, with no Python frame at all */
	size_t py_first, named_first;
	bool role_named[MAX_ROLES];
};

static void tally_stack(const struct service *svc, const struct gt_event *e,
			const struct svc_thread *th, bool first, struct tally *t)
{
	char want[64];

	if (first) {
		t->n++;
		if (!native_cut_mark(e->stack))
			t->whole++;
		else if (t->cut_shown++ < 3)
			dump_stack(e->stack);
	}
	if (!th || !tq_stack_has(e->stack, "_PyEval_EvalFrameDefault"))
		return;
	t->py++;
	t->py_first += first;
	snprintf(want, sizeof(want), "pyservice.lx_%s", th->role);
	if (tq_stack_has(e->stack, want)) {
		t->named++;
		t->named_first += first;
		for (size_t r = 0; r < svc->nroles; r++)
			t->role_named[r] = t->role_named[r] || !strcmp(svc->roles[r], th->role);
	} else if (!has_python_frame(e->stack)) {
		t->bare++;
	} else if (t->py - t->named - t->bare <= 3) {
		fprintf(stderr, "--- Python frames without %s:\n", want);
		dump_stack(e->stack);
	}
}

/* Issue 30 (first sight under load) with issue 32's Python frames: a Python service of 200
 * threads (tests/workloads/pyservice.py) whose libraries (libcrypto, libssl, libsqlite3,
 * libmpdec, asyncio's and json's extensions) are loaded by its threads as they start, after
 * the recorder attached with -p, beside CPU hogs beyond the cores and an exec churn. In its
 * first second at least 95% of its blocking and sampled stacks are whole (no "[truncated"
 * mark of a native walk; Python frames cut deeper than 32 are marked too, a limit of their
 * own); in the recording every thread's function is named where the interpreter runs it, at
 * least 95% of the stacks there with Python frames name it, and those without are counted;
 * the summary counts every cut stack of the file. */
Test(python, service_of_200_threads_is_whole_and_named_from_its_first_second,
     .timeout = SERVICE_WAIT_S + 100)
{
	static struct service svc;
	static struct tally t;
	const struct gt_event *ev;
	size_t nev, cut;
	long long native_only, not_named, refused;
	uint64_t t0;
	double window;
	struct stat sb;

	if (stat(DEBIAN_PY, &sb))
		cr_skip_test("%s is not installed", DEBIAN_PY);
	memset(&svc, 0, sizeof(svc));
	memset(&t, 0, sizeof(t));
	record_service(&svc);
	window = first_second(&svc, &t0);
	ev = gt_trace__events(it.trace);
	nev = gt_trace__nevents(it.trace);
	for (size_t i = 0; i < nev; i++) {
		const struct svc_thread *th;

		if (service_stack(&svc, &ev[i], &th))
			tally_stack(&svc, &ev[i], th,
				    ev[i].ts >= t0 && tq_ns(it.trace, t0, ev[i].ts) < window, &t);
	}
	cut = cut_stacks();
	/* "native frames only: N stacks of threads not seen yet, M with a frame not named, ...,
	 * R whose state did not prove its own" */
	native_only = itest_summary_count("native frames only:", 0);
	not_named = itest_summary_count("threads not seen yet,", 0);
	refused = itest_summary_count("holding no thread state,", 0);
	cr_log_info("pyservice: %zu stacks in its first second (%.1f s), %zu whole; %zu in the "
		    "interpreter, %zu name their function (first second: %zu, %zu); %zu without "
		    "Python frames; %zu cut stacks in the file; the summary:\n%s", t.n,
		    window / 1e9, t.whole, t.py, t.named, t.py_first, t.named_first, t.bare, cut,
		    recorder__stderr(it.rec));
	cr_assert_geq(t.n, MIN_STACKS, "only %zu stacks of the service in %.1f s", t.n,
		      window / 1e9);
	cr_assert_geq(t.whole * 100, t.n * 95, "only %zu of %zu stacks of the first second whole",
		      t.whole, t.n);
	for (size_t r = 0; r < svc.nroles; r++)
		cr_assert(t.role_named[r], "no stack names pyservice.lx_%s", svc.roles[r]);
	cr_assert_geq(t.named * 100, (t.py - t.bare) * 95, "only %zu of %zu stacks with Python "
		      "frames name their thread's function", t.named, t.py - t.bare);
	cr_assert_geq(native_only + not_named + refused, (long long)t.bare, "%zu stacks in the "
		      "interpreter have no Python frame, the summary counts %lld", t.bare,
		      native_only + not_named + refused);
	cr_assert_geq(itest_summary_count("stacks cut:", 0), (long long)cut,
		      "%zu stacks of the file are cut, the summary counts fewer", cut);
}
