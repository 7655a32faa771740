/* fuzz_reader_go123.c - libFuzzer target: the go1.23 reader (format/go123/reader.h, what `lxtrace
 * dump` reads those files with) must survive any input without a crash, a leak, a loop or an
 * out-of-bounds access, in the memory of its budget, and explain every refusal in one line;
 * repair and cut by whole generations (format/go123/repair.h, cut.h) write only files the reader
 * then takes whole. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/go123/cut.h"
#include "format/go123/print.h"
#include "format/go123/reader.h"
#include "format/go123/repair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	return fd;
}

/* Reads fd whole, touching every string and frame, printing every event to a sink; returns
 * the events, or -1 when refused. The budget is more than any input of 64 KiB needs. */
static long stream(int fd, FILE *sink)
{
	struct go123_reader *r;
	struct go123_frame fr[GO123_MAX_FRAMES];
	struct go123_event e;
	long n = 0;
	int ret;

	if (lseek(fd, 0, SEEK_SET))
		abort();
	r = go123_reader__new(&(struct go123_reader_opts){ .sz = sizeof(struct go123_reader_opts),
			    .fd = fd, .gen_budget = 4 << 20 });
	if (!r)
		abort();
	while ((ret = go123_reader__next(r, &e)) == 1) {
		const struct go123_spec *s = go123_spec(e.type);

		for (unsigned a = 0; s && a < s->nargs; a++) {
			size_t len;
			const char *str = (s->strings >> a & 1) ?
					  go123_reader__string(r, e.args[a], &len) : NULL;
			int k = (s->stacks >> a & 1) ? go123_reader__stack(r, e.args[a], fr) : 0;

			if ((s->strings >> a & 1) && !str)
				abort();	/* checked when read */
			if (str && len && str[len - 1] == 0x7f && len > 4096)
				abort();
			for (int i = 0; i < k; i++)
				if (fr[i].func_len > GO123_MAX_STRING || fr[i].file_len > GO123_MAX_STRING)
					abort();
		}
		if (go123_print__event(sink, r, &e, 0))
			abort();
		n++;
	}
	if (ret && (!go123_reader__error(r)[0] || strchr(go123_reader__error(r), '\n')))
		abort();
	go123_reader__free(r);
	return ret ? -1 : n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, out = -1;
	static FILE *sink;
	struct go123_repair_report rep;
	struct go123_cut_report cut;
	char err[512];
	long n;

	if (fd < 0) {
		fd = memfd("fuzz-in");
		out = memfd("fuzz-out");
		sink = fopen("/dev/null", "w");
		if (!sink)
			abort();
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	n = stream(fd, sink);

	if (ftruncate(out, 0) || lseek(out, 0, SEEK_SET))
		abort();
	if (go123_repair(fd, out, &rep, err, sizeof(err))) {
		if (!err[0] || n >= 0)
			abort();
	} else if (stream(out, sink) < 0 || (n >= 0 && rep.kept != size)) {
		abort();
	}
	if (ftruncate(out, 0) || lseek(out, 0, SEEK_SET))
		abort();
	if (go123_cut(fd, out, 1000, 2000, &cut, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else if (stream(out, sink) < 0) {
		abort();
	}
	return 0;
}
