/* mapped_file.c - the file behind a process's mapping, opened as a file another user controls. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "user/proc/mapped_file.h"

int mapped_file__open(const struct mapped_file *f)
{
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
	char buf[4352];
	struct stat st;
	int fd, root;

	snprintf(buf, sizeof(buf), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, f->proc_root, f->pid,
		 f->start, f->end);
	fd = foreign_file__open(AT_FDCWD, buf, &magic, &st);
	if (fd >= 0 || foreign_file__refused(fd) || !f->path || *f->path != '/')
		goto out;
	snprintf(buf, sizeof(buf), "%s/%d/root", f->proc_root, f->pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		fd = foreign_file__open(root, f->path, &in_root, &st);
		close(root);
	} else if (!strcmp(f->proc_root, "/proc")) {
		fd = foreign_file__open(AT_FDCWD, f->path, &ours, &st);
	} else {
		fd = -errno;
	}
out:
	if (fd >= 0 && (st.st_ino != f->ino || (f->dev && st.st_dev != f->dev))) {
		close(fd);
		return -ESTALE;
	}
	/* Read through a mapping (libelf, libdw): another user's file is read from a copy. */
	return fd >= 0 ? foreign_file__private(fd, &st, MAPPED_FILE_COPY_MAX_BYTES) : fd;
}
