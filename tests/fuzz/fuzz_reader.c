/* fuzz_reader.c - libFuzzer target: the streaming reader (the path `lxtrace dump`, repair and
 * cut take, reading a file through its window) and the whole-trace loader built on it must
 * survive any input without a crash, a leak or an out-of-bounds access, explain every refusal,
 * and agree with each other. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches what an event points at. */
static void touch(const struct gt_event *e, size_t size)
{
	if (e->stack)
		for (size_t j = 0; j < e->stack->n; j++)
			if (strlen(e->stack->frames[j].func) > size)
				abort();
	if (e->msg_len && e->msg[e->msg_len - 1] == 0x7f && e->msg_len > size)
		abort();
}

/* Streams the input from a file descriptor; returns the events read, or -1 when refused. */
static long stream(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct gt_reader *r;
	struct gt_event e;
	long n = 0;
	int ret;

	if (fd < 0)
		fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET))
		abort();
	r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts), .fd = fd });
	if (!r)
		abort();
	while ((ret = gt_reader__next(r, &e)) == 1) {
		touch(&e, size);
		n++;
	}
	if (ret && (!gt_reader__error(r)[0] || strchr(gt_reader__error(r), '\n')))
		abort();
	gt_reader__free(r);
	return ret ? -1 : n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gt_trace *t = NULL;
	long streamed = stream(data, size);
	char err[256];

	if (gt_trace__parse(data, size, &t, err, sizeof(err))) {
		if (!err[0] || t || streamed >= 0)
			abort();
		return 0;
	}
	if (streamed != (long)gt_trace__nevents(t))
		abort();
	/* Touch everything the decoder resolved. */
	for (size_t i = 0; i < gt_trace__nevents(t); i++)
		touch(&gt_trace__events(t)[i], size);
	gt_trace__free(t);
	return 0;
}
