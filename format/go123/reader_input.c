/* reader_input.c - the go1.23 decoder's input (reader_core.h): the file read through a 64 KiB
 * buffer as batch headers and bodies, every length checked against what remains before it is
 * taken, what a generation holds counted against the budget, and the error that sticks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/go123/reader_core.h"
#include "format/varint.h"

int go123_reader_fail(struct go123_reader *r, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->msg, sizeof(r->msg), "offset %llu: ", (unsigned long long)off);

	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

/* Bytes ready in the input after filling it: > 0, 0 at its end, or a negative errno. */
static ssize_t fill(struct go123_reader *r)
{
	size_t want = IN_SIZE;
	ssize_t n;

	if (r->in_pos < r->in_len)
		return (ssize_t)(r->in_len - r->in_pos);
	if (r->eof)
		return 0;
	if (r->limit) {
		if (r->pos >= r->limit) {
			r->eof = true;
			return 0;
		}
		if (r->limit - r->pos < want)
			want = (size_t)(r->limit - r->pos);
	}
	do
		n = read(r->fd, r->in, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return go123_reader_fail(r, -errno, r->pos, "reading: %s", strerror(errno));
	r->in_pos = 0;
	r->in_len = (size_t)n;
	if (!n)
		r->eof = true;
	return n;
}

/* Copies up to n bytes to dst (NULL: skips them); the count, short at the end, or an error. */
ssize_t go123_reader_take(struct go123_reader *r, uint8_t *dst, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t avail = fill(r);
		size_t k;

		if (avail <= 0)
			return avail < 0 ? avail : (ssize_t)got;
		k = (size_t)avail < n - got ? (size_t)avail : n - got;
		if (dst)
			memcpy(dst + got, r->in + r->in_pos, k);
		r->in_pos += k;
		r->pos += k;
		got += k;
	}
	return (ssize_t)got;
}

/* A varint of the input: 1, 0 when the input ends before it, -EINVAL when it is cut or too
 * long (what binary.ReadUvarint refuses), another error. */
static int take_varint(struct go123_reader *r, uint64_t *v)
{
	uint8_t b[GT_MAX_VARINT_LEN];

	for (size_t i = 0; i < sizeof(b); i++) {
		ssize_t n = go123_reader_take(r, &b[i], 1);

		if (n <= 0)
			return n < 0 ? (int)n : i ? -EINVAL : 0;
		if (!(b[i] & 0x80))
			return gt_varint_get(b, b + i + 1, v) ? 1 : -EINVAL;
	}
	return -EINVAL;
}

/* The header of the next batch: 1, 0 at the input's end, or an error with its message. */
int go123_reader_take_header(struct go123_reader *r, struct hdr *h)
{
	uint64_t *f[] = { &h->gen, &h->m, &h->base, &h->len };
	static const char *const names[] = { "generation", "M", "time", "size" };
	uint8_t t, exp;
	ssize_t n;

	h->off = r->pos;
	if ((n = go123_reader_take(r, &t, 1)) <= 0)
		return n < 0 ? (int)n : 0;
	if (t != GO123_EV_BATCH && t != GO123_EV_EXPERIMENTAL_BATCH)
		return go123_reader_fail(r, -EINVAL, h->off, "expected a batch, found type %u", t);
	h->exp = t == GO123_EV_EXPERIMENTAL_BATCH;
	if (h->exp && go123_reader_take(r, &exp, 1) != 1)
		return r->err ? r->err
			      : go123_reader_fail(r, -EINVAL, h->off, "batch header cut short");
	for (size_t i = 0; i < 4; i++) {
		int ret = take_varint(r, f[i]);

		if (ret < 0 && ret != -EINVAL)
			return ret;
		if (ret != 1)
			return go123_reader_fail(r, -EINVAL, h->off,
					       "batch header: bad or missing %s", names[i]);
	}
	if (h->len > GO123_MAX_BATCH)
		return go123_reader_fail(r, -EINVAL, h->off, "batch size %llu over the maximum %u",
				       (unsigned long long)h->len, GO123_MAX_BATCH);
	h->body = r->pos;
	return 1;
}

/* The body of batch h into dst (h->len bytes). */
int go123_reader_take_body(struct go123_reader *r, const struct hdr *h, uint8_t *dst)
{
	ssize_t n = go123_reader_take(r, dst, h->len);

	if (n < 0)
		return (int)n;
	if ((uint64_t)n != h->len)
		return go123_reader_fail(r, -EINVAL, h->off, "batch cut short: %zd of %llu bytes",
					 n, (unsigned long long)h->len);
	return 0;
}

/* Counts cost against the budget. */
int go123_reader_spend(struct go123_reader *r, size_t cost, uint64_t off)
{
	if (cost > r->budget - r->used)
		return go123_reader_fail(r, -EFBIG, off,
				       "generation %llu takes more than %zu bytes, the reader's "
				       "budget",
				       (unsigned long long)r->gen, r->budget);
	r->used += cost;
	return 0;
}

