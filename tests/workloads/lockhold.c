/* lockhold.c - a mutex held a known time while another thread waits for it, K times.
 * Usage: lockhold [K] [HOLD_MS] (default 10 rounds of 20 ms).
 *
 * Each round the holder takes the mutex, tells the waiter (a byte on a pipe), sleeps HOLD_MS
 * holding it, releases it and sleeps HOLD_MS more; the waiter, told, asks for the mutex and
 * sleeps in futex() until the holder lets it go: K waits for a lock of about HOLD_MS each,
 * in the thread named "waiter". Reports the waits it measured itself around
 * pthread_mutex_lock: stat lock_wait_max_us, lock_wait_min_us, lock_blocked (the waits of
 * 100 us or more: the lock was still held; a loaded machine may run the waiter only after the
 * holder let it go); and rounds. */
#include <pthread.h>
#include <unistd.h>

#include "workload.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fds[2];
static long rounds;
static long long wait_min = -1, wait_max, blocked;

static void *waiter(void *arg)
{
	char c;

	pthread_setname_np(pthread_self(), "waiter");
	wl_tid("waiter");
	for (long i = 0; i < rounds; i++) {
		long long t0, w;

		if (read(fds[0], &c, 1) != 1)
			wl_die("read");
		t0 = wl_now_ns();
		pthread_mutex_lock(&lock);
		w = wl_now_ns() - t0;
		pthread_mutex_unlock(&lock);
		if (wait_min < 0 || w < wait_min)
			wait_min = w;
		if (w > wait_max)
			wait_max = w;
		blocked += w >= 100000;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long hold_ms;
	pthread_t t;

	rounds = wl_arg(argc, argv, 1, 10, 1, 100000);
	hold_ms = wl_arg(argc, argv, 2, 20, 1, 10000);
	wl_pid();
	wl_tid("holder");
	if (pipe(fds))
		wl_die("pipe");
	if (pthread_create(&t, NULL, waiter, NULL))
		wl_die("pthread_create");
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		if (write(fds[1], "x", 1) != 1)
			wl_die("write");
		wl_sleep_ms(hold_ms);
		pthread_mutex_unlock(&lock);
		wl_sleep_ms(hold_ms);
	}
	if (pthread_join(t, NULL))
		wl_die("pthread_join");
	wl_stat("rounds", rounds);
	wl_stat("lock_wait_max_us", wait_max / 1000);
	wl_stat("lock_wait_min_us", wait_min / 1000);
	wl_stat("lock_blocked", blocked);
	return 0;
}
