/* syscalls.c - x86_64 syscall names (generated table) and their blocking classes. */
#include <asm/unistd.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "user/proc/syscalls.h"

static const char *const names[] = {
#include "syscall_names.h"
};

#define NNAMES ((int)(sizeof(names) / sizeof(names[0])))

const char *syscalls__name(int nr)
{
	return nr >= 0 && nr < NNAMES ? names[nr] : NULL;
}

int syscalls__nr(const char *name)
{
	for (int nr = 0; nr < NNAMES; nr++)
		if (names[nr] && !strcmp(names[nr], name))
			return nr;
	return -1;
}

/* Syscalls that wait for an event on descriptors, an I/O completion or a connection: a wait
 * for a file descriptor, and one by design. */
static bool waits_for_events(int nr)
{
	switch (nr) {
	case __NR_poll:
	case __NR_ppoll:
	case __NR_select:
	case __NR_pselect6:
	case __NR_epoll_wait:
	case __NR_epoll_pwait:
	case __NR_epoll_pwait2:
	case __NR_io_getevents:
	case __NR_io_pgetevents:
	case __NR_io_uring_enter:
	case __NR_accept:
	case __NR_accept4:
		return true;
	default:
		return false;
	}
}

/* By number, not name, so classifying costs a switch on the hot path and no string work. */
enum syscall_class syscalls__class(int nr)
{
	switch (nr) {
	case __NR_futex:
	case __NR_futex_waitv:
		return SYSCALL_CLASS_SYNC;
	case __NR_connect:
	case __NR_recvfrom:
	case __NR_recvmsg:
	case __NR_recvmmsg:
	case __NR_sendto:
	case __NR_sendmsg:
	case __NR_sendmmsg:
	case __NR_read:
	case __NR_readv:
	case __NR_pread64:
	case __NR_preadv:
	case __NR_preadv2:
	case __NR_write:
	case __NR_writev:
	case __NR_pwrite64:
	case __NR_pwritev:
	case __NR_pwritev2:
	case __NR_sendfile:
	case __NR_splice:
	case __NR_tee:
	case __NR_vmsplice:
		return SYSCALL_CLASS_FD;
	case __NR_nanosleep:
	case __NR_clock_nanosleep:
		return SYSCALL_CLASS_SLEEP;
	case __NR_sched_yield:
		return SYSCALL_CLASS_YIELD;
	default:
		return waits_for_events(nr) ? SYSCALL_CLASS_FD : SYSCALL_CLASS_OTHER;
	}
}

bool syscalls__waits(int nr)
{
	switch (nr) {
	case __NR_wait4:
	case __NR_waitid:
	case __NR_pause:
	case __NR_rt_sigsuspend:
	case __NR_rt_sigtimedwait:
		return true;
	default:
		break;
	}
	switch (syscalls__class(nr)) {
	case SYSCALL_CLASS_SYNC:
	case SYSCALL_CLASS_SLEEP:
	case SYSCALL_CLASS_YIELD:
		return true;
	default:
		return waits_for_events(nr);
	}
}
