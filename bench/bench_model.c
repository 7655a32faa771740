/* bench_model.c - throughput (records/s) of the model, the daemon's hot path, on a generated
 * kernel record stream, written through gt_writer to /dev/null.
 *
 * The stream is generated up front so only the model and the writer are timed: NTHREADS
 * threads of a few processes on 4 CPUs that block in futex, read (a blocking syscall) or
 * epoll, are preempted, and wake each other, as sched_switch and sched_waking report them.
 * More threads than fit the caches shows what the thread table costs. The threads are
 * created by fork records (from no parent, in 8 processes) before the clock starts.
 *
 * usage: bench_model [RECORDS [NTHREADS [REPEATS]]]
 */
#include <asm/unistd_64.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/rnd.h"
#include "lib/clock.h"
#include "user/model/model.h"

#define NCPUS 4

union rec {
	struct lx_rec h;
	struct lx_switch sw;
	struct lx_wakeup wk;
};

static const int16_t blocks[] = { __NR_futex, __NR_futex, __NR_read, __NR_epoll_wait, -1 };

/* A consistent schedule: each CPU runs one thread or none; a thread that leaves a CPU either
 * stays runnable or sleeps until another CPU's thread wakes it. */
static size_t gen(union rec *v, size_t n, unsigned nthreads)
{
	enum { RUNNABLE, RUNNING, SLEEPING } *st = calloc(nthreads, sizeof(*st));
	int cur[NCPUS];
	uint64_t ts = 2000000000ull;
	size_t i = 0;

	for (int c = 0; c < NCPUS; c++)
		cur[c] = -1;
	while (i + 2 < n) {
		uint16_t c = (uint16_t)rnd(NCPUS);
		unsigned t = rnd(nthreads), r = rnd(100);
		union rec *x = &v[i];

		ts += 1 + rnd(2000);
		memset(x, 0, sizeof(*x));
		if (st[t] == SLEEPING && cur[c] >= 0 && r < 50) {
			x->wk = (struct lx_wakeup){ .h = { .ts = ts, .tid = 1000 + t, .cpu = c, .type = LX_REC_WAKEUP }, .target_cpu = c };
			st[t] = RUNNABLE;
			i++;
			continue;
		}
		if (st[t] != RUNNABLE)
			continue;
		x->sw.h = (struct lx_rec){ .ts = ts, .tid = cur[c] >= 0 ? 1000 + (uint32_t)cur[c] : 0,
					  .cpu = c, .type = LX_REC_SWITCH };
		x->sw.next_tid = 1000 + t;
		x->sw.prev_syscall = -1;
		if (cur[c] >= 0) {
			if (r < 70) {
				x->sw.prev_state = LX_PREV_SLEEP;
				x->sw.prev_syscall = blocks[rnd(5)];
				st[cur[c]] = SLEEPING;
			} else {
				st[cur[c]] = RUNNABLE;
			}
		}
		st[t] = RUNNING;
		cur[c] = (int)t;
		i++;
	}
	free(st);
	return i;
}

static size_t rec_size(const union rec *r)
{
	return r->h.type == LX_REC_SWITCH ? sizeof(r->sw) : sizeof(r->wk);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	unsigned nthreads = argc > 2 ? (unsigned)atoi(argv[2]) : 1000;
	int repeats = argc > 3 ? atoi(argv[3]) : 3;
	char proc[] = "/tmp/bench-model-proc-XXXXXX";
	union rec *v = calloc(n, sizeof(*v));
	double best = 0;

	if (!v || nthreads < 2 * NCPUS || !mkdtemp(proc)) {
		fprintf(stderr, "bench_model: bad arguments or out of memory\n");
		return 1;
	}
	n = gen(v, n, nthreads);
	for (int rep = 0; rep < repeats; rep++) {
		int fd = open("/dev/null", O_WRONLY);
		struct gt_writer *w = gt_writer__new(&(struct gt_writer_opts){
			.sz = sizeof(struct gt_writer_opts), .fd = fd, .nprocs = NCPUS + 1,
			.frequency = 1000000000 });
		struct model *m = w ? model__new(&(struct model_opts){
			.sz = sizeof(struct model_opts), .writer = w, .ncpus = NCPUS,
			.proc_root = proc }) : NULL;
		struct gt_writer_stats ws;
		double t0, dt;
		int err;

		if (!m || model__start(m, 1000000000ull)) {
			fprintf(stderr, "bench_model: cannot start the model\n");
			return 1;
		}
		for (unsigned t = 0; t < nthreads; t++) {
			struct lx_fork f = { .h = { .ts = 1000000000ull, .tid = 1000 + t, .type = LX_REC_FORK },
					     .child_pid = 1000 + t % 8 };

			model__record(m, &f.h, sizeof(f));
		}
		t0 = now_ns() / 1e9;
		for (size_t i = 0; i < n; i++) {
			err = model__record(m, &v[i].h, rec_size(&v[i]));
			if (err) {
				fprintf(stderr, "bench_model: record %zu: %s\n", i, strerror(-err));
				return 1;
			}
		}
		err = model__finish(m, v[n - 1].h.ts + 1);
		dt = now_ns() / 1e9 - t0;
		gt_writer__stats(w, &ws);
		printf("%zu records, %u threads: %.2f s, %.2f M records/s, %.2f M events/s, %.1f bytes/record%s\n",
		       n, nthreads, dt, n / dt / 1e6, ws.events / dt / 1e6, (double)ws.bytes / n,
		       err ? " (finish failed)" : "");
		if (n / dt > best)
			best = n / dt;
		model__free(m);
		gt_writer__free(w);
		close(fd);
	}
	printf("best: %.2f M records/s\n", best / 1e6);
	rmdir(proc);
	free(v);
	return 0;
}
