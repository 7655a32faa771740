/* vforker.c - a blocking syscall of the kernel's own kind: K times the thread vforks a child
 * that sleeps 20 ms and exits, and waits meanwhile uninterruptibly (TASK_KILLABLE) inside
 * vfork, as a thread waits for a disk. Usage: vforker [K].
 *
 * The child only makes raw syscalls: it shares the parent's memory until it exits. */
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "workload.h"

/* A child that sleeps 20 ms and exits, vforked: the caller waits in vfork meanwhile. Apart
 * from the loop, so that nothing of the caller's is live across vfork (the child runs on the
 * parent's stack). */
static __attribute__((noinline)) pid_t vfork_sleeper(void)
{
	pid_t child = vfork();

	if (!child) {
		const struct timespec twenty_ms = { 0, 20 * 1000 * 1000 };

		syscall(SYS_nanosleep, &twenty_ms, NULL);
		syscall(SYS_exit, 0);
	}
	return child;
}

static void vfork_loop(long k)
{
	for (long i = 0; i < k; i++) {
		pid_t child = vfork_sleeper();

		if (child < 0)
			wl_die("vfork");
		if (waitpid(child, NULL, 0) != child)
			wl_die("waitpid");
	}
}

int main(int argc, char **argv)
{
	long k = wl_arg(argc, argv, 1, 5, 1, 1000);

	wl_pid();
	wl_tid("parent");
	vfork_loop(k);
	wl_stat("vforks", k);
	return 0;
}
