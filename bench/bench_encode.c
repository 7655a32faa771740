/* bench_encode.c - encoding throughput (events/s) and size (bytes/event) of gt_writer for a
 * realistic scheduler mix, written to /dev/null.
 *
 * The mix is generated up front so only encoding is timed: 3 Ps (plus none idle), threads
 * with tids 1000..100000, starts, preemptions, blocks, wakeups (often from another CPU, the
 * case that makes batches wait on each other), syscalls that block and that do not, a few
 * dozen distinct stacks, ns timestamps a microsecond or so apart.
 *
 * usage: bench_encode [EVENTS [REPEATS [NPROCS]]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/rnd.h"
#include "format/writer.h"
#include "lib/clock.h"

struct rec {
	uint64_t ts;
	uint64_t args[3];
	uint32_t p;
	uint8_t type, nargs;
};

enum { DEAD, RUNNABLE, RUNNING, WAITING, SYSCALL };

struct thr {
	uint64_t tid, seq;
	int st;
};

#define NTHREADS 256
#define NSTACKS 48

static size_t gen(struct rec *r, size_t n, unsigned nprocs)
{
	static struct thr th[NTHREADS];
	uint64_t now = 5000000000000ULL;
	int *cur = calloc(nprocs, sizeof(*cur));
	size_t i = 0;

	for (int t = 0; t < NTHREADS; t++)
		th[t] = (struct thr){ 1000 + (uint64_t)t * 389, 1, RUNNABLE };
	for (unsigned p = 0; p < nprocs; p++)
		cur[p] = -1;
	while (i < n) {
		uint32_t p = rnd(nprocs);
		int t = rnd(NTHREADS);
		struct rec *e = &r[i];

		now += 200 + rnd(1800);
		*e = (struct rec){ .ts = now, .p = p };
		if (cur[p] < 0) {
			if (th[t].st == RUNNABLE) {
				e->type = GT_EV_GO_START, e->nargs = 2;
				e->args[0] = th[t].tid, e->args[1] = th[t].seq++;
				th[t].st = RUNNING, cur[p] = t;
			} else if (th[t].st == SYSCALL) {
				e->type = GT_EV_GO_SYSEXIT, e->nargs = 3;
				e->args[0] = th[t].tid, e->args[1] = th[t].seq++;
				th[t].st = RUNNABLE;
			} else if (th[t].st == WAITING) {	/* woken from an interrupt */
				e->type = GT_EV_GO_UNBLOCK, e->nargs = 3;
				e->args[0] = th[t].tid, e->args[1] = th[t].seq++, e->args[2] = 0;
				th[t].st = RUNNABLE;
			} else {
				continue;
			}
			i++;
			continue;
		}
		switch (rnd(10)) {
		case 0:
		case 1:
		case 2:
			e->type = GT_EV_GO_PREEMPT, e->nargs = 1, e->args[0] = 1 + rnd(NSTACKS);
			th[cur[p]].st = RUNNABLE, cur[p] = -1;
			break;
		case 3:
		case 4:
			e->type = rnd(2) ? GT_EV_GO_BLOCK_SYNC : GT_EV_GO_BLOCK_NET, e->nargs = 1;
			e->args[0] = 1 + rnd(NSTACKS);
			th[cur[p]].st = WAITING, cur[p] = -1;
			break;
		case 5:
		case 6:
			if (th[t].st != WAITING)
				continue;
			e->type = GT_EV_GO_UNBLOCK, e->nargs = 3;
			e->args[0] = th[t].tid, e->args[1] = th[t].seq++, e->args[2] = 1 + rnd(NSTACKS);
			th[t].st = RUNNABLE;
			break;
		case 7:
		case 8:
			e->type = GT_EV_GO_SYSCALL, e->nargs = 1, e->args[0] = 1 + rnd(NSTACKS);
			break;
		default:
			e->type = GT_EV_GO_SYSBLOCK, e->nargs = 0;
			th[cur[p]].st = SYSCALL, cur[p] = -1;
		}
		i++;
	}
	free(cur);
	return i;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 5000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	unsigned nprocs = argc > 3 ? (unsigned)atoi(argv[3]) : 3;
	struct rec *r = malloc(n * sizeof(*r));
	double *rate = calloc((size_t)reps, sizeof(*rate)), bpe = 0;
	struct gt_writer_stats st = { 0 };
	int fd = open("/dev/null", O_WRONLY);

	if (!r || !rate || fd < 0 || reps < 1 || !nprocs) {
		fprintf(stderr, "bench_encode: setup failed\n");
		return 1;
	}
	gen(r, n, nprocs);
	for (int k = 0; k < reps; k++) {
		struct gt_writer_opts o = { .sz = sizeof(o), .fd = fd, .nprocs = nprocs,
					    .frequency = 1000000000 };
		struct gt_writer *w = gt_writer__new(&o);
		double t0;
		int err = 0;

		if (!w) {
			fprintf(stderr, "bench_encode: writer: %s\n", strerror(errno));
			return 1;
		}
		for (unsigned s = 1; s <= NSTACKS; s++) {
			struct gt_frame f[3] = {
				{ 0x401000 + s * 64, "main.worker", "/src/main.go", s },
				{ 0x402000 + s * 64, "main.loop", "/src/main.go", 100 + s },
				{ 0x7f0000000000ULL + s, "comm", "[tid 1]", 1 },
			};

			if (gt_writer__stack(w, s % nprocs, f, 1 + s % 3) != s) {
				fprintf(stderr, "bench_encode: stack %u not defined\n", s);
				return 1;
			}
		}
		t0 = now_ns() / 1e9;
		for (size_t i = 0; i < n && !err; i++)
			err = gt_writer__event(w, r[i].p, r[i].ts, r[i].type, r[i].args, r[i].nargs);
		if (!err)
			err = gt_writer__flush(w);
		rate[k] = (double)n / (now_ns() / 1e9 - t0);
		if (err) {
			fprintf(stderr, "bench_encode: event: %s\n", strerror(-err));
			return 1;
		}
		gt_writer__stats(w, &st);
		bpe = (double)st.bytes / (double)n;
		gt_writer__free(w);
	}
	qsort(rate, (size_t)reps, sizeof(*rate), cmp_double);
	printf("bench_encode: %zu events, %u Ps, %d runs\n", n, nprocs, reps);
	printf("  throughput: median %.1f M events/s (min %.1f .. max %.1f)\n",
	       rate[reps / 2] / 1e6, rate[0] / 1e6, rate[reps - 1] / 1e6);
	printf("  size: %.2f bytes/event, %llu batches (%.0f events/batch)\n", bpe,
	       (unsigned long long)st.batches, (double)n / (double)st.batches);
	free(r);
	free(rate);
	close(fd);
	return 0;
}
