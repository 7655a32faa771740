/* steal.c - a SCHED_FIFO hog steals a CPU from a victim for a known time, K times.
 * Usage: steal [K] [HOLD_MS] [GAP_MS] (default 10 rounds of 20 ms, 10 ms apart); as root.
 *
 * Both threads are pinned to the machine's last CPU. The victim blocks in read() on a pipe;
 * each round the hog (SCHED_FIFO 1, which no normal thread preempts) writes a byte to wake it,
 * spins HOLD_MS, then sleeps GAP_MS, and only then can the victim run. So the victim waits
 * for the CPU HOLD_MS after each of its K wakeups, and the thread that holds it is the hog.
 * Reports the waits it measured itself, from just before the write to just after the read
 * returns: stat wait_max_us, wait_min_us; and rounds, and blocked: the reads that found no
 * byte yet and slept (on a loaded machine the victim may come back to read only after the
 * hog's next write: that round has no wakeup). */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "workload.h"

static int fds[2];
static long rounds;
static long long woken_at;	/* the hog's clock before each write, read by the victim */
static long long wait_min = -1, wait_max, blocked;

static void pin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		wl_die("sched_setaffinity");
}

static void *victim(void *arg)
{
	char c;

	pin();
	wl_tid("victim");
	for (long i = 0; i < rounds; i++) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		long long w;

		blocked += poll(&p, 1, 0) == 0;
		if (read(fds[0], &c, 1) != 1)
			wl_die("read");
		w = wl_now_ns() - __atomic_load_n(&woken_at, __ATOMIC_ACQUIRE);
		if (wait_min < 0 || w < wait_min)
			wait_min = w;
		if (w > wait_max)
			wait_max = w;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long hold_ms, gap_ms;
	struct sched_param sp = { .sched_priority = 1 };
	pthread_t t;
	char name[16];

	rounds = wl_arg(argc, argv, 1, 10, 1, 100000);
	hold_ms = wl_arg(argc, argv, 2, 20, 1, 500);
	gap_ms = wl_arg(argc, argv, 3, 10, 1, 10000);
	wl_pid();
	if (pipe(fds))
		wl_die("pipe");
	pin();
	wl_tid("hog");
	/* The victim has its own name, so a report can tell it from the hog ("steal"), and has it
	 * from its clone, which copies the creator's: named in its first run, it was preempted
	 * before the rename in 3 of 15 runs here, and its creation's wait went to "steal". */
	if (prctl(PR_GET_NAME, name) || prctl(PR_SET_NAME, "victim"))
		wl_die("prctl PR_SET_NAME");
	if (pthread_create(&t, NULL, victim, NULL))
		wl_die("pthread_create");
	if (prctl(PR_SET_NAME, name))
		wl_die("prctl PR_SET_NAME");
	/* Let the victim block in its first read before the hog takes the CPU for good. */
	wl_sleep_ms(gap_ms);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		wl_die("sched_setscheduler SCHED_FIFO");
	for (long i = 0; i < rounds; i++) {
		long long until;

		__atomic_store_n(&woken_at, wl_now_ns(), __ATOMIC_RELEASE);
		if (write(fds[1], "x", 1) != 1)
			wl_die("write");
		until = wl_now_ns() + hold_ms * 1000000LL;
		while (wl_now_ns() < until)
			;
		wl_sleep_ms(gap_ms);
	}
	if (pthread_join(t, NULL))
		wl_die("pthread_join");
	wl_stat("rounds", rounds);
	wl_stat("wait_max_us", wait_max / 1000);
	wl_stat("wait_min_us", wait_min / 1000);
	wl_stat("blocked", blocked);
	return 0;
}
