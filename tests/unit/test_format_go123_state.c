/* test_format_go123_state.c - the go1.23 scheduler-state tracker (format/go123/state.h) on
 * generations built by hand: a good one is ordered across its Ms, and each rule Go 1.23's
 * ordering checks, broken once, is refused with its reason and the offset of its event. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/go123/cut.h"
#include "format/go123/spec.h"
#include "format/go123/state.h"
#include "format/go123/wire.h"
#include "format/varint.h"

#define MAXB 8
#define NONE UINT64_MAX

/* A generation being built: its batches' bytes, one per M. */
struct gen {
	uint8_t data[MAXB][512];
	struct go123_state_batch b[MAXB];
	size_t nb;
};

/* Starts a batch of M m at time base; its first event's offset is body. */
static size_t batch(struct gen *g, uint64_t m, uint64_t base, uint64_t body)
{
	cr_assert_lt(g->nb, MAXB);
	g->b[g->nb] = (struct go123_state_batch){ m, base, body, g->data[g->nb], 0 };
	return g->nb++;
}

/* Appends to batch i an event of type t, dt ticks after the last, with its arguments. */
static void ev(struct gen *g, size_t i, uint8_t t, uint64_t dt, ...)
{
	const struct go123_spec *s = go123_spec(t);
	uint8_t *p = g->data[i] + g->b[i].len;
	va_list ap;

	cr_assert(s);
	*p++ = t;
	p = gt_varint_put(p, dt);
	va_start(ap, dt);
	for (unsigned a = 0; a < s->nargs; a++)
		p = gt_varint_put(p, va_arg(ap, uint64_t));
	va_end(ap);
	g->b[i].len = (size_t)(p - g->data[i]);
}

static const char *strings(void *ctx, uint64_t id, size_t *len)
{
	static const char *const tab[] = { "", "region", "other" };

	(void)ctx;
	if (id >= 3)
		return NULL;
	*len = strlen(tab[id]);
	return tab[id];
}

static struct go123_state *s;
static struct gen cur;
static char msg[256];

static int order(uint64_t n, const struct gen *g)
{
	msg[0] = '\0';
	return go123_state__generation(s, n, 1000000000, g->b, g->nb, strings, NULL, msg,
				     sizeof(msg));
}

/* Generation 1's start, as lxtrace writes it: P 0 running on M 1 with goroutine 1, goroutine
 * 2 waiting; batch 0 is M 1's. */
static void start(struct gen *g)
{
	memset(g, 0, sizeof(*g));
	batch(g, 1, 100, 1000);
	ev(g, 0, GO123_EV_PROC_STATUS, 0, 0ull, (uint64_t)GO123_P_RUNNING);
	ev(g, 0, GO123_EV_GO_STATUS, 0, 1ull, 1ull, (uint64_t)GO123_G_RUNNING);
	ev(g, 0, GO123_EV_GO_STATUS, 0, 2ull, NONE, (uint64_t)GO123_G_WAITING);
}

/* The generation refused with -EINVAL, msg naming the offset and holding why. */
static void refused(uint64_t n, const struct gen *g, const char *why)
{
	cr_assert_eq(order(n, g), -EINVAL, "taken; wanted: %s", why);
	cr_assert(!strncmp(msg, "offset ", 7), "%s", msg);
	cr_assert(strstr(msg, why), "%s; wanted: %s", msg, why);
}

static void setup(void)
{
	s = go123_state__new(0);
	cr_assert(s);
	start(&cur);
}

static void teardown(void)
{
	go123_state__free(s);
}

TestSuite(format_go123_state, .init = setup, .fini = teardown);

/* M 1 blocks goroutine 1; M 2 wakes goroutine 2, which M 1 runs: GoStart's time is before its
 * GoUnblock's, so it waits for M 2 as Go's does. A second generation restates it all. */
Test(format_go123_state, orders_across_ms_and_generations)
{
	size_t m2;

	ev(&cur, 0, GO123_EV_GO_BLOCK, 10, 0ull, 0ull);
	ev(&cur, 0, GO123_EV_GO_START, 10, 2ull, 2ull);
	ev(&cur, 0, GO123_EV_USER_REGION_BEGIN, 1, 0ull, 1ull, 0ull);
	ev(&cur, 0, GO123_EV_USER_REGION_END, 1, 0ull, 1ull, 0ull);
	ev(&cur, 0, GO123_EV_GO_SYSCALL_BEGIN, 1, 1ull, 0ull);
	ev(&cur, 0, GO123_EV_GO_SYSCALL_END, 1);
	m2 = batch(&cur, 2, 200, 2000);
	ev(&cur, m2, GO123_EV_PROC_STATUS, 0, 1ull, (uint64_t)GO123_P_RUNNING);
	ev(&cur, m2, GO123_EV_GO_STATUS, 0, 3ull, 2ull, (uint64_t)GO123_G_RUNNING);
	ev(&cur, m2, GO123_EV_GO_UNBLOCK, 5, 2ull, 1ull, 0ull);
	ev(&cur, m2, GO123_EV_GO_SYSCALL_BEGIN, 1, 1ull, 0ull);
	cr_assert_eq(order(1, &cur), 0, "%s", msg);

	/* Generation 2: goroutine 1 waits, 2 runs on M 1, 3 is in a syscall on M 2 with P 1,
	 * which M 1 steals once M 2 has restated it. */
	memset(&cur, 0, sizeof(cur));
	batch(&cur, 1, 300, 3000);
	ev(&cur, 0, GO123_EV_PROC_STATUS, 0, 0ull, (uint64_t)GO123_P_RUNNING);
	ev(&cur, 0, GO123_EV_GO_STATUS, 0, 2ull, 1ull, (uint64_t)GO123_G_RUNNING);
	ev(&cur, 0, GO123_EV_GO_STATUS, 0, 1ull, NONE, (uint64_t)GO123_G_WAITING);
	ev(&cur, 0, GO123_EV_GO_STATUS, 0, 3ull, 2ull, (uint64_t)GO123_G_SYSCALL);
	ev(&cur, 0, GO123_EV_PROC_STEAL, 5, 1ull, 1ull, 2ull);
	m2 = batch(&cur, 2, 400, 4000);
	ev(&cur, m2, GO123_EV_PROC_STATUS, 0, 1ull, (uint64_t)GO123_P_SYSCALL);
	ev(&cur, m2, GO123_EV_GO_SYSCALL_END_BLOCKED, 0);
	cr_assert_eq(order(2, &cur), 0, "%s", msg);
}

Test(format_go123_state, a_status_unlike_the_last_generations)
{
	cr_assert_eq(order(1, &cur), 0, "%s", msg);
	memset(&cur, 0, sizeof(cur));
	batch(&cur, 1, 300, 3000);
	ev(&cur, 0, GO123_EV_GO_STATUS, 0, 2ull, NONE, (uint64_t)GO123_G_RUNNABLE);
	refused(2, &cur, "offset 3000: GoStatus of goroutine 2: 1, but it was 4");
}

Test(format_go123_state, a_goroutine_new_after_the_first_generation)
{
	cr_assert_eq(order(1, &cur), 0, "%s", msg);
	memset(&cur, 0, sizeof(cur));
	batch(&cur, 1, 300, 3000);
	ev(&cur, 0, GO123_EV_GO_STATUS, 0, 9ull, NONE, (uint64_t)GO123_G_WAITING);
	refused(2, &cur, "new after the first generation");
}

Test(format_go123_state, a_status_out_of_range)
{
	ev(&cur, 0, GO123_EV_PROC_STATUS, 0, 5ull, 7ull);
	refused(1, &cur, "ProcStatus of P 5: status 7");
}

/* A wakeup's sequence number skips one: nothing can go on. */
Test(format_go123_state, a_sequence_number_skipped)
{
	ev(&cur, 0, GO123_EV_GO_UNBLOCK, 10, 2ull, 2ull, 0ull);
	refused(1, &cur, "generation 1 cannot be ordered: M 1's GoUnblock");
}

Test(format_go123_state, a_goroutine_started_twice)
{
	ev(&cur, 0, GO123_EV_GO_STOP, 10, 0ull, 0ull);
	ev(&cur, 0, GO123_EV_GO_START, 10, 1ull, 1ull);
	ev(&cur, 0, GO123_EV_GO_START, 10, 1ull, 2ull);
	refused(1, &cur, "cannot be ordered: M 1's GoStart");
}

Test(format_go123_state, a_block_with_no_goroutine)
{
	ev(&cur, 0, GO123_EV_GO_BLOCK, 10, 0ull, 0ull);
	ev(&cur, 0, GO123_EV_GO_BLOCK, 10, 0ull, 0ull);
	refused(1, &cur, "GoBlock needs a goroutine, its M has none");
}

Test(format_go123_state, a_goroutine_created_twice)
{
	ev(&cur, 0, GO123_EV_GO_CREATE, 10, 2ull, 0ull, 0ull);
	refused(1, &cur, "GoCreate of goroutine 2, which exists");
}

Test(format_go123_state, a_steal_from_an_m_without_the_p)
{
	size_t m2;

	ev(&cur, 0, GO123_EV_GO_SYSCALL_BEGIN, 10, 1ull, 0ull);
	m2 = batch(&cur, 2, 200, 2000);
	ev(&cur, m2, GO123_EV_PROC_STEAL, 0, 0ull, 2ull, 3ull);
	refused(1, &cur, "ProcSteal of P 0 from M 3, which has not been seen");
}

Test(format_go123_state, a_syscall_with_a_bad_p_sequence)
{
	ev(&cur, 0, GO123_EV_GO_SYSCALL_BEGIN, 10, 5ull, 0ull);
	refused(1, &cur, "P 0's sequence goes from 0 to 5");
}

Test(format_go123_state, a_syscall_end_outside_a_syscall)
{
	ev(&cur, 0, GO123_EV_GO_SYSCALL_END, 10);
	refused(1, &cur, "GoSyscallEnd for goroutine 1, running, not in a syscall");
}

Test(format_go123_state, a_region_ended_out_of_turn)
{
	ev(&cur, 0, GO123_EV_USER_REGION_BEGIN, 1, 0ull, 1ull, 0ull);
	ev(&cur, 0, GO123_EV_USER_REGION_END, 1, 0ull, 2ull, 0ull);
	refused(1, &cur, "not its innermost region");
}

Test(format_go123_state, a_task_begun_twice)
{
	ev(&cur, 0, GO123_EV_USER_TASK_BEGIN, 1, 7ull, 0ull, 1ull, 0ull);
	ev(&cur, 0, GO123_EV_USER_TASK_BEGIN, 1, 7ull, 0ull, 1ull, 0ull);
	refused(1, &cur, "UserTaskBegin of task 7, which is alive");
}

Test(format_go123_state, a_gc_ended_twice)
{
	ev(&cur, 0, GO123_EV_GC_BEGIN, 1, 1ull, 0ull);
	ev(&cur, 0, GO123_EV_GC_END, 1, 2ull);
	ev(&cur, 0, GO123_EV_GC_END, 1, 3ull);
	refused(1, &cur, "GCEnd while no GC is known to run");
}

Test(format_go123_state, a_range_ended_before_it_began)
{
	ev(&cur, 0, GO123_EV_GC_SWEEP_END, 1, 0ull, 0ull);
	refused(1, &cur, "GCSweepEnd without its GCSweepBegin");
}

/* The offset is the refused event's: the third event of M 1's batch. */
Test(format_go123_state, names_the_offset_of_the_event)
{
	char want[64];

	snprintf(want, sizeof(want), "offset %zu: ProcStop of P", 1000 + cur.b[0].len + 2);
	ev(&cur, 0, GO123_EV_PROC_STOP, 1);
	ev(&cur, 0, GO123_EV_PROC_STOP, 1);
	refused(1, &cur, want);
}

Test(format_go123_state, over_the_budget)
{
	go123_state__free(s);
	s = go123_state__new(100);
	cr_assert(s);
	cr_assert_eq(order(1, &cur), -EFBIG);
	cr_assert(strstr(msg, "the tracker's budget"), "%s", msg);
}

/* Appends the batches of cur as generation n (and its Frequency) to a file at fd. */
static void put_generation(int fd, uint64_t n)
{
	uint8_t h[64], *p;

	for (size_t i = 0; i <= cur.nb; i++) {
		uint8_t freq[8] = { GO123_EV_FREQUENCY }, *q = gt_varint_put(freq + 1, 1000000000);
		const uint8_t *body = i < cur.nb ? cur.b[i].data : freq;
		size_t len = i < cur.nb ? cur.b[i].len : (size_t)(q - freq);

		p = h;
		*p++ = GO123_EV_BATCH;
		p = gt_varint_put(p, n);
		p = gt_varint_put(p, i < cur.nb ? cur.b[i].m : NONE);
		p = gt_varint_put(p, i < cur.nb ? cur.b[i].base : 0);
		p = gt_varint_put(p, len);
		cr_assert_eq(write(fd, h, (size_t)(p - h)), p - h);
		cr_assert_eq(write(fd, body, len), (ssize_t)len);
	}
}

/* Generation 2 blocks goroutine 1 without restating it: the whole file is a trace (the state
 * carries over), but cut to generation 2 it is not, so cut refuses the window. */
Test(format_go123_state, cut_refuses_a_window_that_needs_what_came_before)
{
	int in = memfd_create("v2state-in", MFD_CLOEXEC), out = memfd_create("v2state-out",
									    MFD_CLOEXEC);
	struct go123_cut_report rep;
	char err[256];

	cr_assert(in >= 0 && out >= 0);
	cr_assert_eq(write(in, GO123_HEADER, GO123_HEADER_LEN), GO123_HEADER_LEN);
	put_generation(in, 1);
	memset(&cur, 0, sizeof(cur));
	batch(&cur, 1, 5000, 0);
	ev(&cur, 0, GO123_EV_GO_BLOCK, 0, 0ull, 0ull);
	put_generation(in, 2);
	cr_assert_eq(go123_cut(in, out, 0, UINT64_MAX, &rep, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rep.generations, 2);
	cr_assert_eq(go123_cut(in, out, 4000, UINT64_MAX, &rep, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "no trace of their own") && strstr(err, "GoBlock needs a P"), "%s",
		  err);
	close(in);
	close(out);
}
