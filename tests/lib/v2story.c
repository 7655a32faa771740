/* v2story.c - a Go 1.22+ trace of a known story (v2story.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/v2story.h"

enum { A = V2STORY_A, B = V2STORY_B, C = V2STORY_C, D = V2STORY_D };

static const struct gt_frame futex_frames[] = {
	{ 0xffffffff81000200, "futex_wait", "[kernel]", 0 },
	{ 0x401300, "lock_wait", "/src/lock.c", 7 },
};
static const struct gt_frame pipe_frames[] = {
	{ 0xffffffff81000100, "pipe_read", "[kernel]", 0 },
	{ 0x401200, "reader_loop", "/src/reader.c", 42 },
};
static const struct gt2_stack futex_stk = { futex_frames, 2 }, pipe_stk = { pipe_frames, 2 };

#define DO(call)                                                                           \
	do {                                                                               \
		if (!err && (err = (call)))                                                \
			snprintf(why, whylen, "%s: %s", #call, strerror(-err));            \
	} while (0)

int v2story__write(const char *path, unsigned rounds, uint64_t gen_ticks,
		   struct gt2_writer_stats *st, char *why, size_t whylen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err = 0;
	struct gt2_writer *w;
	uint64_t t = 1000;

	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	w = gt2_writer__new(&(struct gt2_writer_opts){ .sz = sizeof(struct gt2_writer_opts),
			    .fd = fd, .nprocs = 2, .frequency = 1000000000, .gen_ticks = gen_ticks });
	if (!w) {
		err = -errno;
		snprintf(why, whylen, "gt2_writer__new: %s", strerror(errno));
		close(fd);
		return err;
	}
	DO(gt2_writer__thread_found(w, t, A, GT2_G_RUNNING, 0, NULL, NULL));
	DO(gt2_writer__thread_found(w, t, B, GT2_G_RUNNING, 1, NULL, NULL));
	DO(gt2_writer__thread_found(w, t, C, GT2_G_WAITING, -1, "pipe read", &pipe_stk));
	DO(gt2_writer__thread_found(w, t, D, GT2_G_RUNNABLE, -1, NULL, NULL));
	for (unsigned i = 0; i < rounds && !err; i++) {
		DO(gt2_writer__syscall_begin(w, t += 100, A, &futex_stk));
		DO(gt2_writer__syscall_end(w, t += 100, A));
		DO(gt2_writer__leave(w, t += 100, A, GT2_BLOCKED, "futex", &futex_stk));
		DO(gt2_writer__run(w, t += 100, 0, D));
		DO(gt2_writer__wake(w, t += 100, D, A, &futex_stk));
		DO(gt2_writer__leave(w, t += 100, D, GT2_PREEMPTED, NULL, NULL));
		DO(gt2_writer__run(w, t += 100, 0, A));
		DO(gt2_writer__cpu_sample(w, t += 100, B, 1, &pipe_stk));
		DO(gt2_writer__task_begin(w, t += 100, B, i + 1, 0, "request", NULL));
		DO(gt2_writer__region(w, t += 100, B, true, i + 1, "parse", NULL));
		DO(gt2_writer__log(w, t += 100, B, i + 1, "key", "v\n\x1b", 3, NULL));
		DO(gt2_writer__region(w, t += 100, B, false, i + 1, "parse", NULL));
		DO(gt2_writer__task_end(w, t += 100, B, i + 1, NULL));
		DO(gt2_writer__heap(w, t += 100, B, 4096 * (i + 1)));
	}
	DO(gt2_writer__flush(w));
	gt2_writer__stats(w, st);
	gt2_writer__free(w);
	close(fd);
	return err;
}
