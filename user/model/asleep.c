/* asleep.c - a thread found asleep, by the start (model.c) or when first seen later (late.c):
 * which threads the model leaves out, and how one found asleep is written. Apart from both so
 * that neither calls the other (docs/layout.md: no call cycle). */
#include <unistd.h>

#include "user/model/core.h"
#include "user/model/model.h"
#include "user/model/out.h"
#include "user/model/threads.h"

/* Whether pt is a thread the init phase leaves out: exited (nothing of it can be shown), the
 * recorder's own or its helper's (whose records the BPF side leaves out too). */
bool model_left_out(const struct model *m, const struct procscan_thread *pt)
{
	return pt->state == 'Z' || pt->state == 'X' || pt->pid == (uint32_t)getpid() ||
	       (m->helper_pid && pt->pid == m->helper_pid);
}

int model_found_asleep(struct model *m, struct thread *t, uint64_t new_stk,
		       const struct procscan_thread *pt)
{
	enum gt_type wait;
	int err;

	/* Started and blocked there, not GoWaiting: Go 1.19's goroutine tables take a goroutine's
	 * name from its first GoStart and count it waiting for a CPU from its creation to that
	 * start, so a thread that sleeps through the recording would be a nameless one waiting
	 * for a CPU all along. Blocked as a switch out of its syscall would block it (the report
	 * counts its time off the CPU from the recording's start, as the time before is
	 * unknown); a GoInSyscall would make
	 * Go 1.23 draw the thread as running a syscall on the housekeeping P (its view=proc) or on
	 * its thread (view=thread) from the start until it wakes (docs/viewing.md). The Go
	 * go1.23 format states it waiting, with the stack it waits at: the one read when the
	 * recording started (model__start_stacks), or its syscall alone. */
	/* Uninterruptible: the kernel doing the syscall's work, which no block of a thread
	 * found asleep can say (a switch says it with GoSysBlock). */
	wait = pt->state == 'D' ? GT_EV_GO_BLOCK : syscalls__wait_event(pt->syscall);
	err = m->out->found(m, t, new_stk, wait, pt->syscall);
	m->rs = NULL;
	m->rpy = NULL;
	t->seq++;
	t->state = THREAD_WAITING;
	return err;
}
