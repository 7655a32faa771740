/* test_merge.c - the reorder engine on synthetic per-CPU streams: interleaved CPUs come out in
 * time order, the watermark holds back what a CPU may still precede, a record nested ahead of
 * its elder is put back in place, late records are delivered and counted, losses are ordered
 * among the records, syscall chunks are unpacked, large records pass whole, a consumer's
 * error stops the delivery, a queue past its bound reports what it drops as lost, and a
 * reader that leaves records in its rings once a queue is full keeps the queues within
 * their bound, in order, losing nothing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/merge.h"

#define NCPU 3

/* What the consumer was handed, in order: a record's (ts, cpu, type, tid) or a loss report
 * (type 0, tid = its count). */
struct got {
	uint64_t ts;
	uint32_t cpu, tid;
	uint8_t type;
	size_t size;
	unsigned char bytes[512];
};

static struct got got[4096];
static size_t ngot;
static int fail_at = -1;	/* the consumer fails on this delivery */
static struct merge *mg;

static int on_record(void *ctx, const struct lx_rec *r, size_t size)
{
	struct got *g = &got[ngot];

	cr_assert_lt(ngot, sizeof(got) / sizeof(got[0]));
	*g = (struct got){ .ts = r->ts, .cpu = r->cpu, .tid = r->tid, .type = r->type, .size = size };
	memcpy(g->bytes, r, size < sizeof(g->bytes) ? size : sizeof(g->bytes));
	return (int)ngot++ == fail_at ? -EIO : 0;
}

static int on_lost(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	got[ngot++] = (struct got){ .ts = ts, .cpu = cpu, .tid = (uint32_t)n };
	return 0;
}

static void setup(void)
{
	ngot = 0;
	fail_at = -1;
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .on_record = on_record, .on_lost = on_lost });
	cr_assert_not_null(mg);
}

static void teardown(void)
{
	merge__free(mg);
}

TestSuite(merge, .init = setup, .fini = teardown);

static void add(uint32_t cpu, uint64_t ts, uint32_t tid)
{
	struct lx_switch sw = { .h = { .ts = ts, .tid = tid, .cpu = (uint16_t)cpu,
				       .type = LX_REC_SWITCH }, .next_tid = tid + 1 };

	cr_assert_eq(merge__add(mg, cpu, &sw, sizeof(sw)), 0);
}

static struct merge_stats stats(void)
{
	struct merge_stats st;

	merge__stats(mg, &st);
	return st;
}

/* The deliveries so far are the records of these tids, in this order. */
static void expect_tids(const uint32_t *tids, size_t n)
{
	cr_assert_eq(ngot, n);
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(got[i].tid, tids[i], "delivery %zu: tid %u, not %u", i, got[i].tid, tids[i]);
}

#define EXPECT_TIDS(...)                                                                        \
	expect_tids((const uint32_t[]){ __VA_ARGS__ },                                         \
		    sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

static void expect_sorted(void)
{
	for (size_t i = 1; i < ngot; i++)
		cr_expect_leq(got[i - 1].ts, got[i].ts, "delivery %zu: %llu after %llu", i,
			      (unsigned long long)got[i].ts, (unsigned long long)got[i - 1].ts);
}

Test(merge, interleaved_cpus_come_out_in_time_order)
{
	/* Each CPU in order on its own, the CPUs interleaved in time. */
	for (uint64_t i = 0; i < 300; i++)
		add((uint32_t)(i % NCPU), 1000 + i * 7 + (i % NCPU) * 3, (uint32_t)i);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 300);
	expect_sorted();
	for (size_t i = 0; i < ngot; i++)
		cr_expect_eq(got[i].cpu, got[i].tid % NCPU);
	cr_expect_eq(stats().records, 300);
	cr_expect_eq(stats().out_of_order, 0);
}

Test(merge, watermark_is_the_oldest_cpus_newest_or_the_window)
{
	uint64_t now = 100 * MERGE_WINDOW_NS;

	/* No CPU has sent anything: each may still send anything from the window on. */
	cr_expect_eq(merge__watermark(mg, now), now - MERGE_WINDOW_NS);
	add(0, now - 1000, 1);
	add(1, now - 5000, 2);
	/* CPU 2 quiet: the window still bounds it. */
	cr_expect_eq(merge__watermark(mg, now), now - MERGE_WINDOW_NS);
	add(2, now - 2000, 3);
	cr_expect_eq(merge__watermark(mg, now), now - 5000);
	/* Delivery stops at the watermark; the rest waits. */
	cr_assert_eq(merge__deliver(mg, merge__watermark(mg, now)), 0);
	EXPECT_TIDS(2);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	EXPECT_TIDS(2, 3, 1);
}

/* A CPU whose ring was not read to its end (the read's time ran out) is not quiet, however old
 * its newest record: what its ring still holds may be older than the others'. */
Test(merge, a_cpu_read_in_part_holds_the_watermark_at_its_newest)
{
	uint64_t now = 100 * MERGE_WINDOW_NS, old = now - 3 * MERGE_WINDOW_NS;

	add(0, now - 1000, 1);
	add(1, now - 2000, 2);
	add(2, old, 3);
	cr_expect_eq(merge__watermark(mg, now), now - MERGE_WINDOW_NS);
	merge__unread(mg, 2, true);
	cr_expect_eq(merge__watermark(mg, now), old);
	merge__unread(mg, 2, false);
	cr_expect_eq(merge__watermark(mg, now), now - MERGE_WINDOW_NS);
}

Test(merge, nested_record_is_put_back_in_place)
{
	/* An interrupt's program ran inside another's and reserved first: 30 before 20. */
	add(0, 10, 1);
	add(0, 30, 3);
	add(0, 20, 2);
	add(1, 25, 4);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	EXPECT_TIDS(1, 2, 4, 3);
	cr_expect_eq(stats().out_of_order, 0);
}

Test(merge, late_record_is_delivered_and_counted)
{
	add(0, 100, 1);
	add(1, 200, 2);
	cr_assert_eq(merge__deliver(mg, 200), 0);
	EXPECT_TIDS(1, 2);
	/* CPU 0 sends something older than what went out already. */
	add(0, 150, 3);
	add(1, 300, 4);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	EXPECT_TIDS(1, 2, 3, 4);
	cr_expect_eq(stats().out_of_order, 1);
	cr_expect_eq(stats().records, 4);
}

Test(merge, losses_are_ordered_among_records)
{
	add(0, 10, 1);
	add(1, 20, 2);
	add(0, 40, 3);
	cr_assert_eq(merge__add_lost(mg, 1, 30, 7), 0);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 4);
	cr_expect_eq(got[2].type, 0);
	cr_expect_eq(got[2].cpu, 1);
	cr_expect_eq(got[2].ts, 30);
	cr_expect_eq(got[2].tid, 7);
	cr_expect_eq(stats().lost, 7);
	cr_expect_eq(stats().records, 3);
}

Test(merge, syscall_chunks_are_unpacked)
{
	struct lx_syscalls ch = { .h = { .ts = 1000, .cpu = 2, .type = LX_REC_SYSCALLS }, .n = 3 };
	size_t size = offsetof(struct lx_syscalls, e) + 3 * sizeof(ch.e[0]);

	ch.e[0] = (struct lx_sysent){ .dt = 0, .tid_nr = 500u << LX_SYSENT_NR_BITS | 39 };
	ch.e[1] = (struct lx_sysent){ .dt = 50, .tid_nr = 501u << LX_SYSENT_NR_BITS | LX_SYSENT_NR_NONE };
	ch.e[2] = (struct lx_sysent){ .dt = 90, .tid_nr = 500u << LX_SYSENT_NR_BITS | LX_SYSENT_EXIT };
	/* A record of the same CPU nested ahead of the chunk, between its entries. */
	add(2, 1070, 9);
	cr_assert_eq(merge__add(mg, 2, &ch, size), 0);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 4);
	expect_sorted();
	cr_expect_eq(got[0].type, LX_REC_SYSCALL);
	cr_expect_eq(got[0].tid, 500);
	cr_expect_eq(((const struct lx_syscall *)got[0].bytes)->nr, 39);
	cr_expect_eq(got[1].ts, 1050);
	cr_expect_eq(((const struct lx_syscall *)got[1].bytes)->nr, -1);
	cr_expect_eq(got[2].tid, 9);
	cr_expect_eq(got[3].ts, 1090);
	cr_expect_eq(got[3].cpu, 2);
	cr_expect_eq(got[3].size, sizeof(struct lx_syscall));
	cr_expect_eq(got[3].type, LX_REC_SYSCALL_EXIT);
	cr_expect_eq(got[3].tid, 500);
	cr_expect_eq(((const struct lx_syscall *)got[3].bytes)->nr, -1);
}

/* A malformed record is dropped and reported lost, one each, at its CPU's newest time; the
 * records around it go on (before: -EPROTO, which ended the recording). */
Test(merge, malformed_records_are_dropped_as_lost)
{
	struct lx_syscalls ch = { .h = { .ts = 1000, .type = LX_REC_SYSCALLS }, .n = 3 };
	size_t size = offsetof(struct lx_syscalls, e) + 3 * sizeof(ch.e[0]);
	struct lx_rec tiny = { .ts = 5 };
	struct merge_stats st;

	add(0, 900, 7);
	cr_expect_eq(merge__add(mg, 0, &ch, size - 8), 0);
	ch.n = LX_SYSCALLS_MAX + 1;
	cr_expect_eq(merge__add(mg, 0, &ch, sizeof(ch) + 8), 0);
	cr_expect_eq(merge__add(mg, 0, &tiny, sizeof(tiny) - 1), 0);
	add(0, 950, 8);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	merge__stats(mg, &st);
	cr_expect_eq(st.malformed, 3);
	cr_expect_eq(st.lost, 3);
	cr_assert_eq(ngot, 5, "%zu deliveries", (size_t)ngot);
	cr_expect_eq(got[0].tid, 7);
	for (int i = 1; i < 4; i++)
		cr_expect(got[i].ts == 900 && got[i].tid == 1, "delivery %d: ts %llu, n %u", i,
			  (unsigned long long)got[i].ts, got[i].tid);
	cr_expect_eq(got[4].tid, 8);
}

/* A merge whose queues hold at most stage_bytes (merge_opts). */
static void bounded(size_t stage_bytes)
{
	merge__free(mg);
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .on_record = on_record, .on_lost = on_lost,
					      .stage_bytes = stage_bytes });
	cr_assert_not_null(mg);
}

/* A consumer behind for long: the queue keeps its bound in slots (the smallest, 4096), the
 * newest slot becomes one loss report for everything past it, in time order. */
Test(merge, a_full_queue_reports_what_it_drops_as_one_loss)
{
	const uint32_t n = 4096 + 10;

	bounded(1);
	for (uint32_t i = 0; i < n; i++)
		add(0, 100 + i, i);
	cr_expect_eq(stats().staged, 4096);
	cr_expect_eq(stats().dropped, 11);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 4096);
	expect_sorted();
	cr_expect_eq(got[4094].tid, 4094);
	cr_expect_eq(got[4095].type, 0);
	cr_expect_eq(got[4095].tid, 11);
	cr_expect_eq(got[4095].ts, 100 + n - 1);
	cr_expect_eq(stats().lost, 11);
	cr_expect_eq(stats().records, 4095);
	/* Delivered, the queue takes records again. */
	ngot = 0;
	add(0, 100 + n, 7);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	EXPECT_TIDS(7);
}

/* Records copied whole count against the bound in bytes; smaller ones still fit after them. */
Test(merge, copies_past_the_bound_are_dropped_and_reported)
{
	struct lx_user_log l = { .u = { .h = { .tid = 12, .cpu = 1, .type = LX_REC_LOG } } };

	bounded(3 * sizeof(l));
	for (uint64_t ts = 10; ts < 15; ts++) {
		l.u.h.ts = ts;
		cr_assert_eq(merge__add(mg, 1, &l, sizeof(l)), 0);
	}
	add(1, 20, 5);
	cr_expect_eq(stats().dropped, 2);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 5);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(got[i].size, sizeof(l));
	cr_expect(got[3].type == 0 && got[3].ts == 14 && got[3].tid == 2, "loss: ts %llu, n %u",
		  (unsigned long long)got[3].ts, got[3].tid);
	cr_expect_eq(got[4].tid, 5);
}

Test(merge, large_records_pass_whole)
{
	struct lx_user_log l = { .u = { .h = { .ts = 77, .tid = 12, .cpu = 1, .type = LX_REC_LOG },
					.task = 3, .pid = 12 } };

	strcpy(l.u.name, "category");
	memset(l.msg, 'm', sizeof(l.msg) - 1);
	add(1, 70, 1);
	cr_assert_eq(merge__add(mg, 1, &l, sizeof(l)), 0);
	add(1, 80, 2);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 3);
	cr_expect_eq(got[1].size, sizeof(l));
	cr_expect_eq(memcmp(got[1].bytes, &l, sizeof(l)), 0);
}

Test(merge, consumer_error_stops_delivery)
{
	for (uint64_t i = 0; i < 10; i++)
		add((uint32_t)(i % 2), 10 + i, (uint32_t)i);
	fail_at = 3;
	cr_expect_eq(merge__deliver(mg, UINT64_MAX), -EIO);
	cr_expect_eq(ngot, 4);
	/* The rest is still staged, and goes out on the next delivery. */
	fail_at = -1;
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_expect_eq(ngot, 10);
	expect_sorted();
}

Test(merge, undelivered_records_are_freed)
{
	struct lx_user_log l = { .u = { .h = { .ts = 5, .type = LX_REC_LOG } } };

	/* Large records still staged at the end are the engine's to free (ASan would tell). */
	cr_assert_eq(merge__add(mg, 0, &l, sizeof(l)), 0);
	cr_assert_eq(merge__add_lost(mg, 1, 9, 2), 0);
}

/* A bound in time: a CPU whose oldest staged record is half of max_behind_ns older than a new
 * sample drops the sample, all of it older than a new record drops the record, each a loss
 * report in its place. */
Test(merge, a_queue_too_far_behind_drops_samples_first_then_everything)
{
	struct lx_sample smp = { .h = { .ts = 60, .tid = 9, .cpu = 0, .type = LX_REC_SAMPLE },
				 .pid = 9 };

	merge__free(mg);
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .max_behind_ns = 100, .on_record = on_record,
					      .on_lost = on_lost });
	cr_assert_not_null(mg);
	add(0, 10, 10);
	cr_assert_eq(merge__add(mg, 0, &smp, sizeof(smp)), 0);	/* 50 behind: shed */
	add(0, 70, 70);						/* kept */
	add(0, 110, 110);					/* 100 behind: shed */
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 4);
	EXPECT_TIDS(10, 1, 70, 1);
	cr_expect_eq(stats().dropped, 2);
	cr_expect_eq(stats().dropped_samples, 1);
}

/* A trigger is not shed however far behind its CPU's queue is (a SIGUSR1 under load made no
 * file): it is staged and delivered in its place. */
Test(merge, a_trigger_is_kept_however_far_behind)
{
	struct lx_user_log trig = { .u = { .h = { .ts = 500, .tid = 0, .cpu = 0,
						 .type = LX_REC_TRIGGER } } };

	merge__free(mg);
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .max_behind_ns = 100, .on_record = on_record,
					      .on_lost = on_lost });
	cr_assert_not_null(mg);
	add(0, 10, 10);
	cr_assert_eq(merge__add(mg, 0, &trig, sizeof(trig)), 0);	/* 490 behind: kept */
	add(0, 520, 520);						/* shed */
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 3);
	cr_expect_eq(got[1].size, sizeof(trig));
	cr_expect_eq(stats().dropped, 1);
}

/* A stop out of time gives up on what is staged: each CPU's records up to the end become one
 * loss report there (with the loss reports among them), later ones are counted apart, and a
 * trigger stays to be delivered. */
Test(merge, abandoned_records_become_one_loss_report_a_cpu)
{
	struct lx_user_log trig = { .u = { .h = { .ts = 40, .tid = 0, .cpu = 1,
						 .type = LX_REC_TRIGGER } } };
	struct lx_user_log big = { .u = { .h = { .ts = 20, .cpu = 0, .type = LX_REC_LOG } } };
	uint64_t later;
	int err;

	add(0, 10, 10);
	cr_assert_eq(merge__add(mg, 0, &big, sizeof(big)), 0);
	add(0, 30, 30);
	add(0, 120, 120);	/* after the end */
	cr_assert_eq(merge__add_lost(mg, 1, 25, 5), 0);
	add(1, 35, 35);
	cr_assert_eq(merge__add(mg, 1, &trig, sizeof(trig)), 0);
	later = merge__abandon(mg, 100, &err);
	cr_assert_eq(err, 0);
	cr_expect_eq(later, 1);
	cr_assert_eq(merge__deliver(mg, UINT64_MAX), 0);
	cr_assert_eq(ngot, 3);
	cr_expect_eq(got[0].type, LX_REC_TRIGGER);
	/* The reports, at the end: CPU 0's three records, CPU 1's record and its report of 5. */
	cr_expect_eq(got[1].ts, 100);
	cr_expect_eq(got[2].ts, 100);
	cr_expect_eq(got[1].tid + got[2].tid, 3 + 6);
	cr_expect_eq(stats().abandoned, 4);
	cr_expect_eq(stats().lost, 9);
	cr_expect_eq(stats().staged, 0);
}

/* A slow consumer: takes the record, checks the order, and ends the round every 50th (as the
 * recorder's model does after its 10 ms). */
static uint64_t slow_last_ts, slow_n;

static int on_slow_record(void *ctx, const struct lx_rec *r, size_t size)
{
	cr_assert_geq(r->ts, slow_last_ts, "record %llu at %llu after %llu",
		      (unsigned long long)slow_n, (unsigned long long)r->ts,
		      (unsigned long long)slow_last_ts);
	slow_last_ts = r->ts;
	return ++slow_n % 50 ? 0 : -EAGAIN;
}

/* The capture's reader against a consumer far slower than its rings (the recorder behind on
 * a loaded machine): each round reads a ring until its CPU's queue is full and leaves the
 * rest there, which holds the watermark at the CPU's newest record read. The queues stay
 * within their bound all along, and every record comes out once, in time order, none dropped
 * (with 16 rings' worth of queues, a whole-machine recording behind all along held 44 MB in
 * them). */
Test(merge, a_reader_that_stops_at_a_full_queue_keeps_it_bounded_and_loses_nothing)
{
	enum { N = 30000, BOUND = 512 * 1024 };
	struct lx_user_log big = { .u = { .h = { .type = LX_REC_LOG } } };
	size_t pos[NCPU] = { 0 }, rounds = 0;
	struct merge_stats st;
	bool left = true;
	int err;

	merge__free(mg);
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .on_record = on_slow_record, .on_lost = on_lost,
					      .stage_bytes = BOUND });
	cr_assert_not_null(mg);
	slow_last_ts = slow_n = 0;
	while (left) {
		left = false;
		for (uint32_t cpu = 0; cpu < NCPU; cpu++) {
			/* CPU cpu's ring: records every NCPU ns, every 7th copied whole. */
			while (pos[cpu] < N && !merge__full(mg, cpu)) {
				uint64_t ts = 1000 + pos[cpu] * NCPU + cpu;

				if (pos[cpu] % 7 == 0) {
					big.u.h.ts = ts;
					big.u.h.cpu = (uint16_t)cpu;
					cr_assert_eq(merge__add(mg, cpu, &big, sizeof(big)), 0);
				} else {
					add(cpu, ts, (uint32_t)pos[cpu]);
				}
				pos[cpu]++;
			}
			merge__unread(mg, cpu, pos[cpu] < N);
			left = left || pos[cpu] < N;
		}
		merge__stats(mg, &st);
		cr_assert_leq(st.peak_bytes, BOUND + sizeof(big), "round %zu: a queue took %llu "
			      "bytes, bound %d", rounds, (unsigned long long)st.peak_bytes, BOUND);
		/* The watermark as the recorder computes it, long after the records' times. */
		err = merge__deliver(mg, merge__watermark(mg, 1ull << 40));

		cr_assert(err == 0 || err == -EAGAIN, "deliver: %d", err);
		rounds++;
	}
	while (merge__deliver(mg, UINT64_MAX) == -EAGAIN)
		;
	merge__stats(mg, &st);
	cr_expect_eq(st.dropped, 0);
	cr_expect_eq(st.lost, 0);
	cr_expect_eq(st.records, (uint64_t)N * NCPU);
	cr_expect_eq(slow_n, (uint64_t)N * NCPU);
	cr_expect_eq(st.staged, 0);
	cr_expect_gt(rounds, 100, "the consumer was not slower than the rings");
}

/* A queue is full once it holds read_ahead_ns of records, however few bytes: its reader leaves
 * the rest in the ring (what the consumer needs staged is what comes while it holds a record
 * for a moment, not seconds of a backlog). */
Test(merge, a_queue_holding_its_read_ahead_in_time_is_full)
{
	merge__free(mg);
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .on_record = on_record, .on_lost = on_lost,
					      .stage_bytes = 1 << 20, .read_ahead_ns = 100 });
	cr_assert_not_null(mg);
	add(1, 1000, 1);
	add(1, 1099, 2);
	cr_expect_not(merge__full(mg, 1));
	add(1, 1100, 3);
	cr_expect(merge__full(mg, 1), "100 ns of records staged, the bound");
	cr_expect_not(merge__full(mg, 0), "another CPU's queue is not full");
	/* Delivered up to 1099, the queue holds one record: not full. */
	cr_assert_eq(merge__deliver(mg, 1099), 0);
	cr_expect_not(merge__full(mg, 1));
}

/* A loss report is stamped when the counters are read, later than the CPU's newest record
 * read: a queue whose oldest is one spans no time, and its reader reads on (taken for full,
 * the ring was never read again and the report never delivered: the stop spun). */
Test(merge, a_queue_of_a_later_loss_report_is_not_full)
{
	merge__free(mg);
	mg = merge__new(&(struct merge_opts){ .sz = sizeof(struct merge_opts), .ncpus = NCPU,
					      .on_record = on_record, .on_lost = on_lost,
					      .stage_bytes = 1 << 20, .read_ahead_ns = 100 });
	cr_assert_not_null(mg);
	add(0, 1000, 1);
	cr_assert_eq(merge__deliver(mg, 1000), 0);
	cr_assert_eq(merge__add_lost(mg, 0, 5000, 3), 0);
	cr_expect_not(merge__full(mg, 0));
}
