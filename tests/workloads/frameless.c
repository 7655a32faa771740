/* frameless.c - code as distributions build it, without frame pointers (this file alone is
 * built -O2 -fomit-frame-pointer), for the unwinder's tests. Usage:
 *
 *   frameless read N       main -> outer_a -> inner_b -> read(): N one-byte reads of a pipe a
 *                          writer thread fills 2 ms after each read is announced: every
 *                          read blocks
 *   frameless callers N    the same read, reached alternately through call_one and call_two:
 *                          identical functions, so the stack pointer and depth at read() are
 *                          the same and only the return address into them differs
 *   frameless leaf MS      main -> spin_outer -> spin_middle -> spin_leaf, a leaf without a
 *                          frame of its own, for MS ms
 *   frameless irq N        a thread sleeping 1 ms at a time, N times, beside a thread spinning
 *                          on the same CPU until it is done: the sleeper's wakeups come from
 *                          the timer
 *   frameless signal N     main -> spin_outer spinning, interrupted N times by SIGALRM, whose
 *                          handler sleeps 2 ms: a stack through the signal trampoline
 *   frameless pool N       a stuck pool: N threads pool_worker -> pool_wait -> read() of a
 *                          pipe nobody writes, main in pthread_join, until killed
 *
 * It reports the lines of the calls for the tests to check the frames' lines (stat *_line:
 * each is set on the line before its call). */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "workload.h"

#define NOINLINE __attribute__((noinline))
/* Keeps a call from being a tail call, which would leave its caller off the stack. */
#define KEEP(x) __asm__ volatile("" : "+r"(x) : : "memory")

static int fds[2], acks[2];
static volatile int stop;
static int read_line, outer_a_line, call_one_line, call_two_line, main_line;
static int leaf_line, middle_line, outer_line, handler_line;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *writer(void *arg)
{
	long n = (long)arg;

	wl_tid("writer");
	for (long i = 0; i < n; i++) {
		char c;

		/* The reader is about to read: the byte comes 2 ms later, so every read blocks. */
		if (read(acks[0], &c, 1) != 1)
			wl_die("read ack");
		sleep_ms(2);
		if (write(fds[1], "x", 1) != 1)
			wl_die("write");
	}
	return NULL;
}

NOINLINE static long inner_b(char *buf)
{
	long n;

	read_line = __LINE__ + 1;
	n = read(fds[0], buf, 1);

	KEEP(n);
	return n;
}

NOINLINE static long outer_a(char *buf)
{
	long n;

	outer_a_line = __LINE__ + 1;
	n = inner_b(buf);

	KEEP(n);
	return n + 1;
}

/* call_one and call_two are the same code: only the return address into them tells them
 * apart at read(). */
NOINLINE static long call_one(char *buf)
{
	long n;

	call_one_line = __LINE__ + 1;
	n = inner_b(buf);

	KEEP(n);
	return n + 1;
}

NOINLINE static long call_two(char *buf)
{
	long n;

	call_two_line = __LINE__ + 1;
	n = inner_b(buf);

	KEEP(n);
	return n + 1;
}

static void reads(long n, bool alternate)
{
	pthread_t t;
	char buf[4];

	if (pipe(fds) || pipe(acks) || pthread_create(&t, NULL, writer, (void *)n))
		wl_die("start the writer");
	wl_tid("reader");
	for (long i = 0; i < n; i++) {
		long r;

		if (write(acks[1], "a", 1) != 1)
			wl_die("write ack");
		if (!alternate) {
			main_line = __LINE__ + 1;
			r = outer_a(buf);
		} else if (i % 2) {
			r = call_two(buf);
		} else {
			r = call_one(buf);
		}
		if (r != 2)
			wl_die("read");
	}
	pthread_join(t, NULL);
	wl_stat("read_line", read_line);
	wl_stat("outer_a_line", outer_a_line);
	wl_stat("call_one_line", call_one_line);
	wl_stat("call_two_line", call_two_line);
	wl_stat("main_line", main_line);
}

/* A loop that calls nothing: gcc gives it no frame even with frame pointers on. */
NOINLINE static unsigned long spin_leaf(unsigned long x)
{
	leaf_line = __LINE__ + 1;
	for (int i = 0; i < 100000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

NOINLINE static unsigned long spin_middle(unsigned long x)
{
	middle_line = __LINE__ + 1;
	x = spin_leaf(x);
	KEEP(x);
	return x ^ 1;
}

NOINLINE static unsigned long spin_outer(long ms)
{
	struct timespec t0, t;
	unsigned long x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		outer_line = __LINE__ + 1;
		x = spin_middle(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return x;
}

static volatile long signals;

NOINLINE static void on_alarm(int sig)
{
	handler_line = __LINE__ + 1;
	sleep_ms(2);
	signals++;
}

/* Spins until n signals were handled, each sleeping in its handler. */
static void signal_spin(long n)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	if (sigaction(SIGALRM, &sa, NULL))
		wl_die("sigaction");
	ualarm(5000, 5000);
	while (signals < n)
		spin_middle(1);
	ualarm(0, 0);
}

NOINLINE static long pool_wait(char *buf)
{
	long n = read(fds[0], buf, 1);

	KEEP(n);
	return n;
}

static void *pool_worker(void *arg)
{
	char buf[4];
	long n;

	wl_tid("worker");
	n = pool_wait(buf);
	KEEP(n);
	return arg;
}

static void pool(long n)
{
	pthread_t t;

	if (pipe(fds))
		wl_die("pipe");
	for (long i = 0; i < n; i++)
		if (pthread_create(&t, NULL, pool_worker, NULL))
			wl_die("start a worker");
	wl_tid("main");
	pthread_join(t, NULL);
}

static void *sleeper(void *arg)
{
	long n = *(long *)arg;

	wl_tid("sleeper");
	for (long i = 0; i < n; i++)
		sleep_ms(1);
	stop = 1;
	return NULL;
}

/* Both threads on the CPU the process started on: the timer that ends each sleep interrupts
 * the spinning thread. By count, not time: on a busy CPU a 1 ms sleep takes what the queue
 * gives it. */
static void irq(long n)
{
	unsigned long x = 1;
	cpu_set_t set;
	pthread_t t;

	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof(set), &set) || pthread_create(&t, NULL, sleeper, &n))
		wl_die("start the sleeper");
	wl_tid("spinner");
	while (!stop)
		x = spin_middle(x);
	pthread_join(t, NULL);
	wl_stat("x", (long long)(x & 1));
	wl_stat("sleeps", n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	wl_pid();
	if (!strcmp(mode, "read") || !strcmp(mode, "callers")) {
		reads(wl_arg(argc, argv, 2, 200, 1, 100000), mode[0] == 'c');
	} else if (!strcmp(mode, "leaf")) {
		wl_tid("spinner");
		wl_stat("x", (long long)(spin_outer(wl_arg(argc, argv, 2, 1000, 1, 600000)) & 1));
		wl_stat("leaf_line", leaf_line);
		wl_stat("middle_line", middle_line);
		wl_stat("outer_line", outer_line);
	} else if (!strcmp(mode, "irq")) {
		irq(wl_arg(argc, argv, 2, 1000, 1, 100000));
	} else if (!strcmp(mode, "signal")) {
		wl_tid("spinner");
		signal_spin(wl_arg(argc, argv, 2, 100, 1, 100000));
		wl_stat("handler_line", handler_line);
	} else if (!strcmp(mode, "pool")) {
		pool(wl_arg(argc, argv, 2, 5, 1, 4000));
	} else {
		fprintf(stderr, "usage: frameless read|callers|leaf|irq|signal|pool N\n");
		return 2;
	}
	return 0;
}
