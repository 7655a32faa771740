/* outq.h - an encoder's output: complete batches, in order, to a file descriptor, or to a
 * sink that keeps them apart (the flight recorder's window in memory). */
#ifndef LXTRACE_FORMAT_OUTQ_H
#define LXTRACE_FORMAT_OUTQ_H

#include <stddef.h>
#include <stdint.h>

struct gt_outq;

/* A batch as the writer hands it out: its P, and the ticks of its first and last event. */
struct gt_batch_info {
	uint32_t p;
	uint64_t first_ts, last_ts;
};

/* Takes one whole batch, given as its header and its body; 0 or a negative errno, which fails
 * the output like a write error. */
typedef int (*gt_batch_sink)(void *ctx, const struct gt_batch_info *b, const uint8_t *hdr,
			     size_t hlen, const uint8_t *body, size_t blen);

/* Small batches are gathered in a staging buffer of stage_size bytes. With reserve > 0 and a
 * regular file, that many bytes are kept allocated past each write, so that a full disk
 * fails the queue with ENOSPC while they still fit (outq.c). NULL with errno set. */
struct gt_outq *gt_outq__new(int fd, size_t stage_size, size_t reserve);
/* An output that hands each batch to sink at once, unstaged; it has no file, so raw bytes (the
 * file header) are dropped and nothing is ever torn. NULL with errno set. */
struct gt_outq *gt_outq__new_sink(gt_batch_sink sink, void *ctx);
/* Queues raw bytes that must reach the file before anything later (the file header). */
int gt_outq__bytes(struct gt_outq *q, const void *buf, size_t len);
/* Queues one batch b, given as its header and its body. 0 or the sticky -errno. */
int gt_outq__batch(struct gt_outq *q, const struct gt_batch_info *b, const uint8_t *hdr,
		   size_t hlen, const uint8_t *body, size_t blen);
/* Writes whatever is staged. */
int gt_outq__flush(struct gt_outq *q);
/* Bytes written whole: the file holds exactly these after the offset the fd had at first (for
 * a sink: the batch bytes it took). */
uint64_t gt_outq__written(const struct gt_outq *q);
/* Bytes of a failed write that stay after them because they could not be cut back (0 when
 * none); *why gets the reason (-ESPIPE: the fd cannot be truncated; else ftruncate's). */
uint64_t gt_outq__torn(const struct gt_outq *q, int *why);
/* Accepts NULL; does not flush. Gives back what is left of the reserve past the file's end. */
void gt_outq__free(struct gt_outq *q);

#endif
