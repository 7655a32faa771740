/* test_format_window.c - the flight recorder's window of batches: order, contents across the
 * wrap, the byte budget under random sizes, the time limit, oversize batches, sticky eviction
 * errors, memory handed back as batches leave, and the bytes a forked process sees. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/window.h"

/* Batch number i: its first 8 bytes hold i, the rest a pattern derived from it. */
static void fill(uint8_t *buf, size_t len, uint64_t i)
{
	for (size_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(i * 31 + k * 7);
	if (len >= 8)
		memcpy(buf, &i, 8);
}

static bool intact(const struct gt_window_batch *b, uint64_t i)
{
	uint8_t *want = malloc(b->len ? b->len : 1);
	bool ok;

	fill(want, b->len, i);
	ok = !memcmp(want, b->data, b->len);
	free(want);
	return ok;
}

struct seen {
	uint64_t next;		/* number of the batch the next eviction must carry */
	uint64_t count;
	int fail_at;		/* fail the eviction with this count, -1: never */
	bool bad;
};

static int on_evict(void *ctx, const struct gt_window_batch *b)
{
	struct seen *s = ctx;
	uint64_t i;

	memcpy(&i, b->data, 8);
	if (i != s->next || !intact(b, i) || b->first_ts != i * 10 || b->last_ts != i * 10 + 5)
		s->bad = true;
	s->next = i + 1;
	if ((int)s->count++ == s->fail_at)
		return -EIO;
	return 0;
}

static struct gt_window *new_window(size_t bytes, uint64_t span, struct seen *s)
{
	struct gt_window_opts o = { .sz = sizeof(o), .bytes = bytes, .span = span,
				    .evict = on_evict, .ctx = s };
	struct gt_window *w = gt_window__new(&o);

	cr_assert(w, "gt_window__new: %s", strerror(errno));
	return w;
}

/* Pushes batch i of len bytes, split into a header and a body at hlen. */
static int push(struct gt_window *w, uint64_t i, size_t len, size_t hlen)
{
	uint8_t *buf = malloc(len ? len : 1);
	int err;

	fill(buf, len, i);
	err = gt_window__push(w, (uint32_t)(i % 3), i * 10, i * 10 + 5, buf, hlen, buf + hlen,
			      len - hlen);
	free(buf);
	return err;
}

/* The held batches are i0, i0 + 1, ... up to the last pushed, intact; returns how many. */
static uint64_t check_held(const struct gt_window *w, uint64_t last)
{
	struct gt_window_batch b;
	uint64_t pos = 0, n = 0, prev = 0, i;

	while (gt_window__next(w, &pos, &b)) {
		memcpy(&i, b.data, 8);
		cr_assert(n == 0 || i == prev + 1, "batch %llu after %llu", (unsigned long long)i,
			  (unsigned long long)prev);
		cr_assert(intact(&b, i), "batch %llu damaged", (unsigned long long)i);
		cr_assert_eq(b.p, i % 3);
		prev = i;
		n++;
	}
	if (n)
		cr_assert_eq(prev, last);
	return n;
}

Test(format_window, refuses_bad_budgets)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t bad[] = { 0, 1, (size_t)page + 8 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gt_window_opts o = { .sz = sizeof(o), .bytes = bad[i] };

		errno = 0;
		cr_expect_null(gt_window__new(&o), "%zu", bad[i]);
		cr_expect_eq(errno, EINVAL);
	}
	cr_expect_null(gt_window__new(NULL));
}

Test(format_window, keeps_order_and_bytes_across_the_wrap)
{
	struct seen s = { .fail_at = -1 };
	struct gt_window *w = new_window(4096, 0, &s);
	struct gt_window_stats st;
	uint64_t i;

	/* 300-byte batches do not divide the ring: its end is padded again and again. */
	for (i = 0; i < 200; i++) {
		cr_assert_eq(push(w, i, 300, 17), 0);
		gt_window__stats(w, &st);
		cr_assert_leq(st.bytes, 4096);
		cr_assert_eq(st.evicted + st.batches, i + 1);
		cr_assert_eq(check_held(w, i), st.batches);
	}
	cr_assert_not(s.bad, "an evicted batch came out of order or damaged");
	cr_assert_eq(s.count, st.evicted);
	/* (24 + 300) rounded to 328 bytes each: 12 fit in 4096, 11 when the end is padded. */
	cr_assert(st.batches == 11 || st.batches == 12, "%llu batches held",
		  (unsigned long long)st.batches);
	gt_window__free(w);
}

Test(format_window, budget_holds_for_random_sizes)
{
	struct seen s = { .fail_at = -1 };
	size_t budget = 64 * 1024;
	struct gt_window *w = new_window(budget, 0, &s);
	struct gt_window_stats st;
	uint64_t evicted_bytes = 0;

	srand(7);
	for (uint64_t i = 0; i < 5000; i++) {
		size_t len = 8 + (size_t)rand() % 9000;

		cr_assert_eq(push(w, i, len, (size_t)rand() % 9), 0);
		gt_window__stats(w, &st);
		cr_assert_leq(st.bytes, budget);
		cr_assert_leq(st.peak_bytes, budget);
		/* A batch leaves only to make room: the held batches plus the new one would not
		 * fit without it. */
		cr_assert_geq(st.evicted_bytes, evicted_bytes);
		evicted_bytes = st.evicted_bytes;
		check_held(w, i);
	}
	cr_assert_not(s.bad);
	gt_window__free(w);
}

Test(format_window, time_limit_evicts_batches_ended_too_long_ago)
{
	struct seen s = { .fail_at = -1 };
	/* Room for far more than the limit keeps: only time evicts here. */
	struct gt_window *w = new_window(1024 * 1024, 100, &s);
	struct gt_window_batch b;
	uint64_t pos = 0;

	for (uint64_t i = 0; i < 100; i++)
		cr_assert_eq(push(w, i, 64, 10), 0);
	/* The newest ends at 995: batches ending before 895 are gone, 895 (batch 89) stays. */
	cr_assert(gt_window__next(w, &pos, &b));
	cr_expect_eq(b.last_ts, 895);
	cr_expect_eq(check_held(w, 99), 11);
	cr_expect_eq(s.count, 89);
	cr_assert_not(s.bad);
	gt_window__free(w);
}

Test(format_window, oversize_batch_empties_the_window_then_leaves)
{
	struct seen s = { .fail_at = -1 };
	struct gt_window *w = new_window(4096, 0, &s);
	struct gt_window_stats st;

	for (uint64_t i = 0; i < 5; i++)
		cr_assert_eq(push(w, i, 100, 10), 0);
	cr_assert_eq(push(w, 5, 10000, 100), 0);
	gt_window__stats(w, &st);
	cr_expect_eq(st.batches, 0);
	cr_expect_eq(st.oversize, 1);
	cr_expect_eq(s.count, 6);
	cr_assert_eq(push(w, 6, 100, 10), 0);
	cr_expect_eq(check_held(w, 6), 1);
	cr_assert_not(s.bad);
	gt_window__free(w);
}

Test(format_window, eviction_error_sticks)
{
	struct seen s = { .fail_at = 2 };
	struct gt_window *w = new_window(4096, 0, &s);
	int err = 0;
	uint64_t i;

	for (i = 0; i < 100 && !err; i++)
		err = push(w, i, 1000, 10);
	cr_assert_eq(err, -EIO);
	cr_expect_eq(s.count, 3);
	cr_expect_eq(push(w, i, 10, 1), -EIO);
	cr_expect_eq(s.count, 3, "nothing is evicted after the failure");
	gt_window__free(w);
}

Test(format_window, memory_follows_the_bytes_held)
{
	struct seen s = { .fail_at = -1 };
	size_t budget = 32 * 1024 * 1024;
	/* A 1-tick limit keeps about one batch: the ring's pages must not stay behind. */
	struct gt_window *w = new_window(budget, 1, &s);
	struct gt_window_stats st;

	for (uint64_t i = 0; i < 2000; i++)
		cr_assert_eq(push(w, i, 60000, 20), 0);
	gt_window__stats(w, &st);
	cr_expect_leq(st.batches, 2);
	/* Held bytes, the punch chunk (1 MiB) and a page on either side. */
	cr_expect_leq(st.resident, st.bytes + 1024 * 1024 + 2 * 4096,
		      "%llu bytes resident for %llu held", (unsigned long long)st.resident,
		      (unsigned long long)st.bytes);
	cr_expect_gt(st.resident, 0);
	cr_assert_not(s.bad);
	gt_window__free(w);
}

Test(format_window, invalid_push_is_refused_without_harm)
{
	struct seen s = { .fail_at = -1 };
	struct gt_window *w = new_window(4096, 0, &s);
	uint8_t buf[16] = { 0 };

	cr_expect_eq(gt_window__push(w, 0, 10, 5, buf, 8, buf, 8), -EINVAL);
	cr_expect_eq(gt_window__push(w, 0, 0, 5, NULL, 8, buf, 8), -EINVAL);
	cr_expect_eq(push(w, 0, 100, 10), 0);
	cr_expect_eq(check_held(w, 0), 1);
	gt_window__free(w);
}

/* Batches i0..i1 are what the window holds, intact. */
static bool holds(const struct gt_window *w, uint64_t i0, uint64_t i1)
{
	struct gt_window_batch b;
	uint64_t pos = 0, i, want = i0;

	while (gt_window__next(w, &pos, &b)) {
		memcpy(&i, b.data, 8);
		if (i != want++ || !intact(&b, i))
			return false;
	}
	return want == i1 + 1;
}

/* A process forked to write a file sees the window as it was at the fork, while this one
 * pushes on (and overwrites every byte of it). */
Test(format_window, a_fork_sees_the_window_as_it_was)
{
	struct seen s = { .fail_at = -1 };
	struct gt_window *w = new_window(64 * 1024, 0, &s);
	struct gt_window_batch b;
	uint64_t pos = 0, first;
	int go[2], status;
	pid_t pid;
	char c;

	for (uint64_t i = 0; i < 500; i++)
		cr_assert_eq(push(w, i, 1000, 10), 0);
	cr_assert(gt_window__next(w, &pos, &b));
	memcpy(&first, b.data, 8);
	cr_assert(holds(w, first, 499));
	cr_assert_eq(pipe(go), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(holds(w, first, 499) ? 0 : 1);
	}
	close(go[0]);
	for (uint64_t i = 500; i < 1000; i++)
		cr_assert_eq(push(w, i, 1000, 10), 0);
	cr_assert_not(holds(w, first, 499), "the window must have moved on here");
	cr_assert_eq(write(go[1], "x", 1), 1);
	close(go[1]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the forked process saw the window change under it (status %d)", status);
	gt_window__free(w);
}
