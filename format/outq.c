/* outq.c - writes complete batches, in the order given, to the writer's file descriptor.
 *
 * The file must end on a record boundary whenever the process dies, so a batch is never
 * split across system calls of our choosing: it goes out inside one writev. Small batches
 * (the ones cross-P dependencies close early) are first gathered in a staging buffer so
 * they do not each cost a system call; the staged bytes are complete batches, so losing
 * them in a crash still leaves the file on a batch boundary.
 *
 * A failed or zero-length write latches the error: nothing more is written, so the file
 * keeps the longest prefix that was written whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format/outq.h"

struct gt_outq {
	int fd;
	int err;
	uint8_t *stage;
	size_t len, cap;
	uint64_t written;
};

struct gt_outq *gt_outq__new(int fd, size_t stage_size)
{
	struct gt_outq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->fd = fd;
	q->cap = stage_size;
	q->stage = malloc(stage_size);
	if (!q->stage) {
		free(q);
		return NULL;
	}
	return q;
}

/* Writes all of iov, resuming after partial writes and EINTR. */
static int write_all(struct gt_outq *q, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t r = writev(q->fd, iov, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			q->err = r < 0 ? -errno : -EIO;
			return q->err;
		}
		q->written += (uint64_t)r;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

int gt_outq__bytes(struct gt_outq *q, const void *buf, size_t len)
{
	return gt_outq__batch(q, buf, len, NULL, 0);
}

int gt_outq__batch(struct gt_outq *q, const uint8_t *hdr, size_t hlen, const uint8_t *body,
		   size_t blen)
{
	struct iovec iov[3];
	int n = 0;

	if (q->err)
		return q->err;
	/* Full-size batches go straight out: copying them would only cost time. */
	if (hlen + blen <= q->cap / 4 && q->len + hlen + blen <= q->cap) {
		memcpy(q->stage + q->len, hdr, hlen);
		if (blen)
			memcpy(q->stage + q->len + hlen, body, blen);
		q->len += hlen + blen;
		return 0;
	}
	if (q->len)
		iov[n++] = (struct iovec){ q->stage, q->len };
	iov[n++] = (struct iovec){ (void *)hdr, hlen };
	if (blen)
		iov[n++] = (struct iovec){ (void *)body, blen };
	q->len = 0;
	return write_all(q, iov, n);
}

int gt_outq__flush(struct gt_outq *q)
{
	struct iovec iov;

	if (q->err || !q->len)
		return q->err;
	iov = (struct iovec){ q->stage, q->len };
	q->len = 0;
	return write_all(q, &iov, 1);
}

int gt_outq__error(const struct gt_outq *q)
{
	return q->err;
}

uint64_t gt_outq__written(const struct gt_outq *q)
{
	return q->written;
}

void gt_outq__free(struct gt_outq *q)
{
	if (!q)
		return;
	free(q->stage);
	free(q);
}
