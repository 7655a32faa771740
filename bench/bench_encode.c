/* bench_encode.c - encoding throughput (events/s) and size (bytes/event) of both encoders for
 * a realistic scheduler mix, written to /dev/null: gt_writer (Go 1.19) and go123_writer (Go
 * go1.23, format/go123/writer.h).
 *
 * The mix is generated up front so only encoding is timed: 3 Ps (plus none idle), threads
 * with tids 1000..100000, starts, preemptions, blocks, wakeups (often from another CPU, the
 * case that makes batches wait on each other), syscalls that block and that do not, a few
 * dozen distinct stacks, ns timestamps a microsecond or so apart. The new encoder gets the
 * same mix as what the model would say of it (a start is `run`, a GoSysCall a syscall's
 * begin and end, a GoSysBlock a syscall's begin and leaving the CPU in it...), so its "per
 * record" figures compare the formats on the same facts; it writes more events for them
 * (a switch is four, a syscall two) and its own events/s counts those.
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
#include "format/go123/writer.h"
#include "format/go119/writer.h"
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

struct result {
	double rate;		/* records per second, median of the runs */
	double rate_min, rate_max;
	uint64_t bytes, events, batches;
};

static struct gt_frame frames[NSTACKS + 1][3];
static struct go123_stack stacks[NSTACKS + 1];

static void make_stacks(void)
{
	for (unsigned s = 1; s <= NSTACKS; s++) {
		frames[s][0] = (struct gt_frame){ 0x401000 + s * 64, "main.worker", "/src/main.go", s };
		frames[s][1] = (struct gt_frame){ 0x402000 + s * 64, "main.loop", "/src/main.go",
						  100 + s };
		frames[s][2] = (struct gt_frame){ 0x7f0000000000ULL + s, "comm", "[tid 1]", 1 };
		stacks[s] = (struct go123_stack){ frames[s], 1 + s % 3 };
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summarize(struct result *res, double *rate, int reps)
{
	qsort(rate, (size_t)reps, sizeof(*rate), cmp_double);
	res->rate = rate[reps / 2];
	res->rate_min = rate[0];
	res->rate_max = rate[reps - 1];
}

static int run_119(const struct rec *r, size_t n, int reps, unsigned nprocs, int fd,
		   double *rate, struct result *res)
{
	struct gt_writer_stats st = { 0 };

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
			if (gt_writer__stack(w, s % nprocs, frames[s], 1 + s % 3) != s) {
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
		gt_writer__free(w);
	}
	summarize(res, rate, reps);
	res->bytes = st.bytes, res->events = n, res->batches = st.batches;
	return 0;
}

/* Thread states of the replay, by the mix's tid (1000 + 389 i). */
enum { GO123_UNSEEN, GO123_SEEN, GO123_IN_SYSCALL };

/* One record of the mix as the model would say it to the new encoder. */
static int replay(struct go123_writer *w, const struct rec *e, uint64_t *cur, uint8_t *th)
{
	static const char *const reasons[] = { "futex", "poll" };
	uint64_t tid = cur[e->p], t = e->args[0];
	uint8_t *ts;
	int err;

	switch (e->type) {
	case GT_EV_GO_START:
		ts = &th[(t - 1000) / 389];
		if (*ts == GO123_UNSEEN && (err = go123_writer__thread_found(w, e->ts, t, GO123_G_RUNNABLE,
									-1, NULL, NULL)))
			return err;
		if ((err = go123_writer__run(w, e->ts, e->p, t)))
			return err;
		cur[e->p] = t;
		if (*ts == GO123_IN_SYSCALL && (err = go123_writer__syscall_end(w, e->ts, t)))
			return err;
		*ts = GO123_SEEN;
		return 0;
	case GT_EV_GO_PREEMPT:
		cur[e->p] = 0;
		return go123_writer__leave(w, e->ts, tid, GO123_PREEMPTED, NULL, &stacks[t]);
	case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_NET:
		cur[e->p] = 0;
		return go123_writer__leave(w, e->ts, tid, GO123_BLOCKED,
					 reasons[e->type == GT_EV_GO_BLOCK_NET], &stacks[t]);
	case GT_EV_GO_UNBLOCK:
		return go123_writer__wake(w, e->ts, tid, t, e->args[2] ? &stacks[e->args[2]] : NULL);
	case GT_EV_GO_SYSCALL:
		err = go123_writer__syscall_begin(w, e->ts, tid, &stacks[t]);
		return err ? err : go123_writer__syscall_end(w, e->ts, tid);
	case GT_EV_GO_SYSBLOCK:
		cur[e->p] = 0;
		th[(tid - 1000) / 389] = GO123_IN_SYSCALL;
		err = go123_writer__syscall_begin(w, e->ts, tid, NULL);
		return err ? err : go123_writer__leave(w, e->ts, tid, GO123_BLOCKED, NULL, NULL);
	case GT_EV_GO_SYSEXIT:	/* the thread returns from its syscall once it runs */
		return 0;
	}
	return -EINVAL;
}

static int run_go123(const struct rec *r, size_t n, int reps, unsigned nprocs, int fd,
		  double *rate, struct result *res)
{
	struct go123_writer_stats st = { 0 };

	for (int k = 0; k < reps; k++) {
		struct go123_writer_opts o = { .sz = sizeof(o), .fd = fd, .nprocs = nprocs,
					     .frequency = 1000000000 };
		struct go123_writer *w = go123_writer__new(&o);
		uint64_t *cur = calloc(nprocs, sizeof(*cur));
		uint8_t *th = calloc(NTHREADS, 1);
		double t0;
		int err = 0;

		if (!w || !cur || !th) {
			fprintf(stderr, "bench_encode: go123 writer: %s\n", strerror(errno));
			return 1;
		}
		t0 = now_ns() / 1e9;
		for (size_t i = 0; i < n && !err; i++)
			err = replay(w, &r[i], cur, th);
		if (!err)
			err = go123_writer__flush(w);
		rate[k] = (double)n / (now_ns() / 1e9 - t0);
		if (err) {
			fprintf(stderr, "bench_encode: go123: %s\n", strerror(-err));
			return 1;
		}
		go123_writer__stats(w, &st);
		go123_writer__free(w);
		free(cur);
		free(th);
	}
	summarize(res, rate, reps);
	res->bytes = st.bytes, res->events = st.events, res->batches = st.batches;
	return 0;
}

static void print(const char *name, const struct result *res, size_t n)
{
	double per_ev = (double)res->events / (double)n;

	printf("%s\n", name);
	printf("  throughput: median %.1f M records/s (min %.1f .. max %.1f), %.1f M events/s\n",
	       res->rate / 1e6, res->rate_min / 1e6, res->rate_max / 1e6,
	       res->rate * per_ev / 1e6);
	printf("  size: %.2f bytes/record, %.2f bytes/event (%.2f events/record), %llu batches "
	       "(%.0f events/batch)\n", (double)res->bytes / (double)n,
	       (double)res->bytes / (double)res->events, per_ev,
	       (unsigned long long)res->batches, (double)res->events / (double)res->batches);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 5000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	unsigned nprocs = argc > 3 ? (unsigned)atoi(argv[3]) : 3;
	struct rec *r = malloc(n * sizeof(*r));
	double *rate = calloc((size_t)reps, sizeof(*rate));
	struct result r119, rgo123;
	int fd = open("/dev/null", O_WRONLY);

	if (!r || !rate || fd < 0 || reps < 1 || !nprocs) {
		fprintf(stderr, "bench_encode: setup failed\n");
		return 1;
	}
	n = gen(r, n, nprocs);
	make_stacks();
	if (run_119(r, n, reps, nprocs, fd, rate, &r119) ||
	    run_go123(r, n, reps, nprocs, fd, rate, &rgo123))
		return 1;
	printf("bench_encode: %zu records, %u Ps, %d runs\n", n, nprocs, reps);
	print("go 1.19 (format/go119/writer.h):", &r119, n);
	print("go 1.23 (format/go123/writer.h):", &rgo123, n);
	free(r);
	free(rate);
	close(fd);
	return 0;
}
