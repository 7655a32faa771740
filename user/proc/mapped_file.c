/* mapped_file.c - the file behind a process's mapping, opened as a file another user controls,
 * in the file worker (lib/file_worker.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/file_worker.h"
#include "lib/foreign_file.h"
#include "user/proc/mapped_file.h"

/* A struct mapped_file with its strings in it, for the worker's copy. */
struct job_arg {
	struct mapped_file f;
	bool has_path;
	char proc_root[256];
	char path[4096];
};

/* Runs in the worker: every step may wait for the file's server (the open itself, fstat,
 * fstatfs, the copy). */
static int open_job(struct file_job *job, const void *arg)
{
	const struct job_arg *a = arg;
	const struct mapped_file *f = &a->f;
	/* map_files entries are magic links to the mapped file itself: following them is the
	 * point. */
	const struct foreign_rules magic = { .sz = sizeof(magic), .follow = true,
					     .owner = FOREIGN_ANY_OWNER,
					     .max_bytes = MAPPED_FILE_MAX_BYTES };
	const struct foreign_rules in_root = { .sz = sizeof(in_root), .follow = true,
					       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
					       .owner = FOREIGN_ANY_OWNER,
					       .max_bytes = MAPPED_FILE_MAX_BYTES };
	const struct foreign_rules ours = { .sz = sizeof(ours),
					    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
					    .owner = FOREIGN_ANY_OWNER,
					    .max_bytes = MAPPED_FILE_MAX_BYTES };
	const char *path = a->has_path ? a->path : NULL;
	char buf[4352];
	struct stat st;
	bool local;
	int fd, root;

	snprintf(buf, sizeof(buf), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, a->proc_root, f->pid,
		 f->start, f->end);
	fd = foreign_file__open(AT_FDCWD, buf, &magic, &st);
	if (fd >= 0 || foreign_file__refused(fd) || !path || *path != '/')
		goto out;
	snprintf(buf, sizeof(buf), "%s/%d/root", a->proc_root, f->pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		fd = foreign_file__open(root, path, &in_root, &st);
		close(root);
	} else if (!strcmp(a->proc_root, "/proc")) {
		fd = foreign_file__open(AT_FDCWD, path, &ours, &st);
	} else {
		fd = -errno;
	}
out:
	if (fd < 0)
		return fd;
	if (st.st_ino != f->ino || (f->dev && st.st_dev != f->dev)) {
		close(fd);
		return -ESTALE;
	}
	local = foreign_file__local(fd);
	if (local)
		file_job__unbounded(job);
	/* Read through a mapping (libelf, libdw): another user's file, or one whose server may
	 * stall, is read from a copy. */
	return foreign_file__private(fd, &st, local, MAPPED_FILE_COPY_MAX_BYTES);
}

int mapped_file__open(const struct mapped_file *f, bool *local)
{
	struct job_arg a = { .f = *f, .has_path = f->path != NULL };

	if (snprintf(a.proc_root, sizeof(a.proc_root), "%s", f->proc_root) >=
		    (int)sizeof(a.proc_root) ||
	    (f->path && snprintf(a.path, sizeof(a.path), "%s", f->path) >= (int)sizeof(a.path)))
		return -ENAMETOOLONG;
	a.f.proc_root = a.f.path = NULL;
	/* Lateness is the file's device's: the server or disk that is late serves them all. A
	 * late open's answer is kept for the next open of the same file. */
	return file_worker__run(open_job, &a, sizeof(a), f->dev, f->ino, local);
}
