/* sysloop.c - one thread makes exactly N getppid() system calls, the cheapest syscall with
 * no vDSO shortcut and no libc cache. Usage: sysloop [N]. */
#include <sys/syscall.h>

#include "workload.h"

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 10000, 0, 1000000000);

	wl_pid();
	wl_tid("looper");
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	wl_stat("getppid", n);
	return 0;
}
