/* fuzz_model.c - libFuzzer target: the model takes any record stream the rings could deliver
 * (model__record's input is what the BPF side wrote, but a kernel bug, a ring torn by a crash
 * or a future record kind must not corrupt the trace) without a crash, a leak or an
 * out-of-bounds access, and the file it writes is one the reader takes whole.
 *
 * Input: byte 0 picks the CPUs (1..4), the syscalls mode, the heap counter, call stacks
 * (symbolized against the empty /proc, so every user frame is unknown) and with 0x40 the Go
 * go1.23 encoder (read back by format/go123/reader.h, which checks its bytes and its scheduler
 * state); then records,
 * each a little-endian u16 size and that many bytes (a record's time is raised to the last
 * one's, as the merge engine delivers them in order, so the model's repairs, not its time
 * check, meet the nonsense). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "format/go123/reader.h"
#include "format/go123/writer.h"
#include "format/go119/writer.h"
#include "user/model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char proc_dir[] = "/tmp/lxtrace-fuzz-proc-XXXXXX";

static void remove_proc(void)
{
	rmdir(proc_dir);
}

/* An empty /proc: the init phase finds no thread, every record's thread is new. */
static const char *proc_root(void)
{
	static bool made;

	if (!made) {
		if (!mkdtemp(proc_dir))
			abort();
		atexit(remove_proc);
		made = true;
	}
	return proc_dir;
}

/* Every event of the file at fd, or abort: the model's output is always a valid trace. */
static void read_back(int fd)
{
	struct gt_reader *r;
	struct gt_event e;
	int ret;

	if (lseek(fd, 0, SEEK_SET))
		abort();
	r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts), .fd = fd });
	if (!r)
		abort();
	while ((ret = gt_reader__next(r, &e)) == 1)
		;
	if (ret)
		abort();
	gt_reader__free(r);
}

/* The same for a go1.23 file: its structure and its scheduler state. */
static void read_back_go123(int fd)
{
	struct go123_reader *r;
	struct go123_event e;
	int ret;

	if (lseek(fd, 0, SEEK_SET))
		abort();
	r = go123_reader__new(&(struct go123_reader_opts){ .sz = sizeof(struct go123_reader_opts),
			    .fd = fd });
	if (!r)
		abort();
	while ((ret = go123_reader__next(r, &e)) == 1)
		;
	if (ret)
		abort();
	go123_reader__free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum model_syscalls modes[] = { MODEL_SYSCALLS_BLOCKING, MODEL_SYSCALLS_ALL,
						     MODEL_SYSCALLS_NONE };
	uint8_t rec[4096] __attribute__((aligned(8)));
	uint64_t ts = 1000000;
	struct gt_writer *w = NULL;
	struct go123_writer *w2 = NULL;
	struct model *m;
	bool go123;
	uint32_t ncpus;
	size_t off = 1;
	int fd, err = 0;

	if (!size)
		return 0;
	ncpus = 1 + (data[0] & 3);
	go123 = data[0] & 0x40;
	fd = memfd_create("fuzz-model", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (go123)
		w2 = go123_writer__new(&(struct go123_writer_opts){ .sz = sizeof(struct go123_writer_opts),
								 .fd = fd, .nprocs = ncpus + 1,
								 .frequency = 1000000000 });
	else
		w = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts),
							      .fd = fd, .nprocs = ncpus + 1,
							      .frequency = 1000000000 });
	m = w || w2 ? model__new(&(struct model_opts){ .sz = sizeof(struct model_opts), .writer = w,
						 .writer2 = w2,
						 .ncpus = ncpus, .syscalls = modes[(data[0] >> 2) % 3],
						 .proc_root = proc_root(),
						 .rss = data[0] & 0x10,
						 .stacks = data[0] & 0x20 }) : NULL;
	if (!m || model__start(m, ts))
		abort();
	while (!err && size - off >= 2) {
		size_t n = (size_t)data[off] | (size_t)data[off + 1] << 8;
		struct lx_rec *h = (struct lx_rec *)rec;

		off += 2;
		if (n > size - off)
			n = size - off;
		if (n > sizeof(rec))
			n = sizeof(rec);
		memcpy(rec, data + off, n);
		off += n;
		if (n >= sizeof(*h)) {
			if (h->ts < ts)
				h->ts = ts;
			ts = h->ts;
		}
		err = model__record(m, h, n);
	}
	/* Out of memory or a write error ends a recording; nothing else may. */
	if (err && err != -ENOMEM && err != -EFBIG)
		abort();
	if (!err && model__finish(m, ts + 1) == 0)
		go123 ? read_back_go123(fd) : read_back(fd);
	model__free(m);
	gt_writer__free(w);
	go123_writer__free(w2);
	close(fd);
	return 0;
}
