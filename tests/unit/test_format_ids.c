/* test_format_ids.c - repair and cut of files that name far-out ids: memory follows what a
 * file holds (its Ps, goroutines and stacks), never the largest id it names, and what they
 * write is a file the reader takes whole, or nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/go119/cut.h"
#include "format/go119/repair.h"
#include "format/go119/state.h"
#include "tests/lib/go119bytes.h"

TestSuite(format_ids, .timeout = 120);

/* The resident memory now, in KiB. */
static long rss_kib(void)
{
	long size, pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &size, &pages) != 2)
		pages = -1;
	if (f)
		fclose(f);
	return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Runs repair (cut when `cut`) of b in a child; its peak resident memory above what it had
 * at the start, in KiB, whether it wrote a file the reader and the tracker take whole, and
 * its verdict (*ret, with the reason on stderr). */
static long grows_by(const struct go119bytes *b, bool cut, bool *whole, int *ret)
{
	int pipefd[2];
	long out[3] = { -1, 0, 0 };
	pid_t pid;

	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (!pid) {
		int in = go119b_memfd(b), o = memfd_create("out", MFD_CLOEXEC);
		long before = rss_kib();
		struct gt_repair_report rep;
		struct rusage ru;
		char err[256];
		int res = cut ? gt_cut__file(in, o, 0, UINT64_MAX, NULL, NULL, err, sizeof(err)) :
				gt_repair(in, o, &rep, err, sizeof(err));
		struct gt_reader *r;
		struct gt_state *s = gt_state__new();
		struct gt_state_stats st;

		getrusage(RUSAGE_SELF, &ru);
		out[0] = ru.ru_maxrss - before;
		lseek(o, 0, SEEK_SET);
		r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts),
							     .fd = o });
		if (!res && r && s && !gt_state__replay(s, r, UINT64_MAX)) {
			gt_state__stats(s, &st);
			out[1] = !st.problems;
		}
		if (res)
			fprintf(stderr, "%s: %s\n", cut ? "cut" : "repair", err);
		out[2] = res;
		if (write(pipefd[1], out, sizeof(out)) != sizeof(out))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	cr_assert_eq(read(pipefd[0], out, sizeof(out)), (ssize_t)sizeof(out));
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	*whole = out[1];
	*ret = (int)out[2];
	return out[0];
}

/* 40 bytes, one batch on P 999999 with a P that stays started (repair closes it): Go's
 * parsers and dump take it. Repair and cut made a writer of 64 KiB a P up to it, 4.1 GB. */
Test(format_ids, one_batch_on_p_999999_costs_one_p)
{
	struct go119bytes b;
	bool whole;
	long kib;
	int ret;

	go119b_init(&b);
	go119b_batch(&b, 999999, 100);
	go119b_frequency(&b, 1000000000);
	V1B(&b, GT_EV_PROC_START, 1, 7);
	V1B(&b, GT_EV_HEAP_ALLOC, 1, 5);
	kib = grows_by(&b, false, &whole, &ret);
	cr_expect(whole && kib < 32768, "repair: %ld KiB more, whole %d", kib, whole);
	kib = grows_by(&b, true, &whole, &ret);
	cr_expect(whole && kib < 32768, "cut: %ld KiB more, whole %d", kib, whole);
}

/* A file whose stack ids reach 2^32 - 1, with a goroutine left running: repair's own stack
 * would take id 2^32, which Go 1.23 reads as 32 bits (and dump refuses). It refuses instead,
 * writing nothing; cut, which numbers its stacks anew, writes a whole file. */
Test(format_ids, stack_ids_at_2_32_leave_repair_none)
{
	struct go119bytes b;
	bool whole;
	int ret;

	go119b_init(&b);
	go119b_batch(&b, 0, 100);
	go119b_frequency(&b, 1000000000);
	go119b_string(&b, 1, "f");
	go119b_stack1(&b, UINT32_MAX, 0x10, 1, 1, 1);
	V1B(&b, GT_EV_GOMAXPROCS, 1, 1, UINT32_MAX);
	V1B(&b, GT_EV_PROC_START, 1, 7);
	V1B(&b, GT_EV_GO_CREATE, 1, 1ull << 62, UINT32_MAX, UINT32_MAX);
	V1B(&b, GT_EV_GO_START, 1, 1ull << 62, 1);
	grows_by(&b, false, &whole, &ret);
	cr_expect(ret < 0 && !whole, "repair: %d, whole %d", ret, whole);
	grows_by(&b, true, &whole, &ret);
	cr_expect(!ret && whole, "cut: %d, whole %d", ret, whole);
}
