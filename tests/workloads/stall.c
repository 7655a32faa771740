/* stall.c - induced run-queue stalls: a thread that sleeps 5 ms at a time on one CPU, and a
 * SCHED_FIFO hog that, after IDLE_MS, takes that CPU for STALL_MS, COUNT times, one every
 * PERIOD_MS; then IDLE_MS more of idling. The sleeper wakes during each hog and waits runnable
 * until the hog ends: its wakeup -> run gap is the stall. The sleeper is SCHED_FIFO too, below
 * the hog: whatever else loads the machine, only the hog can keep it waiting, so the stalls it
 * suffers are exactly the induced ones. So is the main thread, lowest of the three: a trigger
 * that watches every thread of the process (comm=stall) must not fire when the machine's other
 * load keeps it waiting after its long sleep, before the hog. Needs root (SCHED_FIFO) and two
 * CPUs.
 *
 * usage: stall [IDLE_MS [STALL_MS [COUNT [PERIOD_MS]]]]   (default 1000 150 1 1000)
 * Reports: tid sleeper, tid hog-N, stat cpu, stat stalls, and for the first stall
 * stat stall_start_ns / stall_end_ns (CLOCK_MONOTONIC, the trace's clock). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "workload.h"

static int cpu;
static long stall_ms;
static atomic_int done;
static long long first_start, first_end;

static void pin(pthread_attr_t *a)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_attr_setaffinity_np(a, sizeof(set), &set))
		wl_die("pthread_attr_setaffinity_np");
}

static void *sleeper(void *arg)
{
	wl_tid("sleeper");
	while (!atomic_load(&done))
		wl_sleep_ms(5);
	return NULL;
}

static void *hog(void *arg)
{
	long long start = wl_now_ns(), end = start + stall_ms * 1000000LL, t;
	char role[32];

	snprintf(role, sizeof(role), "hog-%ld", (long)(intptr_t)arg);
	wl_tid(role);
	while ((t = wl_now_ns()) < end)
		;
	if (!arg) {
		first_start = start;
		first_end = t;
	}
	return NULL;
}

/* FIFO priorities: the hog above the sleeper, the main thread below both. */
#define MAIN_PRIO 1
#define SLEEPER_PRIO 5
#define HOG_PRIO 10

static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t a;
	int err;

	pthread_attr_init(&a);
	pin(&a);
	if (pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED) ||
		     pthread_attr_setschedpolicy(&a, SCHED_FIFO) ||
		     pthread_attr_setschedparam(&a, &sp))
		wl_die("SCHED_FIFO attributes");
	err = pthread_create(t, &a, fn, arg);
	if (err) {
		errno = err;
		wl_die("pthread_create (SCHED_FIFO needs root)");
	}
	pthread_attr_destroy(&a);
}

int main(int argc, char **argv)
{
	long idle_ms = wl_arg(argc, argv, 1, 1000, 0, 600000);
	long count, period_ms;
	pthread_t s, h;

	stall_ms = wl_arg(argc, argv, 2, 150, 1, 900);
	count = wl_arg(argc, argv, 3, 1, 1, 100000);
	period_ms = wl_arg(argc, argv, 4, 1000, 1, 600000);
	if (period_ms < stall_ms) {
		fprintf(stderr, "%s: PERIOD_MS must be at least STALL_MS\n", argv[0]);
		return 2;
	}
	/* The last CPU: the sleeper and the hog share it. */
	cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	if (cpu < 1) {
		fprintf(stderr, "%s: needs two CPUs\n", argv[0]);
		return 2;
	}
	wl_pid();
	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = MAIN_PRIO }))
		wl_die("sched_setscheduler (SCHED_FIFO needs root)");
	start_thread(&s, sleeper, NULL, SLEEPER_PRIO);
	wl_sleep_ms(idle_ms);
	for (long i = 0; i < count; i++) {
		long long next = wl_now_ns() + period_ms * 1000000LL, left;

		start_thread(&h, hog, (void *)(intptr_t)i, HOG_PRIO);
		pthread_join(h, NULL);
		left = (next - wl_now_ns()) / 1000000;
		if (i + 1 < count && left > 0)
			wl_sleep_ms(left);
	}
	wl_sleep_ms(idle_ms);
	atomic_store(&done, 1);
	pthread_join(s, NULL);
	wl_stat("cpu", cpu);
	wl_stat("stalls", count);
	wl_stat("stall_start_ns", first_start);
	wl_stat("stall_end_ns", first_end);
	return 0;
}
