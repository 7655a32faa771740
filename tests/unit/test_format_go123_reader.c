/* test_format_go123_reader.c - the go1.23 decoder (format/go123/reader.h) reads back what the
 * encoder wrote, event for event; and repair and cut by whole generations
 * (format/go123/repair.h, cut.h) write only files Go 1.23's reader takes: a file cut at every
 * byte, repaired, and every run of consecutive generations, cut. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go123/cut.h"
#include "format/go123/print.h"
#include "format/go123/reader.h"
#include "format/go123/repair.h"
#include "format/go123/writer.h"
#include "tests/lib/goparse.h"
#include "tests/lib/go123story.h"

#define FREQ 1000000000ull
#define GEN_TICKS 2500

static char path[64], out_path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/lxtrace-test-v2r-%d.trace", getpid());
	snprintf(out_path, sizeof(out_path), "/tmp/lxtrace-test-v2r-%d-out.trace", getpid());
}

static void teardown(void)
{
	if (getenv("LXTRACE_TEST_KEEP"))
		return;
	unlink(path);
	unlink(out_path);
}

TestSuite(format_go123_reader, .init = setup, .fini = teardown);

#define OK(call)                                                                            \
	do {                                                                                \
		int err_ = (call);                                                          \
		cr_assert_eq(err_, 0, "%s: %s", #call, strerror(-err_));                    \
	} while (0)

enum { A = GO123STORY_A, B = GO123STORY_B };

static struct go123_writer_stats write_story(unsigned rounds)
{
	struct go123_writer_stats st;
	char why[256];

	cr_assert_eq(go123story__write(path, rounds, GEN_TICKS, &st, why, sizeof(why)), 0, "%s", why);
	return st;
}

static struct go123_reader *open_reader(const char *p, int *fd)
{
	struct go123_reader *r;

	*fd = open(p, O_RDONLY | O_CLOEXEC);
	cr_assert(*fd >= 0);
	r = go123_reader__new(&(struct go123_reader_opts){ .sz = sizeof(struct go123_reader_opts),
			    .fd = *fd });
	cr_assert(r);
	return r;
}

static void go_ok(const char *p)
{
	struct goparse_result res;

	cr_assert_eq(goparse_123(p, &res), 0);
	cr_assert(res.ok, "go 1.23 trace -d=1 %s: %s", p, res.error);
}

Test(format_go123_reader, round_trip)
{
	struct go123_writer_stats st = write_story(40);
	uint64_t events = 0, blocks = 0, samples = 0, gens = 0, last_gen = 0;
	struct go123_frame fr[GO123_MAX_FRAMES];
	struct go123_event e;
	int fd, ret;
	struct go123_reader *r = open_reader(path, &fd);

	while ((ret = go123_reader__next(r, &e)) == 1) {
		size_t len;

		events++;
		if (e.gen != last_gen) {
			cr_assert_eq(e.gen, last_gen + 1);
			last_gen = e.gen;
			gens++;
		}
		if (e.type == GO123_EV_GO_BLOCK) {
			const char *s = go123_reader__string(r, e.args[0], &len);

			cr_assert_eq(e.m, A);
			cr_assert(s && len == 5 && !memcmp(s, "futex", 5));
			cr_assert_eq(go123_reader__stack(r, e.args[1], fr), 2);
			cr_assert(fr[0].func_len == 10 && !memcmp(fr[0].func, "futex_wait", 10));
			cr_assert_eq(fr[1].line, 7);
			blocks++;
		}
		if (e.type == GO123_EV_CPU_SAMPLE) {
			cr_assert_eq(e.args[1], B);
			cr_assert_eq(e.args[2], 1);
			samples++;
		}
	}
	cr_assert_eq(ret, 0, "%s", go123_reader__error(r));
	cr_assert_eq(events, st.events);
	cr_assert_eq(gens, st.generations);
	cr_assert_gt(gens, 3);
	cr_assert_eq(blocks, 40);
	cr_assert_eq(samples, 40);
	go123_reader__free(r);
	close(fd);
	go_ok(path);
}

Test(format_go123_reader, dump_escapes)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct go123_event e;
	int fd, ret;
	struct go123_reader *r;

	write_story(2);
	r = open_reader(path, &fd);
	while ((ret = go123_reader__next(r, &e)) == 1)
		OK(go123_print__event(f, r, &e, 0));
	cr_assert_eq(ret, 0);
	fclose(f);
	cr_assert(strstr(text, " GoBlock reason=\"futex\" stack="), "%s", text);
	cr_assert(strstr(text, "    futex_wait [kernel]:0 pc=0xffffffff81000200\n"));
	cr_assert(strstr(text, " UserLog task=1 key=\"key\" value=\"v\\x0a\\x1b\""), "%s", text);
	cr_assert(strstr(text, " CPUSample m=101 p=1 g=101 stack="));
	cr_assert(strstr(text, "gen=1 m=-1 GoStatusStack g=102 m=-1 gstatus=4"), "%s", text);
	free(text);
	go123_reader__free(r);
	close(fd);
}

/* The file's first len bytes at out_path. */
static void write_prefix(const uint8_t *buf, size_t len)
{
	int fd = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	uint8_t *buf;

	cr_assert(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len);
	cr_assert(buf && fread(buf, 1, *len, f) == *len);
	fclose(f);
	return buf;
}

/* Cut at every byte and repaired in place: a prefix of whole generations, taken by Go 1.23
 * (each distinct one checked), or a refusal when not even the first generation is whole. */
Test(format_go123_reader, repair_every_byte, .timeout = 300)
{
	size_t len, nk = 0;
	uint8_t *buf;
	uint64_t kept[64];

	write_story(6);
	buf = slurp(path, &len);
	for (size_t cut = 0; cut <= len; cut++) {
		struct go123_repair_report rep;
		char err[512];
		int fd, ret;
		bool seen = false;

		write_prefix(buf, cut);
		fd = open(out_path, O_RDWR | O_CLOEXEC);
		ret = go123_repair(fd, -1, &rep, err, sizeof(err));
		close(fd);
		if (ret) {
			cr_assert_eq(ret, -ENODATA, "cut at %zu: %s", cut, err);
			cr_assert(!nk, "cut at %zu refused after a generation was whole: %s", cut, err);
			continue;
		}
		cr_assert_leq(rep.kept, cut);
		cr_assert(rep.kept == cut || rep.why[0]);
		for (size_t i = 0; i < nk; i++)
			seen |= kept[i] == rep.kept;
		if (seen)
			continue;
		cr_assert_lt(nk, 64);
		kept[nk++] = rep.kept;
		go_ok(out_path);
	}
	cr_assert_gt(nk, 3);
	free(buf);
}

/* Every run of consecutive generations, cut by time, is a trace of its own. */
Test(format_go123_reader, cut_runs, .timeout = 300)
{
	struct go123_writer_stats st = write_story(30);
	int64_t lo[64], hi[64], t0 = 0;
	uint64_t n = 0;
	int fd, ret;
	struct go123_reader *r = open_reader(path, &fd);

	while ((ret = go123_reader__next_generation(r)) == 1) {
		cr_assert_lt(n, 64);
		go123_reader__gen_span(r, &lo[n], &hi[n]);
		if (!n)
			t0 = lo[0];
		n++;
	}
	cr_assert_eq(ret, 0);
	cr_assert_eq(n, st.generations);
	go123_reader__free(r);
	for (uint64_t a = 0; a < n; a++) {
		for (uint64_t b = a; b < n; b++) {
			struct go123_cut_report rep;
			char err[512];
			int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

			cr_assert(out >= 0);
			ret = go123_cut(fd, out, (uint64_t)(lo[a] - t0), (uint64_t)(hi[b] - t0) + 1, &rep,
				      err, sizeof(err));
			close(out);
			cr_assert_eq(ret, 0, "%s", err);
			cr_assert_eq(rep.first_gen, a + 1);
			cr_assert_eq(rep.generations, b - a + 1);
			if (b == a || b == n - 1 || a == 0)
				go_ok(out_path);
		}
	}
	close(fd);
}
