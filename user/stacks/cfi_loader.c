/* cfi_loader.c - opens, compiles and publishes the unwind rows BPF asks for (cfi_loader.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <gelf.h>

#include "lib/clock.h"
#include "lib/foreign_file.h"
#include "lib/u64map.h"
#include "user/proc/mapped_file.h"
#include "user/proc/mmap_path.h"
#include "user/stacks/cfi.h"
#include "user/stacks/cfi_loader.h"
#include "user/stacks/vdso.h"

struct cfi_loader {
	struct cfi_loader_opts o;
	struct u64map *done;		/* hash of (dev, ino) -> 1: published */
	char proc_root[256];
	uint32_t next;		/* first free row */
	struct cfi_loader_stats st;
};

struct cfi_loader *cfi_loader__new(const struct cfi_loader_opts *opts)
{
	struct cfi_loader *l;

	if (!opts || opts->sz < sizeof(*opts) || !opts->rows || !opts->gen) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->o = *opts;
	l->done = u64map__new();
	if (!l->done) {
		free(l);
		return NULL;
	}
	snprintf(l->proc_root, sizeof(l->proc_root), "%s", opts->proc_root ? opts->proc_root : "/proc");
	elf_version(EV_CURRENT);
	return l;
}

/* The file mapped at [start, end) of w's process, or at path (if not NULL) when the process
 * is gone, if it is still the file (dev, ino) (user/proc/mapped_file.h). */
static int open_mapped(const struct cfi_loader *l, const struct lx_cfi_want *w, const char *path)
{
	/* The kernel's s_dev is major << 20 | minor; st_dev is the user-space encoding. */
	const struct mapped_file f = { l->proc_root, (pid_t)w->pid, w->start, w->end, path,
				       makedev(w->dev >> 20, w->dev & 0xfffff), w->ino };

	return mapped_file__open(&f);
}

/* A key for the set of files published: inodes fit 48 bits in practice, devices 16 (a
 * collision only makes a file's rows wait for a stack to ask for them). */
static uint64_t file_key(uint32_t dev, uint64_t ino)
{
	return ino ^ (uint64_t)dev << 48 ^ (uint64_t)dev >> 16;
}

/* Publishes the file's rows (n may be 0) and makes walks that fell back for lack of them
 * walk again. */
static int publish(struct cfi_loader *l, const struct lx_cfi_want *w, uint32_t first, uint32_t n)
{
	struct lx_file_key key = { .ino = w->ino, .dev = w->dev };
	struct lx_file_rows v = { .first = first, .n = n };

	bool added;
	uint64_t *done;

	if (bpf_map_update_elem(l->o.files_fd, &key, &v, BPF_ANY))
		return -errno;
	(*l->o.gen)++;
	done = u64map__put(l->done, file_key(w->dev, w->ino), &added);
	if (done)
		*done = 1;
	return 0;
}

static int load(struct cfi_loader *l, const struct lx_cfi_want *w, const char *path);

int cfi_loader__mapped(struct cfi_loader *l, const struct lx_mmap *m)
{
	struct lx_cfi_want w = { .start = m->start, .end = m->end, .ino = m->ino, .pid = m->pid,
				 .dev = m->dev };
	char path[PATH_MAX];

	if (!m->ino || u64map__get(l->done, file_key(m->dev, m->ino)))
		return 0;
	return load(l, &w, m->ino == LX_VDSO_INO || mmap_path__get(m, path, sizeof(path)) ? NULL : path);
}

int cfi_loader__want(struct cfi_loader *l, const struct lx_cfi_want *w)
{
	return load(l, w, NULL);
}

/* Compiles and publishes the rows of w's file, found through w's process or at path. */
static int load(struct cfi_loader *l, const struct lx_cfi_want *w, const char *path)
{
	struct lx_file_key key = { .ino = w->ino, .dev = w->dev };
	struct cfi_table t = { 0 };
	uint64_t t0 = now_ns(), *done;
	Elf *elf;
	int fd, err;

	done = u64map__get(l->done, file_key(w->dev, w->ino));
	if (done)
		return 0;
	fd = w->ino == LX_VDSO_INO && !w->dev ? vdso__open() : open_mapped(l, w, path);
	if (foreign_file__refused(fd)) {	/* not a file to read: no rows, for good */
		l->st.files_empty++;
		return publish(l, w, 0, 0);
	}
	if (fd < 0) {		/* Gone, or replaced: the next walk that meets the file asks again. */
		l->st.files_retry++;
		bpf_map_delete_elem(l->o.wanted_fd, &key);
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? cfi__compile(elf, &t, NULL) : -EINVAL;
	if (elf)
		elf_end(elf);
	close(fd);
	l->st.compile_ns += now_ns() - t0;
	if (err == -ENOMEM)
		return err;
	if (err || !t.n) {
		l->st.files_empty++;
		return publish(l, w, 0, 0);
	}
	if (t.n > l->o.rows_max - l->next) {
		l->st.files_full++;
		cfi_table__release(&t);
		return publish(l, w, 0, 0);
	}
	memcpy(&l->o.rows[l->next], t.rows, t.n * sizeof(*t.rows));
	err = publish(l, w, l->next, (uint32_t)t.n);
	if (!err) {
		l->next += (uint32_t)t.n;
		l->st.rows = l->next;
		l->st.files++;
	}
	cfi_table__release(&t);
	return err;
}

void cfi_loader__stats(const struct cfi_loader *l, struct cfi_loader_stats *out)
{
	*out = l->st;
}

void cfi_loader__free(struct cfi_loader *l)
{
	if (!l)
		return;
	u64map__free(l->done);
	free(l);
}
