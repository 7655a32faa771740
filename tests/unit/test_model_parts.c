/* test_model_parts.c - the model's helpers: the generated syscall table and its classes, and
 * the /proc scan (on fake trees, and on this process's own threads). */
#include <asm/unistd_64.h>
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test_model_util.h"
#include "user/proc/procscan.h"
#include "user/proc/syscalls.h"

Test(syscalls, names_come_from_the_system_header)
{
	cr_expect_str_eq(syscalls__name(__NR_read), "read");
	cr_expect_str_eq(syscalls__name(__NR_futex), "futex");
	cr_expect_str_eq(syscalls__name(__NR_clock_nanosleep), "clock_nanosleep");
	cr_expect_str_eq(syscalls__name(__NR_epoll_pwait2), "epoll_pwait2");
	cr_expect_null(syscalls__name(-1));
	cr_expect_null(syscalls__name(100000));
	cr_expect_eq(syscalls__nr("openat"), __NR_openat);
	cr_expect_eq(syscalls__nr("no_such_call"), -1);
}

Test(syscalls, classes)
{
	cr_expect_eq(syscalls__class(__NR_futex), SYSCALL_CLASS_SYNC);
	cr_expect_eq(syscalls__class(__NR_epoll_wait), SYSCALL_CLASS_FD);
	cr_expect_eq(syscalls__class(__NR_recvmsg), SYSCALL_CLASS_FD);
	cr_expect_eq(syscalls__class(__NR_ppoll), SYSCALL_CLASS_FD);
	cr_expect_eq(syscalls__class(__NR_read), SYSCALL_CLASS_FD);
	cr_expect_eq(syscalls__class(__NR_nanosleep), SYSCALL_CLASS_SLEEP);
	cr_expect_eq(syscalls__class(__NR_sched_yield), SYSCALL_CLASS_YIELD);
	cr_expect_eq(syscalls__class(__NR_wait4), SYSCALL_CLASS_OTHER);
	cr_expect_eq(syscalls__class(-1), SYSCALL_CLASS_OTHER);
}

Test(procscan, fake_tree)
{
	char *root = mt_proc_new();
	struct procscan_thread one, *v;
	char path[512];
	size_t n;
	FILE *f;

	mt_proc_thread(root, 20, 22, "two words", 'D', __NR_read);
	mt_proc_thread(root, 20, 20, "a) (b", 'S', -1);
	mt_proc_thread(root, 7, 7, "first", 'R', -1);
	cr_assert_eq(procscan__threads(root, &v, &n), 0);
	cr_assert_eq(n, 3);
	/* Sorted by tid, with comms that hold spaces and parentheses. */
	cr_expect_eq(v[0].tid, 7);
	cr_expect_eq(v[1].tid, 20);
	cr_expect_str_eq(v[1].comm, "a) (b");
	cr_expect_eq(v[1].state, 'S');
	cr_expect_eq(v[1].syscall, -1);
	cr_expect_eq(v[2].tid, 22);
	cr_expect_eq(v[2].pid, 20);
	cr_expect_str_eq(v[2].comm, "two words");
	cr_expect_eq(v[2].state, 'D');
	cr_expect_eq(v[2].syscall, __NR_read);
	cr_expect_lt(procscan__thread(root, 22, &one), 0, "no status file: not found");
	free(v);
	cr_expect_lt(procscan__threads("/nonexistent-lxtrace", &v, &n), 0);

	/* A kernel thread (PF_KTHREAD in the stat flags) reads "0 0x0 ..." as its syscall. */
	mt_proc_thread(root, 2, 2, "kthreadd", 'S', 0);
	snprintf(path, sizeof(path), "%s/2/task/2/stat", root);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 24 0 0\n", f);
	fclose(f);
	cr_assert_eq(procscan__threads(root, &v, &n), 0);
	cr_assert_eq(n, 4);
	cr_expect_eq(v[0].tid, 2);
	cr_expect_eq(v[0].syscall, -1);
	free(v);
	mt_proc_free(root);
}

static void *sleeper(void *arg)
{
	pause();
	return arg;
}

Test(procscan, own_threads)
{
	struct procscan_thread one;
	pthread_t th;

	cr_assert_eq(pthread_create(&th, NULL, sleeper, NULL), 0);
	cr_assert_eq(procscan__thread("/proc", (uint32_t)gettid(), &one), 0);
	cr_expect_eq(one.pid, (uint32_t)getpid());
	cr_expect_eq(one.state, 'R');
	pthread_cancel(th);
	pthread_join(th, NULL);
}

Test(procscan, resident_pages_from_statm)
{
	char *root = mt_proc_new();
	char path[512];
	FILE *f;

	mt_proc_thread(root, 30, 30, "big", 'S', -1);
	snprintf(path, sizeof(path), "%s/30/statm", root);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("5000 1234 300 10 0 800 0\n", f);
	fclose(f);
	cr_expect_eq(procscan__resident(root, 30), 1234);
	cr_expect_eq(procscan__resident(root, 31), 0, "no such process");
	cr_expect_gt(procscan__resident("/proc", (uint32_t)getpid()), 0);
	mt_proc_free(root);
}
