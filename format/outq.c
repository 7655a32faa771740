/* outq.c - writes complete batches, in the order given, to the writer's file descriptor.
 *
 * The file must end on a record boundary whenever the process dies, so a batch is never
 * split across system calls of our choosing: it goes out inside one writev. Small batches
 * (the ones cross-P dependencies close early) are first gathered in a staging buffer so
 * they do not each cost a system call; the staged bytes are complete batches, so losing
 * them in a crash still leaves the file on a batch boundary.
 *
 * Disk full: with a reserve, the bytes past the end of the file are kept allocated
 * (fallocate, KEEP_SIZE) before every write, the write's own bytes plus the reserve. When the
 * disk cannot give that much, the write is not attempted: the queue fails with ENOSPC while
 * the reserve is still there, for whatever closes the trace (format/go119/close.h). Writes into
 * allocated blocks do not fail for want of space, so with a reserve a full disk never cuts a
 * batch. The reserve is grown in steps of RESERVE_AHEAD, so this costs one fallocate per
 * megabyte written, and what is left of it past the file's end is given back at the end.
 *
 * A failed or zero-length write latches the error: nothing more is written. A write can fail
 * part-way through a batch (ENOSPC, EFBIG, EIO after some bytes went out), so the file is then
 * truncated back to the end of the last write that went out whole, which ends on a batch
 * boundary. That needs a file ftruncate works on: on a pipe or socket the bytes already sent
 * cannot be taken back, and they are counted as torn instead (so are they when ftruncate
 * fails).
 *
 * A sink output (the flight recorder's) takes each batch as it comes, with its P and times:
 * it keeps batches apart, so there is nothing to stage and no file to cut back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format/outq.h"

struct gt_outq {
	gt_batch_sink sink;	/* NULL: fd */
	void *sink_ctx;
	int fd;
	int err;
	int trunc_err;		/* why the file could not be cut back after err, or 0 */
	uint8_t *stage;
	size_t len, cap;
	uint64_t written;	/* bytes that went out whole */
	uint64_t torn;		/* bytes of a failed write left in the file */
	off_t base;		/* the fd's offset when we started; -1 when it has none */
	size_t reserve;		/* bytes to keep allocated past what is written; 0: none */
	off_t reserved_to;	/* the file's blocks are allocated up to here */
};

#define RESERVE_AHEAD (1 << 20)

struct gt_outq *gt_outq__new(int fd, size_t stage_size, size_t reserve)
{
	struct gt_outq *q = calloc(1, sizeof(*q));
	struct stat st;

	if (!q)
		return NULL;
	q->fd = fd;
	q->base = lseek(fd, 0, SEEK_CUR);
	if (reserve && q->base >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode)) {
		q->reserve = reserve;
		q->reserved_to = q->base;
	}
	q->cap = stage_size;
	q->stage = malloc(stage_size);
	if (!q->stage) {
		free(q);
		return NULL;
	}
	return q;
}

struct gt_outq *gt_outq__new_sink(gt_batch_sink sink, void *ctx)
{
	struct gt_outq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->sink = sink;
	q->sink_ctx = ctx;
	q->fd = -1;
	q->base = -1;
	return q;
}

/* After a failed write, takes the part of it that reached the file back out. */
static void cut_back(struct gt_outq *q, uint64_t part)
{
	off_t end = q->base + (off_t)q->written;

	if (!part)
		return;
	if (q->base < 0) {
		q->trunc_err = -ESPIPE;
	} else if (ftruncate(q->fd, end) || lseek(q->fd, end, SEEK_SET) < 0) {
		q->trunc_err = -errno;
	} else {
		return;
	}
	q->torn = part;
}

/* Makes sure len more bytes and the reserve after them are allocated: 0, or -ENOSPC or
 * -EDQUOT when the disk cannot give them (the reserve allocated before is still there). */
static int top_up(struct gt_outq *q, size_t len)
{
	off_t need = q->base + (off_t)q->written + (off_t)len + (off_t)q->reserve;

	if (!q->reserve || need <= q->reserved_to)
		return 0;
	if (!fallocate(q->fd, FALLOC_FL_KEEP_SIZE, q->reserved_to,
		       need + RESERVE_AHEAD - q->reserved_to)) {
		q->reserved_to = need + RESERVE_AHEAD;
		return 0;
	}
	if (errno == ENOSPC || errno == EDQUOT) {
		if (!fallocate(q->fd, FALLOC_FL_KEEP_SIZE, q->reserved_to, need - q->reserved_to)) {
			q->reserved_to = need;
			return 0;
		}
		if (errno == ENOSPC || errno == EDQUOT)
			return -errno;
	}
	/* A file system without fallocate: no reserve, a full disk ends the file as it may. */
	q->reserve = 0;
	return 0;
}

/* Writes all of iov, resuming after partial writes and EINTR; on failure, none of it stays. */
static int write_all(struct gt_outq *q, struct iovec *iov, int n)
{
	uint64_t part = 0;
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	q->err = top_up(q, len);
	if (q->err)
		return q->err;

	while (n > 0) {
		ssize_t r = writev(q->fd, iov, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			q->err = r < 0 ? -errno : -EIO;
			cut_back(q, part);
			return q->err;
		}
		part += (uint64_t)r;
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
	q->written += part;
	return 0;
}

int gt_outq__bytes(struct gt_outq *q, const void *buf, size_t len)
{
	return gt_outq__batch(q, NULL, buf, len, NULL, 0);
}

int gt_outq__batch(struct gt_outq *q, const struct gt_batch_info *b, const uint8_t *hdr,
		   size_t hlen, const uint8_t *body, size_t blen)
{
	struct iovec iov[3];
	int n = 0;

	if (q->err)
		return q->err;
	if (q->sink) {
		int err = b ? q->sink(q->sink_ctx, b, hdr, hlen, body, blen) : 0;

		if (err)
			return q->err = err;
		q->written += b ? hlen + blen : 0;
		return 0;
	}
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

uint64_t gt_outq__written(const struct gt_outq *q)
{
	return q->written;
}

uint64_t gt_outq__torn(const struct gt_outq *q, int *why)
{
	if (why)
		*why = q->trunc_err;
	return q->torn;
}

/* Gives back what is left of the reserve past the end of the file. ext4 drops blocks past
 * the end on a truncate to the same size; tmpfs needs the hole punched. */
static void release(struct gt_outq *q)
{
	struct stat st;

	if (!q->reserve || fstat(q->fd, &st) || st.st_size >= q->reserved_to)
		return;
	/* Best effort: what stays allocated is at most the reserve and RESERVE_AHEAD. */
	if (!ftruncate(q->fd, st.st_size))
		fallocate(q->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size,
			  q->reserved_to - st.st_size);
}

void gt_outq__free(struct gt_outq *q)
{
	if (!q)
		return;
	release(q);
	free(q->stage);
	free(q);
}
