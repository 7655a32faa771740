/* output_file.c - the record's output file: no links followed, no file taken over, the new
 * file in place and locked from the start (output_file.h).
 *
 * Every step names the file by (directory descriptor, last component), with the directory
 * opened once, so a path changed by someone else meanwhile can make an open fail but never
 * make it land elsewhere. The existing file is locked before it is replaced and checked to be
 * still the one at the path afterwards, so two recordings racing for one path cannot both win.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "user/cli/output_file.h"

/* The path changing under us this many times in a row: give up. */
#define ATTEMPTS 8

struct output_file {
	int fd;
	int dirfd;		/* the directory it was made in (O_PATH), for output_file__remove */
	char *base;		/* its name there */
	bool stand_in;		/* the empty file output_file__hold made: gone on close */
};

/* openat2 with resolve flags that refuse every symlink and /proc magic link on the path. */
static int open_nolinks(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		/* openat2 takes no other flags with O_PATH. */
		.flags = (uint64_t)flags | O_CLOEXEC | (flags & O_PATH ? 0 : O_NOCTTY),
		.mode = mode,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A new file at base, locked and given to uid:gid, made under a random hidden name and
 * renamed onto base: replacing what is there when replace, else only if base is still free
 * (-EEXIST otherwise). Returns its descriptor or -errno. */
static int create_at(int dirfd, const char *base, uid_t uid, gid_t gid, bool replace)
{
	char tmp[64];
	int fd = -EEXIST, err;

	for (int i = 0; i < ATTEMPTS && fd == -EEXIST; i++) {
		uint32_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r ^= (uint32_t)getpid() << 8 ^ (uint32_t)i;
		snprintf(tmp, sizeof(tmp), ".lxtrace-record-%08x", r);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		return fd;
	/* Nobody else can have it open yet: this lock never waits. */
	if (flock(fd, LOCK_EX | LOCK_NB) || (uid != (uid_t)-1 && fchown(fd, uid, gid)) ||
	    (replace ? renameat(dirfd, tmp, dirfd, base) :
		       renameat2(dirfd, tmp, dirfd, base, RENAME_NOREPLACE))) {
		err = -errno;
		unlinkat(dirfd, tmp, 0);
		close(fd);
		return err;
	}
	return fd;
}

/* Locks the file at base (st: its lstat) as it is, when no recording holds it, and checks it
 * is still the one at base. Returns a read-only descriptor holding the lock, or -errno:
 * -EAGAIN when the path changed meanwhile, -EBUSY when another recording holds it. */
static int lock_at(int dirfd, const char *base, const struct stat *st)
{
	struct stat now;
	int fd, err;

	fd = open_nolinks(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd == -ENOENT || fd == -ELOOP)
		return -EAGAIN;
	if (fd < 0)
		return fd;
	if (fstat(fd, &now) || !same_file(&now, st)) {
		close(fd);
		return -EAGAIN;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return err;
	}
	/* A recording that held it until now may have replaced it on its way out. */
	if (fstatat(dirfd, base, &now, AT_SYMLINK_NOFOLLOW) || !same_file(&now, st)) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* Takes over the regular file at base (st: its lstat) when no recording holds it: locks it
 * and puts a new file in its place. -EAGAIN when the path changed meanwhile, -EBUSY when
 * another recording holds it. */
static int replace_at(int dirfd, const char *base, const struct stat *st, uid_t uid, gid_t gid)
{
	int old = lock_at(dirfd, base, st), fd;

	if (old < 0)
		return old;
	fd = create_at(dirfd, base, uid, gid, true);
	close(old);
	return fd;
}

/* A character device or FIFO at base (-o /dev/null) is written as it is, if it is still the
 * one that was checked. */
static int open_special(int dirfd, const char *base, const struct stat *st)
{
	struct stat now;
	int fd = open_nolinks(dirfd, base, O_WRONLY | O_NOFOLLOW, 0);

	if (fd == -ENOENT || fd == -ELOOP)
		return -EAGAIN;
	if (fd >= 0 && (fstat(fd, &now) || !same_file(&now, st))) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* Opens path's directory (O_PATH, no link on the way followed) and points *base at the file's
 * name in it. Returns the directory's descriptor or -errno, with *what set when errno alone
 * would not say why. */
static int open_parent(const char *path, const char **base, const char **what)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dirfd;

	*base = slash ? slash + 1 : path;
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return -EISDIR;
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	dirfd = open_nolinks(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	free(dir);
	if (dirfd == -ELOOP)
		*what = "its directory's path goes through a symbolic link, which lxtrace does not "
			"follow: give the path without links";
	return dirfd;
}

/* The file for path, opened to be written (output_file__open) or held as it is (hold). */
static struct output_file *open_path(const char *path, uid_t uid, gid_t gid, bool hold,
				     char *why, size_t whylen)
{
	const char *base, *what = NULL;
	struct output_file *f = NULL;
	int dirfd, fd = -EAGAIN;
	bool made = false;
	struct stat st;

	dirfd = open_parent(path, &base, &what);
	if (dirfd < 0) {
		fd = dirfd;
		goto out;
	}
	/* The files a holder makes later go in this directory: fail now if they cannot. */
	if (hold && faccessat(dirfd, "", W_OK | X_OK, AT_EMPTY_PATH)) {
		fd = -errno;
		goto out;
	}
	for (int i = 0; i < ATTEMPTS && fd == -EAGAIN; i++) {
		if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
			fd = errno == ENOENT ? create_at(dirfd, base, uid, gid, false) : -errno;
			if (fd == -EEXIST)
				fd = -EAGAIN;
			made = fd >= 0;
		} else if (S_ISLNK(st.st_mode)) {
			fd = -ELOOP;
			what = "is a symbolic link, which lxtrace does not write through";
		} else if (st.st_uid != 0 && st.st_uid != uid) {
			fd = -EPERM;
			what = "belongs to another user; lxtrace replaces only root's files and "
			       "the invoking user's";
		} else if (hold && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) ||
				    S_ISFIFO(st.st_mode))) {
			fd = lock_at(dirfd, base, &st);
		} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
			fd = open_special(dirfd, base, &st);
		} else if (S_ISREG(st.st_mode)) {
			fd = replace_at(dirfd, base, &st, uid, gid);
		} else {
			fd = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			what = S_ISDIR(st.st_mode) ? NULL : "is not a regular file";
		}
	}
	if (fd == -EAGAIN)
		what = "the path kept changing while it was being opened";
	if (fd == -EBUSY)
		what = "another recording is writing it";
	if (fd >= 0) {
		f = malloc(sizeof(*f));
		if (f && !(f->base = strdup(base))) {
			free(f);
			f = NULL;
		}
		if (!f) {
			if (made)
				unlinkat(dirfd, base, 0);
			close(fd);
			fd = -ENOMEM;
		}
	}
out:
	if (!f) {
		if (dirfd >= 0)
			close(dirfd);
		snprintf(why, whylen, "%s: %s", path, what ? what : strerror(-fd));
		errno = -fd;
		return NULL;
	}
	f->fd = fd;
	f->dirfd = dirfd;
	f->stand_in = hold && made;
	return f;
}

struct output_file *output_file__open(const char *path, uid_t uid, gid_t gid, char *why,
				      size_t whylen)
{
	return open_path(path, uid, gid, false, why, whylen);
}

struct output_file *output_file__hold(const char *path, uid_t uid, gid_t gid, char *why,
				      size_t whylen)
{
	return open_path(path, uid, gid, true, why, whylen);
}

int output_file__fd(const struct output_file *f)
{
	return f->fd;
}

/* Takes away f's name in the directory it was made in, if that name is still f's file: what
 * someone put in its place stays. */
static void unlink_own(const struct output_file *f)
{
	struct stat ours, now;

	if (!fstat(f->fd, &ours) && S_ISREG(ours.st_mode) &&
	    !fstatat(f->dirfd, f->base, &now, AT_SYMLINK_NOFOLLOW) && same_file(&ours, &now))
		unlinkat(f->dirfd, f->base, 0);
}

int output_file__close(struct output_file *f)
{
	int err = 0;

	if (!f)
		return 0;
	/* While the lock is held: no other recording can have put its file at the name. */
	if (f->stand_in)
		unlink_own(f);
	if (close(f->fd))
		err = -errno;
	close(f->dirfd);
	free(f->base);
	free(f);
	return err;
}

void output_file__remove(struct output_file *f)
{
	unlink_own(f);
	output_file__close(f);
}
