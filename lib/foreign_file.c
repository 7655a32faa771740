/* foreign_file.c - opens files another user controls under explicit rules, reads their lines
 * within bounds, and keeps the list of those refused (foreign_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/escape.h"
#include "lib/foreign_file.h"

/* bcachefs's f_type, which Debian 12's <linux/magic.h> lacks. */
#define BCACHEFS_STATFS_MAGIC 0xca451a4e

/* What pread asks for at a time, beyond the line carried over from the last one. */
#define CHUNK (64 * 1024)

int foreign_file__open(int dirfd, const char *path, const struct foreign_rules *rules,
		       struct stat *st)
{
	struct foreign_rules r = { .owner = FOREIGN_ANY_OWNER };
	/* O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise. */
	struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC };
	struct stat s;
	int fd, err;

	if (rules)
		memcpy(&r, rules, rules->sz < sizeof(r) ? rules->sz : sizeof(r));
	how.resolve = r.resolve;
	if (!r.follow)
		how.flags |= O_NOFOLLOW;
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &s)) {
		err = -errno;
		goto refuse;
	}
	if (!S_ISREG(s.st_mode))
		err = -ENXIO;
	else if (r.owner != FOREIGN_ANY_OWNER && s.st_uid != 0 && s.st_uid != r.owner)
		err = -EPERM;
	else if (r.single_link && s.st_nlink != 1)
		err = -EMLINK;
	else if (r.max_bytes && (uint64_t)s.st_size > r.max_bytes)
		err = -EFBIG;
	else
		err = 0;
	if (err)
		goto refuse;
	if (st)
		*st = s;
	return fd;
refuse:
	close(fd);
	return err;
}

bool foreign_file__refused(int err)
{
	return err == -ELOOP || err == -EXDEV || err == -ENXIO || err == -EPERM || err == -EMLINK ||
	       err == -EFBIG || err == -E2BIG || err == -ENOBUFS || err == -EOVERFLOW;
}

const char *foreign_file__why(int err)
{
	switch (err) {
	case -ELOOP:
		return "a symbolic link";
	case -EXDEV:
		return "across a mount point or out of its directory";
	case -ENXIO:
		return "not a regular file";
	case -EPERM:
		return "owned by another user";
	case -EMLINK:
		return "has other hard links";
	case -EFBIG:
		return "too large";
	case -E2BIG:
		return "a line too long";
	case -ENOBUFS:
		return "compressed sections inflating past the budget";
	case -EOVERFLOW:
		return "DWARF past the budget (read for symbols only)";
	case -ESTALE:
		return "shrank while being read";
	case -ETIMEDOUT:
		return "read stalled";
	case -EAGAIN:
		return "read slow";
	default:
		return strerror(-err);
	}
}

int foreign_file__lines(int fd, uint64_t from, uint64_t limit, size_t max_line,
			foreign_line_fn fn, void *ctx, uint64_t *end)
{
	size_t cap = CHUNK + max_line + 1, have = 0;	/* have: bytes of an unfinished line */
	uint64_t pos = from, line_off = from;		/* pos: next byte to read */
	char *buf = malloc(cap);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t want = cap - 1 - have, start = 0;
		ssize_t n;
		char *nl;

		if (limit && pos >= limit)
			break;
		if (limit && want > limit - pos)
			want = (size_t)(limit - pos);
		n = pread(fd, buf + have, want, (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		pos += (uint64_t)n;
		have += (size_t)n;
		while ((nl = memchr(buf + start, '\n', have - start))) {
			size_t len = (size_t)(nl - (buf + start));

			if (len > max_line) {
				err = -E2BIG;
				break;
			}
			*nl = '\0';
			err = fn(ctx, buf + start, len, line_off);
			start += len + 1;
			line_off += len + 1;
			if (err)
				break;
		}
		if (err)
			break;
		/* What is left is the start of a line: longer than allowed already, or kept. */
		if (have - start > max_line) {
			err = -E2BIG;
			break;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	free(buf);
	if (end)
		*end = line_off;
	return err > 0 ? 0 : err;
}

struct refusal {
	char *path;
	int err;
};

struct foreign_log {
	uint64_t count;
	size_t keep, named;
	struct refusal list[];
};

struct foreign_log *foreign_log__new(size_t keep)
{
	struct foreign_log *l = calloc(1, sizeof(*l) + keep * sizeof(l->list[0]));

	if (l)
		l->keep = keep;
	return l;
}

void foreign_log__note(struct foreign_log *l, const char *path, int err)
{
	l->count++;
	if (l->named < l->keep) {
		/* A file known by its device and inode alone (deleted, an anonymous memfd): an
		 * empty line would say nothing. */
		l->list[l->named].path = strdup(path && *path ? path : "(a file without a path)");
		l->list[l->named].err = err;
		l->named += l->list[l->named].path != NULL;
	}
}

uint64_t foreign_log__count(const struct foreign_log *l)
{
	return l->count;
}

void foreign_log__print(const struct foreign_log *l, FILE *f, const char *prefix)
{
	for (size_t i = 0; i < l->named; i++) {
		fprintf(f, "%s ", prefix);
		escape__print(f, l->list[i].path, strlen(l->list[i].path));
		fprintf(f, ": %s\n", foreign_file__why(l->list[i].err));
	}
	if (l->count > l->named)
		fprintf(f, "%s ... and %llu more\n", prefix, (unsigned long long)(l->count - l->named));
}

void foreign_log__free(struct foreign_log *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->named; i++)
		free(l->list[i].path);
	free(l);
}

bool foreign_file__local(int fd)
{
	static const unsigned long local[] = {
		EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, F2FS_SUPER_MAGIC,
		BCACHEFS_STATFS_MAGIC, TMPFS_MAGIC, RAMFS_MAGIC, HUGETLBFS_MAGIC, SQUASHFS_MAGIC,
		EROFS_SUPER_MAGIC_V1, ISOFS_SUPER_MAGIC,
	};
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return false;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((unsigned long)sf.f_type == local[i])
			return true;
	return false;
}

/* All n bytes to fd: a short write goes on from where it stopped, and one that writes
 * nothing is an error. 0 or a negative errno. */
static int write_whole(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int foreign_file__private(int fd, const struct stat *st, bool local, uint64_t max)
{
	char buf[65536];
	uint64_t off = 0;
	int copy, err = 0;

	if (local && st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return fd;
	if ((uint64_t)st->st_size > max) {
		close(fd);
		return -EFBIG;
	}
	copy = memfd_create("lxtrace-foreign", MFD_CLOEXEC);
	/* The copy keeps the file's owner and mode: what readers decide by them (whose file it
	 * is, who could write it) holds for the copy as for the file. */
	if (copy < 0 || fchown(copy, st->st_uid, st->st_gid) || fchmod(copy, st->st_mode & 07777)) {
		err = -errno;
		if (copy >= 0)
			close(copy);
		close(fd);
		return err;
	}
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || off + (uint64_t)n > max) {
			err = n < 0 ? -errno : 0;
			break;
		}
		err = write_whole(copy, buf, (size_t)n);
		if (err)
			break;
		off += (uint64_t)n;
	}
	close(fd);
	if (err) {
		close(copy);
		return err;
	}
	return copy;
}
