/* test_format_go123.c - traces written through the go1.23 encoder (format/go123/writer.h) must
 * pass Go 1.23's reader (`trace -d=1`, and the raw split of `-d=2`), each generation-boundary
 * prefix too, and its events must say what was written: reasons, syscalls, wakeups, a thread
 * blocked since before the start with its stack, samples, user annotations, 50 threads each
 * a row of Go 1.23's thread view. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go123/restack.h"
#include "format/go123/writer.h"
#include "format/varint.h"
#include "tests/lib/goparse.h"
#include "tests/lib/httpget.h"
#include "tests/lib/viewer.h"

#define FREQ 1000000000ull
/* Tiny generations: the stories below span several. */
#define GEN_TICKS 20000

static char path[64], cut_path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/lxtrace-test-go123-%d.trace", getpid());
	snprintf(cut_path, sizeof(cut_path), "/tmp/lxtrace-test-go123-%d-cut.trace", getpid());
}

static void teardown(void)
{
	if (getenv("LXTRACE_TEST_KEEP"))
		return;
	unlink(path);
	unlink(cut_path);
}

TestSuite(format_go123, .init = setup, .fini = teardown);

static struct go123_writer *open_writer_opts(int *fd, struct go123_writer_opts o)
{
	struct go123_writer *w;

	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(*fd >= 0);
	o.fd = *fd;
	w = go123_writer__new(&o);
	cr_assert(w, "go123_writer__new: %s", strerror(errno));
	return w;
}

static struct go123_writer *open_writer(int *fd, uint32_t nprocs)
{
	return open_writer_opts(fd, (struct go123_writer_opts){ .sz = sizeof(struct go123_writer_opts),
				.nprocs = nprocs, .frequency = FREQ, .gen_ticks = GEN_TICKS });
}

#define OK(call)                                                                            \
	do {                                                                                \
		int err_ = (call);                                                          \
		cr_assert_eq(err_, 0, "%s: %s", #call, strerror(-err_));                    \
	} while (0)

/* What Go 1.23 prints at level 1 or 2 for f; the reader must accept it. */
static char *parse(const char *f, int level)
{
	struct goparse_result r;
	char *text;
	int err = goparse_123_text(f, level, &r, &text);

	cr_assert_eq(err, 0, "goparse: %s", strerror(-err));
	cr_assert(r.ok, "go 1.23 trace -d=%d %s: %s", level, f, r.error);
	return text;
}

/* Lines of text holding every one of the strings of a NULL-ended list. */
static size_t lines_with(const char *text, ...)
{
	size_t n = 0;

	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		bool all = true;
		va_list ap;

		va_start(ap, text);
		for (const char *s = va_arg(ap, const char *); s && all; s = va_arg(ap, const char *)) {
			const char *hit = memmem(l, len, s, strlen(s));

			all = hit != NULL;
		}
		va_end(ap);
		n += all;
		l += len + (end != NULL);
	}
	return n;
}

static const struct gt_frame pipe_frames[] = {
	{ 0xffffffff81000100, "pipe_read", "[kernel]", 0 },
	{ 0x401200, "reader_loop", "/src/reader.c", 42 },
};
static const struct gt_frame futex_frames[] = {
	{ 0xffffffff81000200, "futex_wait", "[kernel]", 0 },
	{ 0x401300, "lock_wait", "/src/lock.c", 7 },
};
static const struct go123_stack pipe_stk = { pipe_frames, 2 }, futex_stk = { futex_frames, 2 };

/* Thread ids of the story. */
enum { A = 100, B = 101, C = 102, D = 103, E = 104, F = 105 };
#define ROUNDS 30

/* Two CPUs. A and B run on them at the start; C waits in pipe_read since before it; D sleeps in
 * a syscall off any CPU; E is runnable. Each round: A makes a quick syscall and blocks on a
 * futex; E runs, wakes A, annotates, samples, sets the counter, and sleeps in a syscall, its
 * CPU stolen by A; B wakes C, which runs and blocks in "pipe read"; E comes back from its
 * syscall. Round 3 A creates F, which runs and exits; round 5 D returns and exits. */
static uint64_t write_story(struct go123_writer *w)
{
	uint64_t ts = 1000;
	char msg[32];

	OK(go123_writer__thread_found(w, ts, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__thread_found(w, ts, B, GO123_G_RUNNING, 1, NULL, NULL));
	OK(go123_writer__thread_found(w, ts, C, GO123_G_WAITING, -1, "pipe read", &pipe_stk));
	OK(go123_writer__thread_found(w, ts, D, GO123_G_SYSCALL, -1, NULL, &pipe_stk));
	OK(go123_writer__thread_found(w, ts, E, GO123_G_RUNNABLE, -1, NULL, NULL));
	for (int r = 0; r < ROUNDS; r++) {
		OK(go123_writer__syscall_begin(w, ts += 500, A, &pipe_stk));
		OK(go123_writer__syscall_end(w, ts += 300, A));
		OK(go123_writer__leave(w, ts += 200, A, GO123_BLOCKED, "futex", &futex_stk));
		OK(go123_writer__run(w, ts += 100, 0, E));
		OK(go123_writer__wake(w, ts += 100, E, A, &futex_stk));
		OK(go123_writer__task_begin(w, ts += 50, E, 1 + (uint64_t)r, 0, "request", NULL));
		OK(go123_writer__region(w, ts += 50, E, true, 1 + (uint64_t)r, "parse", NULL));
		snprintf(msg, sizeof(msg), "round %d", r);
		OK(go123_writer__log(w, ts += 50, E, 1 + (uint64_t)r, "progress", msg, strlen(msg),
				   NULL));
		OK(go123_writer__region(w, ts += 50, E, false, 1 + (uint64_t)r, "parse", NULL));
		OK(go123_writer__task_end(w, ts += 50, E, 1 + (uint64_t)r, NULL));
		OK(go123_writer__heap(w, ts += 10, E, 4096 * (uint64_t)(r + 1)));
		OK(go123_writer__cpu_sample(w, ts += 10, E, 0, &futex_stk));
		OK(go123_writer__syscall_begin(w, ts += 100, E, &pipe_stk));
		OK(go123_writer__leave(w, ts += 100, E, GO123_BLOCKED, "not written", NULL));
		OK(go123_writer__run(w, ts += 100, 0, A));	/* steals CPU 0 from E's syscall */
		OK(go123_writer__wake(w, ts += 100, B, C, NULL));
		OK(go123_writer__leave(w, ts += 100, B, GO123_PREEMPTED, NULL, NULL));
		OK(go123_writer__run(w, ts += 100, 1, C));
		OK(go123_writer__leave(w, ts += 300, C, GO123_BLOCKED, "pipe read", &pipe_stk));
		if (r == 3) {
			OK(go123_writer__run(w, ts += 100, 1, B));
			OK(go123_writer__thread_new(w, ts += 10, B, F, &futex_stk, &pipe_stk));
			OK(go123_writer__leave(w, ts += 100, B, GO123_PREEMPTED, NULL, NULL));
			OK(go123_writer__run(w, ts += 100, 1, F));
			OK(go123_writer__thread_exit(w, ts += 100, F));
		}
		if (r == 5) {
			OK(go123_writer__run(w, ts += 100, 1, D));
			OK(go123_writer__syscall_end(w, ts += 100, D));
			OK(go123_writer__thread_exit(w, ts += 100, D));
		}
		OK(go123_writer__run(w, ts += 100, 1, E));	/* back from its syscall */
		OK(go123_writer__syscall_end(w, ts += 200, E));
		OK(go123_writer__leave(w, ts += 100, E, GO123_PREEMPTED, NULL, NULL));
		OK(go123_writer__run(w, ts += 100, 1, B));
	}
	OK(go123_writer__flush(w));
	return ts;
}

Test(format_go123, story_parses_and_says_what_was_written)
{
	struct go123_writer_stats st;
	char *text, *raw, want[64];
	int fd;
	struct go123_writer *w = open_writer(&fd, 2);

	write_story(w);
	go123_writer__stats(w, &st);
	cr_assert_gt(st.generations, 3, "the story spans several generations");
	text = parse(path, 1);
	cr_assert_eq(lines_with(text, "Sync", NULL), st.generations);
	/* Blocks with their reasons, and only what was written: E's block inside its syscall is
	 * not a block. */
	cr_assert_eq(lines_with(text, "GoID=100 Running->Waiting", "Reason=\"futex\"", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "GoID=102 Running->Waiting", "Reason=\"pipe read\"", NULL),
		     ROUNDS);
	cr_assert_eq(lines_with(text, "not written", NULL), 0);
	cr_assert_eq(lines_with(text, "Running->Waiting", NULL), 2 * ROUNDS);
	cr_assert_eq(lines_with(text, "GoID=101 Running->Runnable", "Reason=\"preempted\"", NULL),
		     ROUNDS + 1);
	/* Wakeups on the waker's thread. */
	cr_assert_eq(lines_with(text, "M=104 ", "GoID=100 Waiting->Runnable", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=101 ", "GoID=102 Waiting->Runnable", NULL), ROUNDS);
	/* Syscalls: A's quick one returns on its CPU, E's sleeps, loses CPU 0 to A and comes
	 * back on CPU 1; D was in one since before the start. */
	cr_assert_eq(lines_with(text, "M=100 ", "GoID=100 Running->Syscall", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=100 ", "GoID=100 Syscall->Running", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=104 ", "GoID=104 Running->Syscall", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=104 ", "GoID=104 Syscall->Runnable", NULL), ROUNDS);
	/* A steal is the P's end seen from the thief's M, which holds no P yet. */
	cr_assert_eq(lines_with(text, "M=100 P=-1 ", "ProcID=0 Running->Idle", NULL), ROUNDS,
		     "A steals CPU 0 from E's syscall");
	cr_assert_eq(lines_with(text, "GoID=103 Undetermined->Syscall", NULL), 1);
	cr_assert_eq(lines_with(text, "M=103 ", "GoID=103 Syscall->Runnable", NULL), 1);
	/* The thread blocked since before the start, with the stack it waits at. */
	cr_assert(strstr(text, "GoID=102 Undetermined->Waiting\nStack=\n\tpipe_read @ 0xffffffff81000100\n"
			       "\t\t[kernel]:0\n\treader_loop @ 0x401200\n\t\t/src/reader.c:42\n"),
		  "C's first state and stack");
	/* Creation and exits. */
	cr_assert_eq(lines_with(text, "M=101 ", "GoID=105 NotExist->Runnable", NULL), 1);
	cr_assert_eq(lines_with(text, "M=105 ", "GoID=105 Running->NotExist", NULL), 1);
	cr_assert_eq(lines_with(text, "M=103 ", "GoID=103 Running->NotExist", NULL), 1);
	/* Samples with their thread, annotations, the counter. */
	cr_assert_eq(lines_with(text, "M=104 P=0 G=104 StackSample", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=104 ", "TaskBegin", "Type=\"request\"", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=104 ", "TaskEnd", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=104 ", "RegionBegin", "Type=\"parse\"", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "M=104 ", "RegionEnd", "Type=\"parse\"", NULL), ROUNDS);
	cr_assert_eq(lines_with(text, "Log", "Category=\"progress\"", "Message=\"round 29\"", NULL),
		     1);
	snprintf(want, sizeof(want), "Value=Uint64(%d)", 4096 * ROUNDS);
	cr_assert_eq(lines_with(text, "Metric", want, NULL), 1);
	free(text);

	/* The raw split: the same batches and events as written. */
	raw = parse(path, 2);
	cr_assert_eq(lines_with(raw, "EventBatch gen=", NULL), st.batches);
	cr_assert_eq(lines_with(raw, "Frequency freq=1000000000", NULL), st.generations);
	cr_assert_eq(lines_with(raw, "GoBlock dt=", NULL), 2 * ROUNDS);
	cr_assert_eq(lines_with(raw, "ProcSteal dt=", "m=104", NULL), ROUNDS);
	cr_assert_eq(lines_with(raw, "CPUSample time=", NULL), ROUNDS);
	cr_assert_eq(lines_with(raw, "GoStatusStack dt=", "g=102", NULL), 1);
	free(raw);
	/* And Go 1.23's viewer draws it: proc and thread timelines, goroutines, tasks, regions. */
	struct goparse_result vr;

	cr_assert_eq(goparse_123_views(path, &vr), 0);
	cr_assert(vr.ok, "go 1.23 viewer: %s", vr.error);
	go123_writer__free(w);
	close(fd);
}

/* pipe_stk named again: its user frame now from a perf map, with a PC of its own. */
static const struct gt_frame pipe_named[] = {
	{ 0xffffffff81000100, "pipe_read", "[kernel]", 0 },
	{ 0x1000000000401200, "long Hot.leaf(long)", "/tmp/perf-1.map", 0 },
};

static const struct gt_frame *name_pipe(void *ctx, const uint64_t *pcs, size_t n)
{
	(void)ctx;
	return n == 2 && pcs[0] == pipe_frames[0].pc && pcs[1] == pipe_frames[1].pc ? pipe_named :
		NULL;
}

/* The recorder's JIT frames named at its stop reach a go1.23 file by a copy of it: every
 * generation's entry of the stack is written with the new frames and their new strings, which
 * Go 1.23 reads for every event of the stack; the other stacks stay. */
Test(format_go123, a_copy_names_a_stack_in_every_generation)
{
	struct go123_restack_stats rs;
	struct go123_writer_stats st;
	char *before, *after, err[256] = "";
	int fd, out;
	struct go123_writer *w = open_writer(&fd, 2);

	write_story(w);
	go123_writer__stats(w, &st);
	go123_writer__free(w);
	before = parse(path, 1);
	out = open(cut_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(out >= 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	OK(go123_restack__copy(fd, out, name_pipe, NULL, &rs, err, sizeof(err)));
	close(out);
	close(fd);
	after = parse(cut_path, 1);
	cr_expect_eq(rs.generations, st.generations);
	cr_expect_gt(rs.stacks, 0);
	cr_expect_eq(rs.strings, 2 * rs.stacks, "two new strings in each generation that names it");
	cr_expect_gt(lines_with(before, "\treader_loop @ 0x401200", NULL), ROUNDS);
	cr_expect_eq(lines_with(after, "\treader_loop @", NULL), 0);
	cr_expect_eq(lines_with(after, "\tlong Hot.leaf(long) @ 0x1000000000401200", NULL),
		     lines_with(before, "\treader_loop @ 0x401200", NULL));
	cr_expect_eq(lines_with(after, "\t\t/tmp/perf-1.map:0", NULL),
		     lines_with(before, "\treader_loop @ 0x401200", NULL));
	cr_expect_eq(lines_with(after, "\tlock_wait @ 0x401300", NULL),
		     lines_with(before, "\tlock_wait @ 0x401300", NULL));
	free(before);
	free(after);
}

/* Offsets in buf where a generation ends (its last batch's end), in file order. */
static size_t gen_ends(const uint8_t *buf, size_t len, size_t *ends, size_t max)
{
	size_t off = GO123_HEADER_LEN, n = 0;
	uint64_t cur = 0;

	cr_assert(len >= GO123_HEADER_LEN && !memcmp(buf, GO123_HEADER, GO123_HEADER_LEN));
	while (off < len) {
		uint64_t v[4];
		size_t at = off + 1;

		cr_assert_eq(buf[off], GO123_EV_BATCH);
		for (int i = 0; i < 4; i++) {
			size_t k = gt_varint_get(buf + at, buf + len, &v[i]);

			cr_assert(k);
			at += k;
		}
		if (cur && v[0] != cur) {
			cr_assert_eq(v[0], cur + 1, "generations in order");
			cr_assert_lt(n, max);
			ends[n++] = off;
		}
		cur = v[0];
		off = at + v[3];
		cr_assert_leq(off, len);
	}
	cr_assert_lt(n, max);
	ends[n++] = len;
	return n;
}

static uint8_t *slurp(int fd, size_t *len)
{
	struct stat sb;
	uint8_t *buf;

	cr_assert(!fstat(fd, &sb));
	*len = (size_t)sb.st_size;
	buf = malloc(*len + 1);
	cr_assert(buf);
	cr_assert_eq(pread(fd, buf, *len, 0), (ssize_t)*len);
	return buf;
}

static void write_prefix(const uint8_t *buf, size_t len)
{
	int fd = open(cut_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void write_window(const uint8_t *buf, size_t from, size_t to)
{
	int fd = open(cut_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, GO123_HEADER_LEN), GO123_HEADER_LEN);
	cr_assert_eq(write(fd, buf + from, to - from), (ssize_t)(to - from));
	close(fd);
}

/* Every prefix ending on a generation boundary of the story as w writes it parses; so does
 * every run of whole generations after the header: each restates what it needs. */
static void check_prefixes(struct go123_writer *w, int fd)
{
	size_t len, ends[64], n;
	uint8_t *buf;
	struct go123_writer_stats st;

	write_story(w);
	go123_writer__stats(w, &st);
	buf = slurp(fd, &len);
	n = gen_ends(buf, len, ends, 64);
	cr_assert_eq(n, st.generations);
	for (size_t i = 0; i < n; i++) {
		char *text;

		write_prefix(buf, ends[i]);
		text = parse(cut_path, 1);
		cr_assert_eq(lines_with(text, "Sync", NULL), i + 1, "prefix of %zu generations", i + 1);
		free(text);
	}
	for (size_t i = 1; i < n; i++) {
		char *text;
		size_t last = i + 1 + (i % 3) < n ? i + 1 + (i % 3) : n - 1;

		write_window(buf, ends[i - 1], ends[last]);
		text = parse(cut_path, 1);
		cr_assert_eq(lines_with(text, "Sync", NULL), last - i + 1,
			     "generations %zu to %zu", i + 1, last + 1);
		free(text);
	}
	free(buf);
}

Test(format_go123, every_generation_prefix_parses)
{
	int fd;
	struct go123_writer *w = open_writer(&fd, 2);

	check_prefixes(w, fd);
	go123_writer__free(w);
	close(fd);
}

/* Batches of a few events (the smallest size the writer takes): each M writes many in a
 * generation, as they fill, and they parse as well. */
Test(format_go123, small_batches)
{
	struct go123_writer_opts o = { .sz = sizeof(o), .nprocs = 2, .frequency = FREQ,
				     .gen_ticks = 100 * GEN_TICKS };
	int fd;
	struct go123_writer *w = open_writer_opts(&fd, o);
	struct go123_writer_stats big, small;

	write_story(w);
	go123_writer__stats(w, &big);
	go123_writer__free(w);
	close(fd);
	o.batch_size = 1;
	w = open_writer_opts(&fd, o);
	check_prefixes(w, fd);
	go123_writer__stats(w, &small);
	cr_assert_eq(small.events, big.events);
	cr_assert_gt(small.batches, 3 * big.batches, "%llu batches, %llu with the default size",
		     (unsigned long long)small.batches, (unsigned long long)big.batches);
	go123_writer__free(w);
	close(fd);
}

/* What a sink took: the generations' bytes one after another, and each one's times. */
struct taken {
	uint8_t *data;
	size_t len;
	size_t n;
	uint64_t gen[64], first[64], last[64], ends[64];
};

static int take(void *ctx, const struct go123_generation *g)
{
	struct taken *t = ctx;

	cr_assert_lt(t->n, 64);
	t->data = realloc(t->data, t->len + g->len);
	cr_assert(t->data);
	memcpy(t->data + t->len, g->data, g->len);
	t->len += g->len;
	t->gen[t->n] = g->gen;
	t->first[t->n] = g->first_ts;
	t->last[t->n] = g->last_ts;
	t->ends[t->n++] = GO123_HEADER_LEN + t->len;
	return 0;
}

/* A sink takes the very generations the file would hold, each whole when it ends, with the
 * times of its first and last call: what a window of generations needs to keep the latest. */
Test(format_go123, sink_takes_the_files_generations)
{
	struct go123_writer_opts o = { .sz = sizeof(o), .nprocs = 2, .frequency = FREQ,
				     .gen_ticks = GEN_TICKS };
	struct taken t = { 0 };
	struct go123_writer_stats st;
	size_t len, ends[64], n;
	uint8_t *file;
	int fd;
	struct go123_writer *w = open_writer_opts(&fd, o);

	write_story(w);
	file = slurp(fd, &len);
	n = gen_ends(file, len, ends, 64);
	go123_writer__free(w);
	close(fd);
	o.fd = -1;
	o.sink = take;
	o.sink_ctx = &t;
	w = go123_writer__new(&o);
	cr_assert(w, "go123_writer__new: %s", strerror(errno));
	write_story(w);
	go123_writer__stats(w, &st);
	cr_assert_eq(t.n, n);
	cr_assert_eq(st.generations, n);
	cr_assert_eq(st.bytes, t.len, "a sink's bytes are the generations' alone");
	cr_assert_eq(GO123_HEADER_LEN + t.len, len);
	cr_assert(!memcmp(file + GO123_HEADER_LEN, t.data, t.len));
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(t.ends[i], ends[i], "generation %zu ends where the file's does", i + 1);
		cr_assert_eq(t.gen[i], i + 1);
		cr_assert_leq(t.first[i], t.last[i]);
		cr_assert_leq(t.last[i] - t.first[i], GEN_TICKS);
		if (i)
			cr_assert_gt(t.first[i], t.last[i - 1]);
	}
	go123_writer__free(w);
	free(t.data);
	free(file);
}

/* A sink's error fails the writer as a write error does: the generation is lost, counted. */
static int refuse(void *ctx, const struct go123_generation *g)
{
	(void)ctx;
	(void)g;
	return -ENOSPC;
}

Test(format_go123, sink_error_fails_the_writer)
{
	struct go123_writer_opts o = { .sz = sizeof(o), .fd = -1, .nprocs = 1, .frequency = FREQ,
				     .gen_ticks = GEN_TICKS, .sink = refuse };
	struct go123_writer *w = go123_writer__new(&o);
	struct go123_writer_stats st;

	cr_assert(w, "go123_writer__new: %s", strerror(errno));
	OK(go123_writer__thread_found(w, 1000, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__leave(w, 2000, A, GO123_PREEMPTED, NULL, NULL));
	cr_assert_eq(go123_writer__flush(w), -ENOSPC);
	cr_assert_eq(go123_writer__run(w, 3000, 0, A), -ENOSPC);
	go123_writer__stats(w, &st);
	cr_assert_eq(st.generations, 0);
	cr_assert_eq(st.bytes, 0);
	cr_assert_eq(st.torn, 0);
	cr_assert_gt(st.lost, 0);
	go123_writer__free(w);
}

/* A generation that holds its budget of bytes ends however short it is. */
Test(format_go123, generations_bounded_by_bytes)
{
	int fd;
	struct go123_writer *w = open_writer_opts(&fd, (struct go123_writer_opts){
		.sz = sizeof(struct go123_writer_opts), .nprocs = 2, .frequency = FREQ,
		.gen_ticks = 1000 * FREQ, .gen_bytes = 1500 });
	struct go123_writer_stats st;

	check_prefixes(w, fd);
	go123_writer__stats(w, &st);
	cr_assert_gt(st.generations, 8, "by bytes alone: %llu", (unsigned long long)st.generations);
	go123_writer__free(w);
	close(fd);
}

/* Strings and stacks past the parser's limits are cut, and counted. */
Test(format_go123, cuts_to_the_limits)
{
	static struct gt_frame deep[GO123_MAX_FRAMES + 5];
	struct go123_stack stk = { deep, GO123_MAX_FRAMES + 5 };
	char value[GO123_MAX_STRING + 100], *text;
	struct go123_writer_stats st;
	int fd;
	struct go123_writer *w = open_writer(&fd, 1);

	for (size_t i = 0; i < stk.n; i++)
		deep[i] = (struct gt_frame){ 0x1000 + i, "f", "/f.c", i };
	memset(value, 'x', sizeof(value));
	OK(go123_writer__thread_found(w, 1000, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__log(w, 1100, A, 0, "k", value, sizeof(value), &stk));
	OK(go123_writer__flush(w));
	go123_writer__stats(w, &st);
	cr_assert_eq(st.cut, 2);
	text = parse(path, 1);
	cr_assert_eq(lines_with(text, "Log", "Category=\"k\"", NULL), 1);
	cr_assert_eq(lines_with(text, "\tf @ 0x", NULL), GO123_MAX_FRAMES);
	free(text);
	go123_writer__free(w);
	close(fd);
}

/* Runs of generations from the middle of the file, alone after the header, parse. */
static void check_windows(int fd)
{
	size_t len, ends[128], n;
	uint8_t *buf = slurp(fd, &len);

	n = gen_ends(buf, len, ends, 128);
	for (size_t i = 1; i + 1 < n; i += 4) {
		write_window(buf, ends[i - 1], ends[i + 1]);
		free(parse(cut_path, 1));
	}
	free(buf);
}

/* Go 1.23's thread view of the file has a row "Thread TID" for each of the n threads 1000..,
 * and no other row named so (its own rows are GC, Network, Timers, Syscalls). */
static void check_thread_rows(int n)
{
	char why[256], want[96], *body;
	struct viewer *v = viewer__start("1.23", path, why, sizeof(why));
	size_t rows = 0;

	cr_assert(v, "viewer: %s", why);
	body = viewer__get(v, "/jsontrace?view=thread", http_now_ms() + 120000, why, sizeof(why));
	cr_assert(body, "/jsontrace?view=thread: %s", why);
	for (int i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "\"tid\":%d,\"args\":{\"name\":\"Thread %d\"}", 1000 + i,
			 1000 + i);
		cr_assert(strstr(body, want), "no row for thread %d", 1000 + i);
	}
	for (const char *p = body; (p = strstr(p, "\"name\":\"Thread ")); p++)
		rows++;
	cr_assert_eq(rows, (size_t)n);
	free(body);
	viewer__stop(v);
}

/* 50 threads on 2 CPUs, at random but valid: each blocks, wakes, makes syscalls quick and
 * sleeping, samples, execs, exits and is born again (the same tid), over many generations, so
 * every state a thread can be in meets a generation's start. Every thread is a row (an M) of
 * its own, and each block the encoder took is one with its reason, on its M. */
#define NT 50
static void random_threads(unsigned seed)
{
	static const char *const reasons[] = { "futex", "pipe read", "poll", "nanosleep" };
	enum { DEAD, WAIT, READY, RUN, SYS, SYS_OFF } st[NT];
	unsigned blocks[NT] = { 0 }, lives[NT] = { 0 };
	int on[2] = { -1, -1 }, fd;
	struct go123_writer *w = open_writer(&fd, 2);
	struct go123_writer_stats ws;
	struct goparse_result vr;
	uint64_t ts = 1000;
	char *text, want[64];

	for (int i = 0; i < NT; i++) {
		st[i] = i % 2 ? WAIT : READY;
		OK(go123_writer__thread_found(w, ts, 1000 + (uint64_t)i,
					    st[i] == WAIT ? GO123_G_WAITING : GO123_G_RUNNABLE, -1,
					    NULL, &pipe_stk));
	}
	for (int step = 0; step < 6000; step++) {
		int c = (int)(rand_r(&seed) % 2), i = (int)(rand_r(&seed) % NT), j;
		uint64_t tid = 1000 + (uint64_t)i;

		ts += 50 + rand_r(&seed) % 200;
		if (on[c] < 0) {
			if (st[i] == READY || st[i] == SYS_OFF) {
				OK(go123_writer__run(w, ts, (uint32_t)c, tid));
				on[c] = i;
				st[i] = st[i] == READY ? RUN : SYS;
			}
			continue;
		}
		i = on[c], tid = 1000 + (uint64_t)i;
		j = (int)(rand_r(&seed) % NT);
		switch (rand_r(&seed) % 9) {
		case 0:
			if (st[i] == SYS) {
				OK(go123_writer__syscall_end(w, ts, tid));
				st[i] = RUN;
				break;
			}
			OK(go123_writer__leave(w, ts, tid, GO123_BLOCKED, reasons[blocks[i] % 4], NULL));
			blocks[i]++;
			st[i] = WAIT, on[c] = -1;
			break;
		case 1:
			if (st[i] == SYS) {
				OK(go123_writer__leave(w, ts, tid, GO123_BLOCKED, NULL, NULL));
				st[i] = SYS_OFF, on[c] = -1;
				break;
			}
			OK(go123_writer__leave(w, ts, tid, GO123_PREEMPTED, NULL, NULL));
			st[i] = READY, on[c] = -1;
			break;
		case 2:
		case 3:
			if (st[j] == DEAD)
				break;
			OK(go123_writer__wake(w, ts, tid, 1000 + (uint64_t)j, NULL));
			if (st[j] == WAIT)
				st[j] = READY;
			break;
		case 4:
			if (st[i] == RUN) {
				OK(go123_writer__syscall_begin(w, ts, tid, &futex_stk));
				st[i] = SYS;
			}
			break;
		case 5:
			OK(go123_writer__cpu_sample(w, ts, tid, (uint32_t)c, &futex_stk));
			break;
		case 6:
			if (rand_r(&seed) % 4)
				break;
			lives[i]++;
			OK(go123_writer__exec(w, ts, tid, (uint64_t)lives[i] << 32 | tid, &futex_stk,
					    &pipe_stk));
			break;
		case 7:
			if (st[j] != DEAD)
				break;
			lives[j] = 0;
			OK(go123_writer__thread_new(w, ts, tid, 1000 + (uint64_t)j, &futex_stk, NULL));
			st[j] = READY;
			break;
		default:
			if (rand_r(&seed) % 8)
				break;
			OK(go123_writer__thread_exit(w, ts, tid));
			st[i] = DEAD, on[c] = -1;
		}
	}
	OK(go123_writer__flush(w));
	go123_writer__stats(w, &ws);
	cr_assert_gt(ws.generations, 20);
	/* The reader breaks ties of time in a Go map's order, which changes from run to run: a
	 * file that depends on it fails some runs only (§18.4). */
	for (int run = 0; run < 4; run++)
		free(parse(path, 1));
	text = parse(path, 1);
	for (int i = 0; i < NT; i++) {
		snprintf(want, sizeof(want), "M=%d ", 1000 + i);
		cr_assert_gt(lines_with(text, want, NULL), 0, "thread %d has a row", 1000 + i);
		cr_assert_eq(lines_with(text, want, "Running->Waiting", NULL), blocks[i],
			     "blocks of %d (seed %u)", 1000 + i, seed);
	}
	cr_assert_eq(lines_with(text, "Sync", NULL), ws.generations);
	free(text);
	check_windows(fd);
	cr_assert_eq(goparse_123_views(path, &vr), 0);
	cr_assert(vr.ok, "go 1.23 viewer: %s", vr.error);
	check_thread_rows(NT);
	go123_writer__free(w);
	close(fd);
}

Test(format_go123, fifty_threads_seed_7)
{
	random_threads(7);
}

Test(format_go123, fifty_threads_seed_8)
{
	random_threads(8);
}

Test(format_go123, fifty_threads_seed_9)
{
	random_threads(9);
}

/* A thread first seen after the first generation cannot be stated: it is born in a syscall on
 * its own M and brought to its state. */
Test(format_go123, threads_found_late)
{
	int fd;
	struct go123_writer *w = open_writer(&fd, 4);
	char *text;

	OK(go123_writer__thread_found(w, 1000, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__thread_found(w, 1000, 106, GO123_G_SYSCALL, 3, NULL, &pipe_stk));
	OK(go123_writer__flush(w));
	cr_assert_eq(go123_writer__generation(w), 2);
	OK(go123_writer__thread_found(w, 2000, B, GO123_G_RUNNING, 1, NULL, NULL));
	OK(go123_writer__thread_found(w, 2000, C, GO123_G_WAITING, -1, "futex", &futex_stk));
	OK(go123_writer__thread_found(w, 2000, D, GO123_G_SYSCALL, -1, NULL, NULL));
	OK(go123_writer__thread_found(w, 2000, E, GO123_G_RUNNABLE, -1, NULL, NULL));
	OK(go123_writer__thread_found(w, 2000, F, GO123_G_SYSCALL, 2, NULL, NULL));
	OK(go123_writer__wake(w, 3000, A, C, NULL));
	OK(go123_writer__leave(w, 3100, B, GO123_PREEMPTED, NULL, NULL));
	OK(go123_writer__run(w, 3200, 1, C));
	OK(go123_writer__syscall_end(w, 3300, F));
	OK(go123_writer__run(w, 3400, 3, E));	/* steals CPU 3 from 106's syscall */
	OK(go123_writer__flush(w));
	text = parse(path, 1);
	cr_assert_eq(lines_with(text, "M=106 ", "GoID=106 Undetermined->Syscall", NULL), 1);
	cr_assert_eq(lines_with(text, "M=104 P=-1 ", "ProcID=3 Running->Idle", NULL), 1);
	cr_assert_eq(lines_with(text, "GoID=102 Running->Waiting", "Reason=\"futex\"", NULL), 1);
	cr_assert_eq(lines_with(text, "M=102 ", "GoID=102 Runnable->Running", NULL), 2);
	cr_assert_eq(lines_with(text, "M=105 ", "GoID=105 Runnable->Running", NULL), 1);
	cr_assert_eq(lines_with(text, "GoID=103 NotExist->Syscall", NULL), 1);
	free(text);
	go123_writer__free(w);
	close(fd);
}

/* An exec gives the thread a new goroutine on the same M, running or inside its execve; the
 * new ids carry on into the next generation. */
Test(format_go123, exec_gives_a_new_goroutine)
{
	const uint64_t ga = (1ull << 32) | A, gb = (1ull << 32) | B;
	int fd;
	struct go123_writer *w = open_writer(&fd, 2);
	char *text, want[96];

	OK(go123_writer__thread_found(w, 1000, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__thread_found(w, 1000, B, GO123_G_RUNNING, 1, NULL, NULL));
	OK(go123_writer__exec(w, 1100, A, ga, &futex_stk, &pipe_stk));
	OK(go123_writer__syscall_begin(w, 1100, B, &pipe_stk));
	OK(go123_writer__exec(w, 1200, B, gb, &pipe_stk, NULL));
	cr_assert_eq(go123_writer__exec(w, 1250, A, gb, NULL, NULL), -EINVAL, "gb is B's");
	OK(go123_writer__syscall_end(w, 1300, B));
	OK(go123_writer__flush(w));
	OK(go123_writer__leave(w, 2000, A, GO123_BLOCKED, "futex", NULL));
	OK(go123_writer__wake(w, 2100, B, A, NULL));
	OK(go123_writer__run(w, 2200, 0, A));
	OK(go123_writer__flush(w));
	text = parse(path, 1);
	cr_assert_eq(lines_with(text, "M=100 ", "GoID=100 Running->NotExist", NULL), 1);
	snprintf(want, sizeof(want), "GoID=%llu NotExist->Runnable", (unsigned long long)ga);
	cr_assert_eq(lines_with(text, "M=100 ", want, NULL), 1);
	snprintf(want, sizeof(want), "GoID=%llu Runnable->Running", (unsigned long long)ga);
	cr_assert_eq(lines_with(text, "M=100 ", want, NULL), 2);
	snprintf(want, sizeof(want), "GoID=%llu Running->Waiting", (unsigned long long)ga);
	cr_assert_eq(lines_with(text, want, "Reason=\"futex\"", NULL), 1);
	cr_assert_eq(lines_with(text, "M=101 ", "GoID=101 Syscall->NotExist", NULL), 1);
	snprintf(want, sizeof(want), "GoID=%llu NotExist->Syscall", (unsigned long long)gb);
	cr_assert_eq(lines_with(text, "M=101 ", want, NULL), 1);
	snprintf(want, sizeof(want), "GoID=%llu Syscall->Runnable", (unsigned long long)gb);
	cr_assert_eq(lines_with(text, "M=101 ", want, NULL), 1);
	free(text);
	go123_writer__free(w);
	close(fd);
}

/* A trace of nothing is still a trace: one generation with its Frequency alone. */
Test(format_go123, empty_trace_parses)
{
	struct go123_writer_stats st;
	int fd;
	struct go123_writer *w = open_writer(&fd, 2);

	OK(go123_writer__flush(w));
	OK(go123_writer__flush(w));
	go123_writer__stats(w, &st);
	cr_assert_eq(st.generations, 1);
	free(parse(path, 1));
	go123_writer__free(w);
	close(fd);
}

/* What the reader would refuse is refused, and nothing is written for it. */
Test(format_go123, refuses_what_the_parser_would)
{
	int fd;
	struct go123_writer *w = open_writer(&fd, 2);
	struct go123_writer_stats before, after;

	OK(go123_writer__thread_found(w, 1000, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__thread_found(w, 1000, B, GO123_G_RUNNABLE, -1, NULL, NULL));
	OK(go123_writer__thread_found(w, 1000, C, GO123_G_WAITING, -1, NULL, NULL));
	go123_writer__stats(w, &before);
	cr_assert_eq(go123_writer__run(w, 1100, 0, B), -EBUSY, "CPU 0 is A's");
	cr_assert_eq(go123_writer__thread_found(w, 1100, D, GO123_G_RUNNING, 0, NULL, NULL), -EBUSY);
	cr_assert_eq(go123_writer__thread_found(w, 1100, A, GO123_G_RUNNABLE, -1, NULL, NULL), -EINVAL);
	cr_assert_eq(go123_writer__run(w, 1100, 1, C), -EINVAL, "C waits");
	cr_assert_eq(go123_writer__run(w, 1100, 2, B), -EINVAL, "no CPU 2");
	cr_assert_eq(go123_writer__syscall_end(w, 1100, A), -EINVAL, "A is in no syscall");
	cr_assert_eq(go123_writer__syscall_begin(w, 1100, B, NULL), -EINVAL, "B does not run");
	cr_assert_eq(go123_writer__leave(w, 1100, B, GO123_PREEMPTED, NULL, NULL), -EINVAL);
	cr_assert_eq(go123_writer__log(w, 1100, C, 0, "k", "v", 1, NULL), -EINVAL);
	cr_assert_eq(go123_writer__heap(w, 1100, B, 1), -EINVAL);
	cr_assert_eq(go123_writer__thread_exit(w, 1100, C), -EINVAL);
	cr_assert_eq(go123_writer__wake(w, 1100, 999, C, NULL), -EINVAL, "no thread 999");
	cr_assert_eq(go123_writer__leave(w, 900, A, GO123_PREEMPTED, NULL, NULL), -EINVAL,
		     "time goes back");
	go123_writer__stats(w, &after);
	cr_assert_eq(after.events, before.events);
	OK(go123_writer__wake(w, 1200, A, B, NULL));	/* not waiting: nothing to write */
	go123_writer__stats(w, &after);
	cr_assert_eq(after.events, before.events);
	OK(go123_writer__flush(w));
	free(parse(path, 1));
	go123_writer__free(w);
	close(fd);
}

/* A write that fails (a file-size limit) cuts the file back to the last generation boundary:
 * it parses, the writer stays failed, and the events of the cut generation are counted. */
Test(format_go123, write_error_leaves_a_generation_boundary)
{
	struct rlimit lim = { 6000, RLIM_INFINITY };
	struct go123_writer_stats st;
	size_t len, ends[64], n;
	uint8_t *buf;
	int fd, err = 0;
	struct go123_writer *w = open_writer(&fd, 2);
	uint64_t ts = 1000;
	char *text;

	signal(SIGXFSZ, SIG_IGN);
	cr_assert(!setrlimit(RLIMIT_FSIZE, &lim));
	OK(go123_writer__thread_found(w, ts, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__thread_found(w, ts, B, GO123_G_WAITING, -1, NULL, NULL));
	for (int i = 0; i < 5000 && !err; i++) {
		err = go123_writer__leave(w, ts += 100, A, GO123_BLOCKED, "futex", &futex_stk);
		if (!err)
			err = go123_writer__wake(w, ts += 100, 0, A, NULL);
		if (!err)
			err = go123_writer__run(w, ts += 100, (uint32_t)(i % 2), A);
	}
	cr_assert_eq(err, -EFBIG);
	cr_assert_eq(go123_writer__flush(w), -EFBIG, "the error sticks");
	go123_writer__stats(w, &st);
	cr_assert_gt(st.lost, 0);
	cr_assert_gt(st.generations, 0);
	cr_assert_eq(st.torn, 0);
	buf = slurp(fd, &len);
	cr_assert_eq(len, st.bytes, "the stats count what the file kept");
	n = gen_ends(buf, len, ends, 64);
	cr_assert_eq(n, st.generations);
	text = parse(path, 1);
	cr_assert_eq(lines_with(text, "Sync", NULL), st.generations);
	free(text);
	free(buf);
	go123_writer__free(w);
	close(fd);
}

#define ROUNDS_PP 200

/* A ping-pong of 10 ns steps (each a few events a nanosecond apart), after a thread found at
 * first, in one generation: A wakes B, which runs on CPU 1 and blocks, ROUNDS_PP times from
 * start on. The times of B's starts, as Go 1.23's -d=1 prints them. */
static void ping_pong(uint64_t first, uint64_t start, uint64_t starts[ROUNDS_PP])
{
	struct go123_writer *w;
	uint64_t ts = start;
	size_t n = 0;
	char *text;
	int fd;

	w = open_writer_opts(&fd, (struct go123_writer_opts){ .sz = sizeof(struct go123_writer_opts),
			     .nprocs = 2, .frequency = FREQ, .gen_ticks = 1ull << 62 });
	OK(go123_writer__thread_found(w, first, C, GO123_G_RUNNABLE, -1, NULL, NULL));
	OK(go123_writer__thread_found(w, ts, A, GO123_G_RUNNING, 0, NULL, NULL));
	OK(go123_writer__thread_found(w, ts, B, GO123_G_WAITING, -1, "futex", &futex_stk));
	for (int r = 0; r < ROUNDS_PP; r++) {
		OK(go123_writer__wake(w, ts += 10, A, B, &futex_stk));
		OK(go123_writer__run(w, ts += 10, 1, B));
		OK(go123_writer__leave(w, ts += 10, B, GO123_BLOCKED, "futex", &futex_stk));
	}
	OK(go123_writer__flush(w));
	go123_writer__free(w);
	close(fd);
	text = parse(path, 1);
	for (const char *l = text; (l = strstr(l, "GoID=101 Runnable->Running")); l++) {
		const char *at = l;

		while (at > text && at[-1] != '\n')
			at--;
		cr_assert_lt(n, ROUNDS_PP, "%s", text);
		starts[n++] = strtoull(strstr(at, "Time=") + 5, NULL, 10);
	}
	cr_assert_eq(n, ROUNDS_PP, "%s", text);
	free(text);
}

/* After a thread found at first, from start on, a nanosecond a step: B, waiting, is ended
 * by lxtrace (woken by no one, run, ended) and A creates B's tid's new thread, which runs
 * and waits, 20 times; at each of 8 alignments to a float's 4 ns steps. Go 1.23 reads each
 * file whole. */
static void recreate(uint64_t first, uint64_t start)
{
	for (uint64_t at = 0; at < 8; at++) {
		uint64_t ts = start + at;
		int fd;
		struct go123_writer *w = open_writer_opts(&fd, (struct go123_writer_opts){
			.sz = sizeof(struct go123_writer_opts), .nprocs = 2, .frequency = FREQ,
			.gen_ticks = 1ull << 62 });

		OK(go123_writer__thread_found(w, first, C, GO123_G_RUNNABLE, -1, NULL, NULL));
		OK(go123_writer__thread_found(w, ts, A, GO123_G_RUNNING, 0, NULL, NULL));
		OK(go123_writer__thread_found(w, ts, B, GO123_G_WAITING, -1, "futex", &futex_stk));
		for (int r = 0; r < 20; r++) {
			OK(go123_writer__wake(w, ++ts, 0, B, &futex_stk));
			OK(go123_writer__run(w, ++ts, 1, B));
			OK(go123_writer__thread_exit(w, ++ts, B));
			OK(go123_writer__thread_new(w, ++ts, A, B, &futex_stk, &pipe_stk));
			OK(go123_writer__run(w, ++ts, 1, B));
			OK(go123_writer__leave(w, ++ts, B, GO123_BLOCKED, "futex", &futex_stk));
		}
		OK(go123_writer__flush(w));
		go123_writer__free(w);
		close(fd);
		free(parse(path, 1));
	}
}

/* Go 1.23 turns ticks into nanoseconds through a float64 (53 bits: 104 days of nanoseconds).
 * On a machine up 300 days, CLOCK_MONOTONIC's neighbouring nanoseconds would be one time to
 * it, and a tie among Ms can stop its reader (docs/format.md §18.1): a thread's end, forced
 * by lxtrace, tied with its tid's new thread's creation reads as the creation of a goroutine
 * that exists. Counted from the first event, every nanosecond stays apart, and B's starts in
 * a ping-pong keep their 30 ns. */
Test(format_go123, a_machine_up_300_days_keeps_its_nanoseconds)
{
	const uint64_t up = 300ull * 86400 * 1000000000;
	uint64_t starts[ROUNDS_PP];

	recreate(up, up);
	ping_pong(up, up, starts);
	/* From the second: the first is later by the events of the start. */
	for (int r = 2; r < ROUNDS_PP; r++)
		cr_expect_eq(starts[r] - starts[r - 1], 30, "B's starts %d and %d: %llu, %llu",
			     r - 1, r, (unsigned long long)starts[r - 1],
			     (unsigned long long)starts[r]);
}

/* A recording longer than 104 days (its first event 300 days before): its events stay apart
 * for Go 1.23's float64, a little later than they were, and each file reads whole. */
Test(format_go123, a_recording_past_104_days_stays_in_order)
{
	recreate(1000, 1000 + 300ull * 86400 * 1000000000);
}
