/* go123story.c - a go1.23 trace of a known story (go123story.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/go123story.h"

enum { A = GO123STORY_A, B = GO123STORY_B, C = GO123STORY_C, D = GO123STORY_D };

static const struct gt_frame futex_frames[] = {
	{ 0xffffffff81000200, "futex_wait", "[kernel]", 0 },
	{ 0x401300, "lock_wait", "/src/lock.c", 7 },
};
static const struct gt_frame pipe_frames[] = {
	{ 0xffffffff81000100, "pipe_read", "[kernel]", 0 },
	{ 0x401200, "reader_loop", "/src/reader.c", 42 },
};
static const struct go123_stack futex_stk = { futex_frames, 2 }, pipe_stk = { pipe_frames, 2 };

#define DO(call)                                                                           \
	do {                                                                               \
		if (!err && (err = (call)))                                                \
			snprintf(why, whylen, "%s: %s", #call, strerror(-err));            \
	} while (0)

int go123story__write(const char *path, unsigned rounds, uint64_t gen_ticks,
		   struct go123_writer_stats *st, char *why, size_t whylen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err = 0;
	struct go123_writer *w;
	uint64_t t = 1000;

	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	w = go123_writer__new(&(struct go123_writer_opts){ .sz = sizeof(struct go123_writer_opts),
			    .fd = fd, .nprocs = 2, .frequency = 1000000000, .gen_ticks = gen_ticks });
	if (!w) {
		err = -errno;
		snprintf(why, whylen, "go123_writer__new: %s", strerror(errno));
		close(fd);
		return err;
	}
	DO(go123_writer__thread_found(w, t, A, GO123_G_RUNNING, 0, NULL, NULL));
	DO(go123_writer__thread_found(w, t, B, GO123_G_RUNNING, 1, NULL, NULL));
	DO(go123_writer__thread_found(w, t, C, GO123_G_WAITING, -1, "pipe read", &pipe_stk));
	DO(go123_writer__thread_found(w, t, D, GO123_G_RUNNABLE, -1, NULL, NULL));
	for (unsigned i = 0; i < rounds && !err; i++) {
		DO(go123_writer__syscall_begin(w, t += 100, A, &futex_stk));
		DO(go123_writer__syscall_end(w, t += 100, A));
		DO(go123_writer__leave(w, t += 100, A, GO123_BLOCKED, "futex", &futex_stk));
		DO(go123_writer__run(w, t += 100, 0, D));
		DO(go123_writer__wake(w, t += 100, D, A, &futex_stk));
		DO(go123_writer__leave(w, t += 100, D, GO123_PREEMPTED, NULL, NULL));
		DO(go123_writer__run(w, t += 100, 0, A));
		DO(go123_writer__cpu_sample(w, t += 100, B, 1, &pipe_stk));
		DO(go123_writer__task_begin(w, t += 100, B, i + 1, 0, "request", NULL));
		DO(go123_writer__region(w, t += 100, B, true, i + 1, "parse", NULL));
		DO(go123_writer__log(w, t += 100, B, i + 1, "key", "v\n\x1b", 3, NULL));
		DO(go123_writer__region(w, t += 100, B, false, i + 1, "parse", NULL));
		DO(go123_writer__task_end(w, t += 100, B, i + 1, NULL));
		DO(go123_writer__heap(w, t += 100, B, 4096 * (i + 1)));
	}
	DO(go123_writer__flush(w));
	go123_writer__stats(w, st);
	go123_writer__free(w);
	close(fd);
	return err;
}
