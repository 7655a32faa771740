/* cfi_loader.h - gives the BPF unwinder the rows of the binaries it meets (bpf/unwind.h).
 *
 * The rows of a small file a traced process maps (a new program's own binary) are wanted as
 * soon as the mapping is reported (LX_REC_MMAP); a walk that finds no rows for a mapped file
 * (a large library, a process alive at the start, one the rows were not ready for) sends
 * LX_REC_CFI_WANT once per file. The loader
 * opens the file at once, while its process may still run, through the process's
 * /proc/PID/map_files entry (the mapped file itself, even deleted or in another mount
 * namespace) or the path BPF reported, checks it is the regular file of that device and inode
 * and not larger than a binary can be, and compiles it at once if it is small (1 MiB: a new
 * program's own binary, ready before its stacks are many) or queues it for a worker thread,
 * which compiles queued files smallest first, at nice 10: a large library (hundreds of
 * milliseconds for tens of megabytes) never holds the ring reader up, and yields to the traced
 * programs. The rows are appended to the shared row
 * array and published as (first, n) under (dev, inode). A file with no
 * usable CFI, or whose code keeps frame pointers (Go), is published with no rows, so walks stop
 * asking and use frame pointers there; a file that could not be opened (the process was gone)
 * or not in time (its filesystem late: lib/file_worker.h) is forgotten, so the next walk asks
 * again.
 *
 * With a disk cache (lib/disk_cache.h), a file's rows come from it when they were stored by an
 * earlier recording of this build, and are stored once compiled, for the files whose identity
 * proves their content (user/stacks/cfi_cache.h). The worker stores them when no file waits to
 * be compiled, and at the end (cfi_loader__free) for at most half a second.
 */
#ifndef LXTRACE_USER_STACKS_CFI_LOADER_H
#define LXTRACE_USER_STACKS_CFI_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/lxtrace.h"
#include "bpf/unwind.h"
#include "lib/disk_cache.h"

struct cfi_loader;

struct cfi_loader_opts {
	size_t sz;			/* sizeof(struct cfi_loader_opts) */
	struct lx_unwind_maps maps;	/* capture__unwind_maps fills it */
	const char *proc_root;		/* NULL: "/proc" */
	struct disk_cache *cache;	/* NULL: none; must outlive the loader */
};

struct cfi_loader_stats {
	uint64_t files;			/* files published with rows */
	uint64_t files_empty;		/* published without: no usable CFI */
	uint64_t files_retry;		/* could not be opened now: left to be asked again */
	uint64_t files_full;		/* did not fit in the row array */
	uint64_t files_costly;		/* published without: the compile ran out of CPU time */
	uint64_t files_cached;		/* published from the cache (with rows or without) */
	uint64_t rows;			/* rows in use */
	uint64_t files_failed;		/* not published: the rows map refused them */
	uint64_t queued;		/* waiting for the worker now */
	uint64_t compile_ns;		/* time spent compiling and publishing (both threads) */
};

/* NULL with errno set. */
struct cfi_loader *cfi_loader__new(const struct cfi_loader_opts *opts);

/* One LX_REC_CFI_WANT: opens the file and compiles or queues it, unless that is done already.
 * 0 (published, queued, or left to be asked again), -ETIMEDOUT (late: left to be asked again,
 * and nothing to wait for meanwhile) or -errno (-ENOMEM, or the maps refused a small file's
 * rows). */
int cfi_loader__want(struct cfi_loader *l, const struct lx_cfi_want *w);

/* The same for a walk the daemon finishes (late_walk.h), whose process may be gone or have
 * exec'ed since: the file is also looked for at path, if it is still that file. */
int cfi_loader__want_file(struct cfi_loader *l, const struct lx_cfi_want *w, const char *path);

/* A process mapped a file (LX_REC_MMAP): the same, before a stack needs the rows; a small file
 * only (compiled at once), or with urgent any file, wanted now as cfi_loader__want_process
 * wants them: a recording of chosen processes, whose libraries loaded after the start (a
 * dlopen, a new program) would otherwise wait for their first walks, each sending a copy of
 * the stack until the rows come. */
int cfi_loader__mapped(struct cfi_loader *l, const struct lx_mmap *m, bool urgent);

/* Before a recording of chosen processes starts: the rows of every file process pid runs code
 * from (its /proc/PID/maps) are wanted now and compiled ahead of other files, the worker at the
 * caller's nice value as for a stack that waits (cfi_loader__rows), so that the process's
 * first walks find them instead of sending copies of the stack (docs/stacks.md, "First
 * sight"). 0, or -errno when its maps cannot be read (the process is gone). */
int cfi_loader__want_process(struct cfi_loader *l, pid_t pid);

/* Waits until no urgent file is queued or being compiled, at most timeout_ns; true when none
 * is. */
bool cfi_loader__wait_urgent(struct cfi_loader *l, uint64_t timeout_ns);

/* The rows of file (dev, ino) (the kernel's encoding) for a walk the daemon finishes
 * (late_walk.h): 1 with *rows and *n once published (n 0: none, frame pointers there); 0 while
 * they are compiled or queued, the file then going first to the worker; -ENOENT when nothing
 * asked for them yet (cfi_loader__want). Published rows stay for the loader's life. */
int cfi_loader__rows(struct cfi_loader *l, uint32_t dev, uint64_t ino,
		     const struct lx_cfi_row **rows, uint32_t *n);

void cfi_loader__stats(struct cfi_loader *l, struct cfi_loader_stats *out);

/* Accepts NULL. */
void cfi_loader__free(struct cfi_loader *l);

#endif
