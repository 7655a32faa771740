/* test_format_writer.c - gt_writer through our own decoder: every event type round-trips,
 * events straddle batch boundaries at every size, tables deduplicate, errors stick, and a
 * write that fails part-way leaves the file on a batch boundary. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "format/varint.h"
#include "format/go119/writer.h"
#include "tests/lib/goparse.h"
#include "tests/unit/test_format_sim.h"

static struct gt_writer *new_writer(int fd, uint32_t nprocs, size_t batch_size)
{
	struct gt_writer_opts o = { .sz = sizeof(o), .fd = fd, .nprocs = nprocs,
				    .frequency = 1000000000, .batch_size = batch_size };
	struct gt_writer *w = gt_writer__new(&o);

	cr_assert(w, "gt_writer__new: %s", strerror(errno));
	return w;
}

static struct gt_trace *decode_buf(const uint8_t *buf, size_t len)
{
	struct gt_trace *t;
	char err[256];
	int ret;

	ret = gt_trace__parse(buf, len, &t, err, sizeof(err));
	cr_assert_eq(ret, 0, "decode: %s", err);
	return t;
}

static struct gt_trace *decode(int fd)
{
	struct gt_trace *t;
	size_t len;
	uint8_t *buf = sim_slurp_fd(fd, &len);

	cr_assert(buf);
	t = decode_buf(buf, len);
	free(buf);
	return t;
}

static uint64_t frame_stack(struct gt_writer *w, uint32_t p, uint64_t pc, const char *fn)
{
	struct gt_frame f[2] = { { pc, fn, "/a.c", 7 }, { 0x1000, "main", "/main.c", 1 } };
	uint64_t id = gt_writer__stack(w, p, f, 2);

	cr_assert(id, "stack: %s", strerror(errno));
	return id;
}

Test(format_writer, every_event_type_round_trips)
{
	int fd = sim_memfd();
	struct gt_writer *w = new_writer(fd, 2, 0);
	uint64_t stk = frame_stack(w, 0, 0x4000, "f"), sid = gt_writer__string(w, 1, "name");
	const struct gt_event *ev;
	struct gt_trace *t;
	unsigned n = 0, types[GT_EV_COUNT];
	uint64_t want[GT_EV_COUNT][GT_MAX_ARGS];
	int64_t procs[GT_EV_COUNT];
	uint64_t ts = 100;

	for (unsigned ty = 1; ty < GT_EV_COUNT; ty++) {
		uint64_t a[GT_MAX_ARGS];
		unsigned nv = gt_nvalues(ty);

		if (ty == GT_EV_TIMER_GOROUTINE) {	/* untimed: no event in the output */
			cr_expect_eq(gt_writer__event(w, 0, ts, ty, (uint64_t[]){ 5 }, 1), 0);
			continue;
		}
		if ((gt_specs[ty].flags & (GT_SPECIAL | GT_AVOID | GT_NO_TS)) ||
		    ty == GT_EV_USER_LOG || ty == GT_EV_CPU_SAMPLE) {
			cr_expect_eq(gt_writer__event(w, 0, ts, ty, (uint64_t[4]){ 0 }, nv), -EINVAL,
				     "%s accepted", gt_specs[ty].name);
			continue;
		}
		for (unsigned i = 0; i < nv; i++)
			a[i] = 1000 * ty + i;
		if (gt_specs[ty].flags & GT_STACK)
			a[nv - 1] = stk;
		if (ty == GT_EV_GO_CREATE)
			a[1] = stk;
		if (ty == GT_EV_GO_START_LABEL || ty == GT_EV_USER_TASK_CREATE || ty == GT_EV_USER_REGION)
			a[2] = sid;
		cr_assert_eq(gt_writer__event(w, ty % 2, ts += 3, ty, a, nv), 0, "%s", gt_specs[ty].name);
		memcpy(want[n], a, sizeof(a));
		procs[n] = ty % 2;
		types[n++] = ty;
	}
	cr_assert_eq(gt_writer__user_log(w, 1, ts += 3, 9, sid, stk, "msg", 3), 0);
	memcpy(want[n], (uint64_t[GT_MAX_ARGS]){ 9, sid, stk }, sizeof(want[n]));
	procs[n] = 1;
	types[n++] = GT_EV_USER_LOG;
	cr_assert_eq(gt_writer__cpu_sample(w, 0, ts += 3, -1, 0, stk), 0);
	memcpy(want[n], (uint64_t[GT_MAX_ARGS]){ ts, UINT64_MAX, 0, stk }, sizeof(want[n]));
	procs[n] = -1;
	types[n++] = GT_EV_CPU_SAMPLE;
	cr_assert_eq(gt_writer__flush(w), 0);
	gt_writer__free(w);

	t = decode(fd);
	cr_assert_eq(gt_trace__nevents(t), n);
	ev = gt_trace__events(t);
	for (unsigned i = 0; i < n; i++) {
		unsigned ty = types[i], nv = gt_nvalues(ty);

		cr_expect_eq(ev[i].type, ty, "event %u: %u, want %s", i, ev[i].type, gt_specs[ty].name);
		cr_expect_eq(ev[i].ts, 103 + 3 * i);
		cr_expect_eq(ev[i].nargs, nv);
		cr_expect_arr_eq(ev[i].args, want[i], nv * sizeof(uint64_t), "%s", gt_specs[ty].name);
		cr_expect_eq(ev[i].p, procs[i], "%s", gt_specs[ty].name);
		if (gt_specs[ty].flags & GT_STACK) {
			cr_expect_eq(ev[i].args[nv - 1], stk);
			cr_assert(ev[i].stack, "%s has no stack", gt_specs[ty].name);
			cr_expect_eq(ev[i].stack->n, 2);
			cr_expect_str_eq(ev[i].stack->frames[0].func, "f");
			cr_expect_str_eq(ev[i].stack->frames[1].file, "/main.c");
		}
	}
	cr_expect_eq(ev[n - 2].msg_len, 3);
	cr_expect_arr_eq(ev[n - 2].msg, "msg", 3);
	cr_expect_str_eq(gt_trace__string(t, sid), "name");
	gt_trace__free(t);
	close(fd);
}

/* Like Go's TestEventBatch: events of many sizes cross batch boundaries of many sizes. */
Test(format_writer, events_straddle_batches)
{
	for (size_t bsz = 128; bsz < 420; bsz += 7) {
		for (unsigned shift = 0; shift < 56; shift += 9) {
			int fd = sim_memfd();
			struct gt_writer *w = new_writer(fd, 1, bsz);
			const struct gt_event *ev;
			struct gt_trace *t;
			unsigned n = 200;

			for (unsigned i = 0; i < n; i++) {
				uint64_t a[3] = { (uint64_t)i << shift, i, 0 };
				enum gt_type ty = i % 3 ? GT_EV_HEAP_ALLOC : GT_EV_GC_SWEEP_DONE;

				cr_assert_eq(gt_writer__event(w, 0, 10 + ((uint64_t)i << shift), ty, a,
							      gt_nvalues(ty)), 0);
			}
			cr_assert_eq(gt_writer__flush(w), 0);
			gt_writer__free(w);
			t = decode(fd);
			cr_assert_eq(gt_trace__nevents(t), n);
			ev = gt_trace__events(t);
			for (unsigned i = 0; i < n; i++) {
				cr_assert_eq(ev[i].ts, 10 + ((uint64_t)i << shift), "bsz %zu shift %u", bsz, shift);
				cr_assert_eq(ev[i].args[0], (uint64_t)i << shift);
			}
			gt_trace__free(t);
			close(fd);
		}
	}
}

/* Over its table budget the writer forgets a stack unused for a generation: met again it is
 * defined again, under a new id; the old id stays valid for events, and both name the frames. */
Test(format_writer, forgotten_stacks_are_defined_again)
{
	struct gt_writer_opts o = { .sz = sizeof(o), .fd = sim_memfd(), .nprocs = 2,
				    .frequency = 1000000000, .table_budget = 2048 };
	struct gt_writer *w = gt_writer__new(&o);
	uint64_t first = frame_stack(w, 0, 0x4000, "f"), again;
	const struct gt_stack *a, *b;
	struct gt_writer_stats st;
	struct gt_trace *t;
	char fn[32];

	cr_assert(w);
	for (unsigned i = 0; i < 300; i++) {
		snprintf(fn, sizeof(fn), "g%u", i);
		frame_stack(w, 1, 0x5000 + i, fn);
	}
	gt_writer__stats(w, &st);
	cr_assert_gt(st.stacks_forgotten, 0);
	cr_assert_eq(gt_writer__cpu_sample(w, 1, 10, 1, 0, first), 0);
	again = frame_stack(w, 1, 0x4000, "f");
	cr_assert_gt(again, first);
	cr_assert_eq(gt_writer__cpu_sample(w, 0, 20, 0, 0, again), 0);
	cr_assert_eq(gt_writer__flush(w), 0);
	t = decode(o.fd);
	a = gt_trace__stack(t, first);
	b = gt_trace__stack(t, again);
	cr_assert(a && b);
	cr_assert_eq(a->n, 2);
	cr_assert_eq(b->n, 2);
	for (size_t i = 0; i < 2; i++) {
		cr_expect_eq(a->frames[i].pc, b->frames[i].pc);
		cr_expect_str_eq(a->frames[i].func, b->frames[i].func);
		cr_expect_str_eq(a->frames[i].file, b->frames[i].file);
	}
	gt_trace__free(t);
	gt_writer__free(w);
	close(o.fd);
}

/* A stack defined again at the end names every event that used it, before and after, on any
 * P, in our decoder and in Go 1.23's (Go 1.19's prints no stacks); both parsers accept it. The
 * new frame has a PC of its own: Go 1.23 keeps the first frame it reads for a PC. */
Test(format_writer, a_stack_defined_again_names_its_earlier_events)
{
	char path[64] = "/tmp/lxtrace-test-restack-XXXXXX", why[1200], *text = NULL;
	struct gt_frame named[2] = { { 0x4000000000004000ull, "jitted", "/tmp/perf-1.map", 0 },
				     { 0x1000, "main", "/main.c", 1 } };
	struct goparse_result r;
	const struct gt_stack *a;
	struct gt_writer *w;
	struct gt_trace *t;
	uint64_t s, other;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	w = new_writer(fd, 2, 0);
	s = frame_stack(w, 0, 0x4000, "[unknown] 0x4000");
	other = frame_stack(w, 1, 0x5000, "f");
	cr_assert_eq(gt_writer__cpu_sample(w, 0, 10, 0, 0, s), 0);
	cr_assert_eq(gt_writer__cpu_sample(w, 1, 20, 1, 0, s), 0);
	cr_assert_eq(gt_writer__cpu_sample(w, 1, 30, 1, 0, other), 0);
	cr_assert_eq(gt_writer__restack(w, 1, s, named, 2), 0);
	cr_expect_eq(gt_writer__restack(w, 1, other + 1, named, 2), -EINVAL, "an id never given");
	cr_assert_eq(gt_writer__flush(w), 0);
	t = decode(fd);
	a = gt_trace__stack(t, s);
	cr_assert(a && a->n == 2);
	cr_expect_str_eq(a->frames[0].func, "jitted");
	cr_expect_eq(a->frames[0].pc, named[0].pc);
	cr_expect_str_eq(gt_trace__stack(t, other)->frames[0].func, "f");
	gt_trace__free(t);
	gt_writer__free(w);
	close(fd);
	cr_expect(goparse_both_ok(path, why, sizeof(why)), "%s", why);
	cr_assert_eq(goparse_123_text(path, 1, &r, &text), 0);
	cr_expect(r.ok, "%s", r.error);
	cr_expect(text && !strstr(text, "[unknown] 0x4000"), "Go 1.23 shows the old frame:\n%s",
		  text);
	cr_expect(text && strstr(text, "jitted"), "Go 1.23 shows no new frame:\n%s", text);
	free(text);
	unlink(path);
}

Test(format_writer, strings_and_stacks_dedup)
{
	int fd = sim_memfd();
	struct gt_writer *w = new_writer(fd, 2, 0);
	struct gt_writer_stats st;
	uint64_t a = gt_writer__string(w, 0, "alpha"), b = gt_writer__string(w, 1, "beta");
	uint64_t pcs[2] = { 0x4000, 0x1000 };
	uint64_t s1 = frame_stack(w, 0, 0x4000, "f"), s2, s3;

	cr_expect_neq(a, 0);
	cr_expect_neq(a, b);
	cr_expect_eq(gt_writer__string(w, 1, "alpha"), a);
	cr_expect_eq(gt_writer__string(w, 0, "beta"), b);
	cr_expect_eq(gt_writer__string(w, 0, ""), 0);
	/* Same PCs, same stack, whatever the names: a PC means one frame. */
	s2 = frame_stack(w, 1, 0x4000, "g");
	s3 = frame_stack(w, 1, 0x4001, "f");
	cr_expect_eq(s2, s1);
	cr_expect_neq(s3, s1);
	cr_expect_eq(gt_writer__stack_find(w, pcs, 2), s1);
	pcs[0] = 0x5000;
	cr_expect_eq(gt_writer__stack_find(w, pcs, 2), 0);
	gt_writer__stats(w, &st);
	/* alpha, beta, f, /a.c, main, /main.c */
	cr_expect_eq(st.strings, 6);
	cr_expect_eq(st.stacks, 2);
	gt_writer__free(w);
	close(fd);
}

Test(format_writer, stack_too_big_is_refused)
{
	int fd = sim_memfd();
	struct gt_writer *w = new_writer(fd, 1, 0);
	struct gt_frame f[200];

	for (unsigned i = 0; i < 200; i++)
		f[i] = (struct gt_frame){ UINT64_MAX - i, "fn", "file", UINT64_MAX };
	cr_expect_eq(gt_writer__stack(w, 0, f, 200), 0);
	cr_expect_eq(errno, E2BIG);
	/* Not fatal: the writer goes on. */
	cr_expect_neq(gt_writer__stack(w, 0, f, 10), 0);
	cr_expect_eq(gt_writer__event(w, 0, 5, GT_EV_HEAP_ALLOC, (uint64_t[]){ 1 }, 1), 0);
	cr_expect_eq(gt_writer__flush(w), 0);
	gt_writer__free(w);
	close(fd);
}

Test(format_writer, bad_calls_are_einval)
{
	int fd = sim_memfd();
	struct gt_writer *w = new_writer(fd, 2, 0);
	uint64_t a[3] = { 1, 1, 99 };

	cr_expect_eq(gt_writer__event(w, 2, 10, GT_EV_HEAP_ALLOC, a, 1), -EINVAL);
	cr_expect_eq(gt_writer__event(w, 0, 10, GT_EV_HEAP_ALLOC, a, 2), -EINVAL);
	cr_expect_eq(gt_writer__event(w, 0, 10, GT_EV_GO_UNBLOCK, a, 3), -EINVAL, "undefined stack");
	cr_expect_eq(gt_writer__event(w, 0, 10, GT_EV_FUTILE_WAKEUP, a, 0), -EINVAL);
	cr_expect_eq(gt_writer__event(w, 0, 10, GT_EV_HEAP_ALLOC, a, 1), 0);
	cr_expect_eq(gt_writer__event(w, 0, 9, GT_EV_HEAP_ALLOC, a, 1), -EINVAL, "time went back");
	cr_expect_eq(gt_writer__flush(w), 0, "EINVAL is not sticky");
	gt_writer__free(w);
	close(fd);
}

Test(format_writer, new_fails_on_full_device)
{
	struct gt_writer_opts o = { .sz = sizeof(o), .nprocs = 1, .frequency = 1000000000 };

	o.fd = open("/dev/full", O_WRONLY);
	cr_assert(o.fd >= 0);
	cr_expect_null(gt_writer__new(&o));
	cr_expect_eq(errno, ENOSPC);
	close(o.fd);
}

/* A write error sticks: later calls return it and write nothing, so the file stays a prefix. */
Test(format_writer, write_error_sticks)
{
	int fd = sim_memfd(), full = open("/dev/full", O_WRONLY), out = sim_memfd();
	struct gt_writer *w = new_writer(fd, 2, 128);
	uint64_t a[1] = { 7 };
	int err = 0;
	size_t len;
	uint8_t *buf;

	cr_assert(full >= 0);
	cr_assert(dup2(full, fd) == fd);
	for (unsigned i = 0; i < 100000 && !err; i++)
		err = gt_writer__event(w, i % 2, 10 + i, GT_EV_HEAP_ALLOC, a, 1);
	cr_expect_eq(err, -ENOSPC);
	cr_assert(dup2(out, fd) == fd);	/* a healthy file now: nothing may reach it */
	cr_expect_eq(gt_writer__event(w, 0, 5000, GT_EV_HEAP_ALLOC, a, 1), -ENOSPC);
	cr_expect_eq(gt_writer__string(w, 0, "late"), 0);
	cr_expect_eq(errno, ENOSPC);
	cr_expect_eq(gt_writer__flush(w), -ENOSPC);
	gt_writer__free(w);
	buf = sim_slurp_fd(out, &len);
	cr_expect_eq(len, 0);
	free(buf);
	close(fd);
	close(out);
	close(full);
}

Test(format_writer, broken_pipe)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct gt_writer *w;
	int pfd[2], err = 0;
	uint64_t a[1] = { 7 };

	sigaction(SIGPIPE, &ign, NULL);
	cr_assert(!pipe(pfd));
	w = new_writer(pfd[1], 1, 0);
	close(pfd[0]);
	for (unsigned i = 0; i < 100 && !err; i++)
		err = gt_writer__event(w, 0, 10 + i, GT_EV_HEAP_ALLOC, a, 1);
	cr_expect_eq(err, 0, "buffered, nothing written yet");
	cr_expect_eq(gt_writer__flush(w), -EPIPE);
	cr_expect_eq(gt_writer__event(w, 0, 500, GT_EV_HEAP_ALLOC, a, 1), -EPIPE);
	gt_writer__free(w);
	close(pfd[1]);
}

/* Goroutine entries follow live goroutines: a long run of short-lived threads keeps working. */
Test(format_writer, many_short_goroutines)
{
	int fd = open("/dev/null", O_WRONLY);
	struct gt_writer *w = new_writer(fd, 2, 0);
	uint64_t ts = 10, stk = frame_stack(w, 0, 0x4000, "f");

	for (uint64_t g = 1; g < 200000; g++) {
		uint32_t p = (uint32_t)(g % 2);

		cr_assert_eq(gt_writer__event(w, p, ts++, GT_EV_GO_CREATE, (uint64_t[]){ g, stk, 0 }, 3), 0);
		cr_assert_eq(gt_writer__event(w, !p, ts++, GT_EV_GO_START, (uint64_t[]){ g, 1 }, 2), 0);
		cr_assert_eq(gt_writer__event(w, !p, ts++, GT_EV_GO_END, NULL, 0), 0);
	}
	cr_expect_eq(gt_writer__flush(w), 0);
	gt_writer__free(w);
	close(fd);
}

/* A regular file under a file-size limit: writes fail with EFBIG at the limit, the first of
 * them part-way through the staged batches. */
static int limited_file(char *path, size_t len, rlim_t limit)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct rlimit rl;
	int fd;

	snprintf(path, len, "/tmp/lxtrace-test-fsize-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	unlink(path);
	/* Each test runs in its own process: the limit and the ignored signal stay there. */
	sigaction(SIGXFSZ, &ign, NULL);
	cr_assert(!getrlimit(RLIMIT_FSIZE, &rl));
	rl.rlim_cur = limit;	/* the soft limit only, so that it can be lifted again */
	cr_assert(!setrlimit(RLIMIT_FSIZE, &rl), "setrlimit: %s", strerror(errno));
	return fd;
}

/* The Go parsers (and with views, both viewers) on a copy of buf written with the file-size
 * limit lifted. */
static void check_copy(const uint8_t *buf, size_t len, bool views, rlim_t limit)
{
	char copy[64] = "/tmp/lxtrace-test-cut-XXXXXX", why[1200];
	struct rlimit rl;
	int out;

	cr_assert(!getrlimit(RLIMIT_FSIZE, &rl));
	rl.rlim_cur = rl.rlim_max;
	cr_assert(!setrlimit(RLIMIT_FSIZE, &rl));
	out = mkstemp(copy);
	cr_assert(out >= 0);
	cr_assert_eq(write(out, buf, len), (ssize_t)len);
	close(out);
	cr_expect(goparse_both_ok(copy, why, sizeof(why)), "limit %ju: %s", (uintmax_t)limit, why);
	if (views)
		cr_expect(goparse_views_ok(copy, why, sizeof(why)), "limit %ju: %s",
			  (uintmax_t)limit, why);
	unlink(copy);
}

/* A write that fails part-way is taken back out: the file ends on a batch boundary, holds
 * exactly the bytes reported, and both Go parsers accept it (the disk-full case). */
Test(format_writer, failed_write_is_cut_back, .timeout = 120)
{
	static const rlim_t limits[] = { 70001, 100003, 150001 };

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct sim_opts o = { .ncpu = 3, .nthreads = 12, .steps = 40000, .seed = 5 + i,
				      .batch_size = 512 };
		struct sim_result res;
		struct gt_trace *t;
		struct stat st;
		char path[64];
		int fd = limited_file(path, sizeof(path), limits[i]);
		size_t len;
		uint8_t *buf;

		cr_assert_eq(sim_write(fd, &o, &res), -EFBIG, "limit %ju", (uintmax_t)limits[i]);
		cr_assert(!fstat(fd, &st));
		cr_expect_lt(st.st_size, (off_t)limits[i]);
		buf = sim_slurp_fd(fd, &len);
		cr_assert(buf);
		close(fd);
		/* Our decoder refuses a file that ends inside a record. */
		t = decode_buf(buf, len);
		cr_expect_gt(gt_trace__nevents(t), 0);
		gt_trace__free(t);
		check_copy(buf, len, false, limits[i]);
		free(buf);
	}
}

/* The writer's byte count is the file's size, and nothing is torn in a regular file. */
Test(format_writer, cut_back_file_matches_stats)
{
	char path[64];
	int fd = limited_file(path, sizeof(path), 3001), err = 0;
	struct gt_writer *w = new_writer(fd, 2, 1000);
	struct gt_writer_stats ws;
	struct stat st;

	for (unsigned i = 0; i < 100000 && !err; i++)
		err = gt_writer__event(w, i % 2, 10 + i, GT_EV_HEAP_ALLOC, (uint64_t[]){ i }, 1);
	cr_expect_eq(err, -EFBIG);
	gt_writer__stats(w, &ws);
	cr_assert(!fstat(fd, &st));
	cr_expect_eq((uint64_t)st.st_size, ws.bytes);
	cr_expect_eq(ws.torn, 0);
	cr_expect_eq(ws.torn_err, 0);
	gt_writer__free(w);
	close(fd);
}

/* A pipe cannot take bytes back: a write that fails part-way says how much of it is torn. */
Test(format_writer, pipe_reports_torn_bytes)
{
	struct gt_writer_stats ws;
	struct gt_writer *w;
	int pfd[2], err = 0;

	cr_assert(!pipe(pfd));
	cr_assert(fcntl(pfd[1], F_SETPIPE_SZ, 4096) >= 0);
	w = new_writer(pfd[1], 1, 64 * 1024);
	/* Nobody reads: the first full batch fills the pipe and the rest fails with EAGAIN. */
	cr_assert(!fcntl(pfd[1], F_SETFL, O_NONBLOCK));
	for (unsigned i = 0; i < 100000 && !err; i++)
		err = gt_writer__event(w, 0, 10 + i, GT_EV_HEAP_ALLOC, (uint64_t[]){ i }, 1);
	cr_expect_eq(err, -EAGAIN);
	gt_writer__stats(w, &ws);
	cr_expect_eq(ws.bytes, GT_HEADER_LEN);
	cr_expect_gt(ws.torn, 0);
	cr_expect_leq(ws.torn, 4096 - GT_HEADER_LEN, "%ju torn", (uintmax_t)ws.torn);
	cr_expect_eq(ws.torn_err, -ESPIPE);
	gt_writer__free(w);
	close(pfd[0]);
	close(pfd[1]);
}

static void lift_fsize_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_FSIZE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_FSIZE, &rl);
	}
}

/* What the recorder does on a full disk: the file a failed writer leaves is closed after the
 * last batch that reached it (running goroutines, Ps, GC phases ended there), with a note
 * counting what never reached it; both parsers and both viewers take it. Only the batches the
 * file holds count: others were only queued or staged when the write failed. */
Test(format_writer, failed_writer_seals_its_file, .timeout = 300)
{
	static const rlim_t limits[] = { 70001, 90001, 130003 };

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct sim_opts o = { .ncpu = 3, .nthreads = 12, .steps = 40000, .seed = 40 + i,
				      .batch_size = 256 + 512 * (i % 2), .gc = i != 1, .seal = true,
				      .before_seal = lift_fsize_limit };
		char path[64];
		int fd = limited_file(path, sizeof(path), limits[i]);
		struct sim_result res;
		struct gt_trace *t;
		size_t len, notes = 0;
		uint8_t *buf;

		cr_assert_eq(sim_write(fd, &o, &res), -EFBIG, "limit %ju", (uintmax_t)limits[i]);
		cr_assert_eq(res.seal_err, 0, "seal: %s", strerror(-res.seal_err));
		cr_expect_gt(res.lost, 0);
		buf = sim_slurp_fd(fd, &len);
		cr_assert(buf);
		close(fd);
		t = decode_buf(buf, len);
		for (size_t j = 0; j < gt_trace__nevents(t); j++) {
			const struct gt_event *e = &gt_trace__events(t)[j];
			const char *key = e->type == GT_EV_USER_LOG ? gt_trace__string(t, e->args[1]) : NULL;

			notes += key && !strcmp(key, "sim.lost") && e->msg_len &&
				 strtoull(e->msg, NULL, 10) == res.lost;
		}
		cr_expect_eq(notes, 1, "limit %ju: the note is there %zu times", (uintmax_t)limits[i],
			     notes);
		gt_trace__free(t);
		check_copy(buf, len, true, limits[i]);
		free(buf);
	}
}

struct collected {
	uint8_t *buf;
	size_t len;
	unsigned batches;
	bool bad;
};

static int collect(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr, size_t hlen,
		   const uint8_t *body, size_t blen)
{
	struct collected *c = ctx;
	uint64_t p = 0, base = 0;
	size_t n;

	/* The batch header names the P and the base time the info says. */
	n = gt_varint_get(hdr + 1, hdr + hlen, &p);
	if (hdr[0] != gt_header_byte(GT_EV_BATCH) || !n || p != b->p ||
	    !gt_varint_get(hdr + 1 + n, hdr + hlen, &base) || base != b->first_ts ||
	    b->last_ts < b->first_ts)
		c->bad = true;
	c->buf = realloc(c->buf, c->len + hlen + blen);
	memcpy(c->buf + c->len, hdr, hlen);
	memcpy(c->buf + c->len + hlen, body, blen);
	c->len += hlen + blen;
	c->batches++;
	return 0;
}

static int refuse(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr, size_t hlen,
		  const uint8_t *body, size_t blen)
{
	return -ENOMEM;
}

/* The flight recorder's output: the same batches the file would get, one by one, with their
 * P and times; no header. A sink's error fails the writer like a write error. */
Test(format_writer, sink_gets_the_batches_the_file_would)
{
	struct sim_opts o = { .ncpu = 3, .nthreads = 8, .steps = 4000, .seed = 3, .batch_size = 256 };
	struct collected c = { 0 };
	struct sim_result res;
	size_t len;
	uint8_t *file;
	int fd = sim_memfd();

	cr_assert_eq(sim_write(fd, &o, &res), 0);
	file = sim_slurp_fd(fd, &len);
	o.sink = collect;
	o.sink_ctx = &c;
	cr_assert_eq(sim_write(-1, &o, &res), 0);
	cr_assert_not(c.bad, "a batch's info disagrees with its header");
	cr_assert_gt(c.batches, 50);
	cr_assert_eq(c.len + GT_HEADER_LEN, len);
	cr_assert(!memcmp(file + GT_HEADER_LEN, c.buf, c.len));
	free(file);
	free(c.buf);
	close(fd);

	o.sink = refuse;
	cr_assert_eq(sim_write(-1, &o, &res), -ENOMEM);
}
