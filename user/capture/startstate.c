/* startstate.c - runs bpf/sleepers.bpf.c's task iterator once and keeps its records by
 * thread (startstate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/sleepers.h"
#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/capture/startstate.h"

#include "sleepers.skel.h"

struct startstate {
	char *bytes;		/* the iterator's output, whole records */
	size_t len, cap;
	struct u64map *by_tid;	/* tid -> offset of its record */
	size_t with_user;
};

/* Opens and loads the object with one of its programs, the Python walk's maps py's when
 * given; NULL with errno set and the libbpf error in why. */
static struct sleepers *load(bool copy, bool kern, bool every, size_t n,
			     const struct startstate_py *py, char *why, size_t why_size)
{
	struct sleepers *skel = sleepers__open();
	int err;

	if (!skel) {
		snprintf(why, why_size, "opening: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->want_kern = kern;
	skel->rodata->every = every;
	bpf_program__set_autoload(skel->progs.start_copy, copy);
	bpf_program__set_autoload(skel->progs.start_kern, !copy);
	err = bpf_map__set_max_entries(skel->maps.start_tids, n ? (uint32_t)n : 1);
	if (!err && py)
		err = bpf_map__reuse_fd(skel->maps.py_threads, py->threads_fd);
	if (!err && py)
		err = bpf_map__reuse_fd(skel->maps.py_layouts, py->layouts_fd);
	if (!err)
		err = sleepers__load(skel);
	if (err) {
		snprintf(why, why_size, "%s: %s", copy ? "start_copy" : "start_kern",
			 strerror(-err));
		sleepers__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* Reads the iterator of prog to its end into s->bytes. */
static int run_iter(struct startstate *s, struct bpf_program *prog)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, NULL);
	ssize_t got = 0;
	int fd, err = 0;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		err = -errno;
	while (!err) {
		err = grow_array((void **)&s->bytes, &s->cap, s->len + LX_START_MAX * 2, 1,
				 LX_START_MAX * 4);
		if (err)
			break;
		got = read(fd, s->bytes + s->len, s->cap - s->len);
		if (got <= 0)
			break;
		s->len += (size_t)got;
	}
	if (!err && got < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return err;
}

/* Whether the record h holds a stack as startstate.h says: kernel frames, no user ones, and
 * with LX_USTACK_COPY a copy, then the Python frames when there are, ending the record. */
static bool whole(const struct lx_start *h)
{
	const struct lx_stack *st = (const void *)(h + 1);
	size_t frames = sizeof(*h) + sizeof(*st) + (size_t)st->nkern * sizeof(st->pc[0]);
	const struct lx_ucopy *c = (const void *)((const char *)h + frames);
	const struct lx_pystack *ps;
	size_t body;

	if (st->tid != h->tid || st->nkern > LX_STACK_KERN_MAX || st->nuser ||
	    h->pysize > h->size || (body = h->size - h->pysize) < frames)
		return false;
	if (!(st->uflags & LX_USTACK_COPY))
		return !st->uflags && body == frames && !h->pysize;
	if (st->uflags != LX_USTACK_COPY || body < frames + sizeof(*c) || c->len > LX_UCOPY_MAX ||
	    (c->len & 7) || body != frames + sizeof(*c) + c->len)
		return false;
	ps = (const void *)((const char *)h + body);
	return !h->pysize || (h->pysize >= sizeof(*ps) && ps->n <= LX_PY_FRAMES_MAX &&
			      h->pysize == sizeof(*ps) + ps->n * sizeof(struct lx_pyframe));
}

/* Indexes the records by thread; a record that is not whole ends the list. */
static int index_records(struct startstate *s)
{
	size_t off = 0;

	while (s->len - off >= sizeof(struct lx_start) + sizeof(struct lx_stack)) {
		const struct lx_start *h = (const void *)(s->bytes + off);
		const struct lx_stack *st = (const void *)(h + 1);
		uint64_t *slot;
		bool added;

		if (h->size < sizeof(*h) + sizeof(*st) || h->size > s->len - off || !whole(h))
			break;
		slot = u64map__put(s->by_tid, h->tid, &added);
		if (!slot)
			return -ENOMEM;
		*slot = off;
		if (st->uflags & LX_USTACK_COPY)
			s->with_user++;
		off += h->size;
	}
	return 0;
}

struct startstate *startstate__read(const struct features *f, const uint32_t *tids, size_t n,
				    bool kern, bool user, const struct startstate_py *py, char *why,
				    size_t why_size)
{
	bool copy = user && f->have[FEAT_TASK_COPY] && features__cfi_stacks(f);
	struct startstate *s = calloc(1, sizeof(*s));
	struct sleepers *skel = NULL;
	char refused[128];
	uint8_t one = 1;
	int err = 0;

	why[0] = 0;
	if (!s || !(s->by_tid = u64map__new())) {
		startstate__free(s);
		errno = ENOMEM;
		return NULL;
	}
	/* Without a copy a user stack would be nothing: then nothing is read. */
	if (!copy && !kern)
		return s;
	skel = load(copy, kern, !tids, n, py, refused, sizeof(refused));
	if (!skel && copy && kern) {
		snprintf(why, why_size, "kernel frames only, refused: %s", refused);
		skel = load(false, kern, !tids, n, py, refused, sizeof(refused));
	}
	if (!skel) {
		err = -errno;
		snprintf(why, why_size, "no stacks but their syscall, refused: %s", refused);
	}
	for (size_t i = 0; !err && tids && i < n; i++)
		if (bpf_map__update_elem(skel->maps.start_tids, &tids[i], sizeof(tids[i]), &one,
					 sizeof(one), BPF_ANY))
			err = -errno;
	if (!err)
		err = run_iter(s, bpf_program__autoload(skel->progs.start_copy) ?
				  skel->progs.start_copy : skel->progs.start_kern);
	if (!err)
		err = index_records(s);
	if (skel)
		sleepers__destroy(skel);
	if (err) {
		if (!why[0])
			snprintf(why, why_size, "no stacks but their syscall: %s", strerror(-err));
		startstate__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

const struct lx_stack *startstate__stack(const struct startstate *s, uint32_t tid,
					 bool *runnable, size_t *size,
					 const struct lx_pystack **py)
{
	const uint64_t *off = s ? u64map__get(s->by_tid, tid) : NULL;
	const struct lx_start *h;

	if (!off)
		return NULL;
	h = (const void *)(s->bytes + *off);
	*runnable = h->state == LX_START_RUNNABLE;
	*size = h->size - h->pysize - sizeof(*h);
	if (py)
		*py = h->pysize ? (const void *)(s->bytes + *off + h->size - h->pysize) : NULL;
	return (const struct lx_stack *)(h + 1);
}

size_t startstate__count(const struct startstate *s, size_t *with_user)
{
	*with_user = s ? s->with_user : 0;
	return s ? u64map__count(s->by_tid) : 0;
}

void startstate__free(struct startstate *s)
{
	if (!s)
		return;
	u64map__free(s->by_tid);
	free(s->bytes);
	free(s);
}
