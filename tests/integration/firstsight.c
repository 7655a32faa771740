/* firstsight.c - first sight under load: a busy Python server of 200 threads, attached with -p
 * beside CPU hogs, has its stacks whole from the recording's first second, when none of its
 * binaries' unwind rows are loaded yet and every walk needs a copy of the stack
 * (docs/stacks.md, "First sight"); every copy the ring had no room for is counted. */
#include "tests/integration/itest.h"
#include "tests/lib/busy.h"

#define PYTHON "/usr/bin/python3"

/* The server: 40 threads hashing and compressing, 40 ping-pong pairs over socketpairs (80),
 * 40 taking one lock, 40 waiting on a condition the main thread notifies every 10 ms; its
 * libraries (libcrypto, libz, libssl, libsqlite3, libmpdec, liblzma, libbz2, libffi) loaded
 * as it starts. argv[1]: a file made once every thread runs. It exits once its parent, the
 * test, is gone. */
static const char server[] =
	"import os, sys, socket, threading, time, hashlib, zlib, json, decimal, sqlite3, ssl, "
	"lzma, bz2, ctypes\n"
	"lock = threading.Lock()\n"
	"cond = threading.Condition()\n"
	"started = threading.Barrier(161)\n"
	"def cpu():\n"
	"    started.wait()\n"
	"    x = b'x' * 4096\n"
	"    while True:\n"
	"        hashlib.sha256(x).digest()\n"
	"        zlib.compress(x)\n"
	"        sum(range(2000))\n"
	"def pinger():\n"
	"    a, b = socket.socketpair()\n"
	"    def echo():\n"
	"        while True:\n"
	"            b.sendall(b.recv(64))\n"
	"    threading.Thread(target=echo, daemon=True).start()\n"
	"    started.wait()\n"
	"    while True:\n"
	"        a.sendall(b'ping')\n"
	"        a.recv(64)\n"
	"        time.sleep(0.002)\n"
	"def locker():\n"
	"    started.wait()\n"
	"    while True:\n"
	"        with lock:\n"
	"            sum(range(500))\n"
	"        time.sleep(0.001)\n"
	"def waiter():\n"
	"    started.wait()\n"
	"    while True:\n"
	"        with cond:\n"
	"            cond.wait(0.005)\n"
	"parent = os.getppid()\n"
	"for i in range(160):\n"
	"    threading.Thread(target=(cpu, pinger, locker, waiter)[i % 4], daemon=True).start()\n"
	"started.wait()\n"
	"open(sys.argv[1], 'w').close()\n"
	"while os.getppid() == parent:\n"
	"    time.sleep(0.01)\n"
	"    with cond:\n"
	"        cond.notify_all()\n";

#define SERVER_THREADS 201

static void firstsight_fini(void)
{
	busy__stop();
	itest_fini();
}

TestSuite(firstsight, .fini = firstsight_fini, .timeout = 240);

#define BLOCKS (TQ_BIT(GT_EV_GO_SLEEP) | TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SEND) | \
		TQ_BIT(GT_EV_GO_BLOCK_RECV) | TQ_BIT(GT_EV_GO_BLOCK_SELECT) |                   \
		TQ_BIT(GT_EV_GO_BLOCK_SYNC) | TQ_BIT(GT_EV_GO_BLOCK_COND) |                     \
		TQ_BIT(GT_EV_GO_BLOCK_NET) | TQ_BIT(GT_EV_GO_SYSCALL) | TQ_BIT(GT_EV_CPU_SAMPLE))

/* A blocking event's or a sample's stack with user frames, of the process named ident. */
static bool is_server_stack(const struct gt_event *e, const char *ident)
{
	const char *proc = tq_process(e->stack);

	return (BLOCKS & TQ_BIT(e->type)) && e->stack && proc && strstr(proc, ident) &&
	       tq_user_frames(e->stack);
}

/* The server's stacks within window ns of t0. */
static size_t window_stacks(const struct gt_event *ev, size_t nev, const char *ident, uint64_t t0,
			    double window)
{
	size_t n = 0;

	for (size_t i = 0; i < nev; i++)
		n += is_server_stack(&ev[i], ident) && tq_ns(it.trace, t0, ev[i].ts) < window;
	return n;
}

/* Issue 30: attached with -p to a busy Python server on a loaded machine, 29% of the stacks
 * ended [truncated] after 1-3 frames, up to 95% in the first 250 ms: each walk that met a
 * library whose rows were not loaded yet needed a copy of the stack, and the copies were
 * refused once the ring was a quarter full, the walk going on by frame pointers. */
Test(firstsight, attached_busy_python_is_whole_from_the_first_second)
{
	const struct gt_event *ev;
	char ready[256], pidarg[32], ident[64];
	size_t n = 0, whole = 0, no_room = 0, shown = 0, nev;
	struct workload *py;
	uint64_t t0 = UINT64_MAX;
	double window = 1e9;
	pid_t pid;

	if (access(PYTHON, X_OK))
		cr_skip_test("needs %s", PYTHON);
	itest_require_root();
	cr_assert_eq(record__tmpfile(ready, sizeof(ready), ".ready"), 0);
	unlink(ready);
	/* Rows compiled in this recording, none from an earlier one's cache: a first sight. */
	setenv("LXTRACE_CACHE_DIR", "off", 1);
	/* CPU hogs beyond the cores: two a CPU and two more. */
	cr_assert_eq(busy__start(2 * (size_t)sysconf(_SC_NPROCESSORS_ONLN) + 2, false), 0);
	py = workload__start(PYTHON, (const char *[]){ "-c", server, ready, NULL });
	cr_assert(py, "cannot start python3: %s", strerror(errno));
	pid = workload__pid(py);
	for (int i = 0; i < 1200 && access(ready, F_OK); i++)
		usleep(50 * 1000);
	cr_assert_eq(access(ready, F_OK), 0, "python3 did not start its threads in 60 s");
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	/* The smallest ring (256 KiB): busy as the default one is under a heavier load, so that
	 * a quarter of it holds ten copies of a stack, not the load of this machine's moment
	 * (26 to 41,000 stacks of the server in the first second, from one run to the next). */
	itest_start((const char *[]){ "-p", pidarg, "-F", "999", "-b", "0.25", NULL });
	usleep(4000 * 1000);
	itest_stop(SIGINT, 0);
	busy__stop();
	kill(pid, SIGKILL);
	workload__finish(py, 10);
	workload__free(py);
	unlink(ready);
	unsetenv("LXTRACE_CACHE_DIR");
	itest_load();

	ev = gt_trace__events(it.trace);
	nev = gt_trace__nevents(it.trace);
	snprintf(ident, sizeof(ident), "(pid %d)", (int)pid);
	/* The first second from the first user stack of the server the recorder took, longer
	 * when the machine's load let the server make fewer than 200 stacks in it. */
	for (size_t i = 0; i < nev; i++)
		if (is_server_stack(&ev[i], ident) && ev[i].ts < t0)
			t0 = ev[i].ts;
	while (window_stacks(ev, nev, ident, t0, window) < 200 && window < 4e9)
		window += 0.5e9;
	for (size_t i = 0; i < nev; i++) {
		const struct gt_stack *s = ev[i].stack;
		const char *cut;

		if (!is_server_stack(&ev[i], ident) || tq_ns(it.trace, t0, ev[i].ts) >= window)
			continue;
		n++;
		cut = tq_cut_mark(s);
		if (!cut) {
			whole++;
			continue;
		}
		no_room += strcmp(cut, "[truncated]") != 0;
		if (shown++ < 3) {
			fprintf(stderr, "--- a cut stack:\n");
			for (size_t j = 0; j < s->n; j++)
				fprintf(stderr, "    %s %s:%llu\n", s->frames[j].func, s->frames[j].file,
					(unsigned long long)s->frames[j].line);
		}
	}
	cr_log_info("attached python3 of %d threads: %zu stacks in the first %.1f s, %zu whole, "
		    "%zu cut for want of room for a copy; the summary:\n%s", SERVER_THREADS, n,
		    window / 1e9, whole, no_room, recorder__stderr(it.rec));
	cr_assert_geq(n, 200, "only %zu user stacks of python3 in %.1f s", n, window / 1e9);
	/* Every copy refused is counted: each such stack in the file, and in the summary. */
	cr_assert_geq(itest_summary_count("stacks cut:", 0), (long long)no_room,
		      "%zu stacks end [truncated: no room for a copy], the summary counts fewer",
		      no_room);
	cr_assert_geq(whole * 100, n * 95, "only %zu of %zu stacks of the first %.1f s whole", whole,
		      n, window / 1e9);
}
