/* go119bytes.c - go1.19 trace files built record by record (go119bytes.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/varint.h"
#include "tests/lib/go119bytes.h"

static void put(struct go119bytes *b, const void *p, size_t n)
{
	if (b->len + n > sizeof(b->buf))
		abort();	/* a test's file outgrew the buffer */
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put_uv(struct go119bytes *b, uint64_t v)
{
	uint8_t tmp[10];

	put(b, tmp, (size_t)(gt_varint_put(tmp, v) - tmp));
}

void go119b_init(struct go119bytes *b)
{
	b->len = 0;
	put(b, GT_HEADER, GT_HEADER_LEN);
}

void go119b_event(struct go119bytes *b, enum gt_type type, size_t n, const uint64_t *vals)
{
	struct go119bytes body = { .len = 0 };
	uint8_t first;

	for (size_t i = 0; i < n; i++)
		put_uv(&body, vals[i]);
	if (n >= 1 && n <= 3) {
		first = (uint8_t)(type | (n - 1) << 6);
		put(b, &first, 1);
	} else {
		first = (uint8_t)(type | 3 << 6);
		put(b, &first, 1);
		put_uv(b, body.len);
	}
	put(b, body.buf, body.len);
}

void go119b_batch(struct go119bytes *b, uint64_t p, uint64_t ts)
{
	V1B(b, GT_EV_BATCH, p, ts);
}

void go119b_frequency(struct go119bytes *b, uint64_t hz)
{
	V1B(b, GT_EV_FREQUENCY, hz);
}

void go119b_string(struct go119bytes *b, uint64_t id, const char *s)
{
	uint8_t first = GT_EV_STRING;

	put(b, &first, 1);
	put_uv(b, id);
	put_uv(b, strlen(s));
	put(b, s, strlen(s));
}

void go119b_stack1(struct go119bytes *b, uint64_t id, uint64_t pc, uint64_t func, uint64_t file,
		uint64_t line)
{
	uint64_t vals[] = { id, 1, pc, func, file, line };
	uint8_t first = GT_EV_STACK | 3 << 6;
	struct go119bytes body = { .len = 0 };

	for (size_t i = 0; i < 6; i++)
		put_uv(&body, vals[i]);
	put(b, &first, 1);
	put_uv(b, body.len);
	put(b, body.buf, body.len);
}

int go119b_memfd(const struct go119bytes *b)
{
	int fd = memfd_create("go119bytes", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, b->buf, b->len) != (ssize_t)b->len || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return -1;
	}
	return fd;
}
