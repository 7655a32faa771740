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
	char tmp[32];		/* output_file__prepare's hidden name until published; "" after */
	uid_t uid;		/* the invoking user, whose files may be replaced */
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

/* A new file, locked and given to uid:gid, made under a random hidden name (written to tmp,
 * sizeof(struct output_file.tmp) bytes) in the directory. Returns its descriptor or -errno. */
static int make_temp(int dirfd, uid_t uid, gid_t gid, char *tmp)
{
	int fd = -EEXIST, err;

	for (int i = 0; i < ATTEMPTS && fd == -EEXIST; i++) {
		uint32_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r ^= (uint32_t)getpid() << 8 ^ (uint32_t)i;
		snprintf(tmp, sizeof(((struct output_file *)0)->tmp), ".lxtrace-record-%08x", r);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		return fd;
	/* Nobody else can have it open yet: this lock never waits. */
	if (flock(fd, LOCK_EX | LOCK_NB) || (uid != (uid_t)-1 && fchown(fd, uid, gid))) {
		err = -errno;
		unlinkat(dirfd, tmp, 0);
		close(fd);
		return err;
	}
	return fd;
}

/* A new file at base, locked and given to uid:gid, made under a hidden name and renamed onto
 * base only if base is still free (-EEXIST otherwise). Returns its descriptor or -errno. */
static int create_at(int dirfd, const char *base, uid_t uid, gid_t gid)
{
	char tmp[32];
	int fd = make_temp(dirfd, uid, gid, tmp), err;

	if (fd >= 0 && renameat2(dirfd, tmp, dirfd, base, RENAME_NOREPLACE)) {
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

/* What a recording may not take the place of, whatever else is there: a link, another user's
 * file. 0, or -errno with *what set. */
static int refuse(const struct stat *st, uid_t uid, const char **what)
{
	if (S_ISLNK(st->st_mode)) {
		*what = "is a symbolic link, which lxtrace does not write through";
		return -ELOOP;
	}
	if (st->st_uid != 0 && st->st_uid != uid) {
		*what = "belongs to another user; lxtrace replaces only root's files and the "
			"invoking user's";
		return -EPERM;
	}
	return 0;
}

/* Puts the hidden file tmp at base, by the rules of output_file.h: where base is free, only if it
 * still is; over a regular file of root or of uid that no recording holds, locked while it is
 * replaced; never over a link or anything else. dry: every check, nothing moved. 0, or -errno
 * with *what set when errno alone would not say why. */
static int put_at(int dirfd, const char *tmp, const char *base, uid_t uid, bool dry,
		  const char **what)
{
	int err = -EAGAIN;

	for (int i = 0; i < ATTEMPTS && err == -EAGAIN; i++) {
		struct stat st;
		int old;

		if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno != ENOENT)
				return -errno;
			if (dry)
				return 0;
			err = renameat2(dirfd, tmp, dirfd, base, RENAME_NOREPLACE) ? -errno : 0;
			if (err == -EEXIST)
				err = -EAGAIN;
		} else if ((err = refuse(&st, uid, what)) != 0) {
			return err;
		} else if (!S_ISREG(st.st_mode)) {
			*what = S_ISDIR(st.st_mode) ? NULL : "is not a regular file";
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		} else {
			old = lock_at(dirfd, base, &st);
			if (old < 0) {
				err = old;
				continue;
			}
			err = dry || !renameat(dirfd, tmp, dirfd, base) ? 0 : -errno;
			close(old);
		}
	}
	if (err == -EAGAIN)
		*what = "the path kept changing while it was being opened";
	if (err == -EBUSY)
		*what = "another recording is writing it";
	return err;
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

enum how {
	HOW_OPEN,	/* a new file at the path now */
	HOW_PREPARE,	/* a new file, put at the path by output_file__publish */
	HOW_HOLD,	/* the path held as it is (output_file__hold) */
};

/* What a holder locks: the file at base as it is, or a stand-in made where there is none
 * (*made). Returns a descriptor or -errno, with *what set when errno alone would not say why. */
static int hold_at(int dirfd, const char *base, uid_t uid, gid_t gid, bool *made,
		   const char **what)
{
	int fd = -EAGAIN;

	for (int i = 0; i < ATTEMPTS && fd == -EAGAIN; i++) {
		struct stat st;

		if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
			fd = errno == ENOENT ? create_at(dirfd, base, uid, gid) : -errno;
			if (fd == -EEXIST)
				fd = -EAGAIN;
			*made = fd >= 0;
		} else if ((fd = refuse(&st, uid, what)) == 0) {
			fd = S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ?
			     lock_at(dirfd, base, &st) : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			if (fd == -EINVAL)
				*what = "is not a regular file";
		}
	}
	if (fd == -EAGAIN)
		*what = "the path kept changing while it was being opened";
	if (fd == -EBUSY)
		*what = "another recording is writing it";
	return fd;
}

/* A character device or FIFO of root's or uid's at base (-o /dev/null), opened as it is; -ENOENT
 * when base is none. */
static int special_at(int dirfd, const char *base, uid_t uid, const char **what)
{
	int fd = -EAGAIN;

	for (int i = 0; i < ATTEMPTS && fd == -EAGAIN; i++) {
		struct stat st;

		if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) ||
		    !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
			return -ENOENT;
		fd = refuse(&st, uid, what);
		if (!fd)
			fd = open_special(dirfd, base, &st);
	}
	if (fd == -EAGAIN)
		*what = "the path kept changing while it was being opened";
	return fd;
}

/* The file for path, opened to be written now or once published, or held as it is. */
static struct output_file *open_path(const char *path, uid_t uid, gid_t gid, enum how how,
				     char *why, size_t whylen)
{
	const char *base, *what = NULL;
	struct output_file *f = NULL;
	int dirfd, fd = -EAGAIN, err;
	bool made = false;
	char tmp[32] = "";

	dirfd = open_parent(path, &base, &what);
	if (dirfd < 0) {
		fd = dirfd;
		goto out;
	}
	/* The files a holder makes later go in this directory: fail now if they cannot. */
	if (how == HOW_HOLD && faccessat(dirfd, "", W_OK | X_OK, AT_EMPTY_PATH)) {
		fd = -errno;
		goto out;
	}
	if (how == HOW_HOLD) {
		fd = hold_at(dirfd, base, uid, gid, &made, &what);
	} else if ((fd = special_at(dirfd, base, uid, &what)) == -ENOENT) {
		/* A new file, made hidden and put at the path (or only checked to fit there, for
		 * output_file__publish to put it). */
		fd = make_temp(dirfd, uid, gid, tmp);
		err = fd < 0 ? 0 : put_at(dirfd, tmp, base, uid, how == HOW_PREPARE, &what);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			close(fd);
			fd = err;
		}
		made = how == HOW_OPEN && fd >= 0;
		if (how == HOW_OPEN)
			tmp[0] = '\0';
	}
	if (fd >= 0) {
		f = calloc(1, sizeof(*f));
		if (f && !(f->base = strdup(base))) {
			free(f);
			f = NULL;
		}
		if (!f) {
			unlinkat(dirfd, made ? base : tmp, 0);
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
	f->stand_in = how == HOW_HOLD && made;
	f->uid = uid;
	snprintf(f->tmp, sizeof(f->tmp), "%s", tmp);
	return f;
}

struct output_file *output_file__open(const char *path, uid_t uid, gid_t gid, char *why,
				      size_t whylen)
{
	return open_path(path, uid, gid, HOW_OPEN, why, whylen);
}

struct output_file *output_file__prepare(const char *path, uid_t uid, gid_t gid, char *why,
					 size_t whylen)
{
	return open_path(path, uid, gid, HOW_PREPARE, why, whylen);
}

/* The directory's entry for the file on the disk: fsync needs a descriptor that can be read,
 * which the O_PATH one kept cannot. */
static int sync_dir(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

int output_file__publish(struct output_file *f, char *why, size_t whylen)
{
	const char *what = NULL;
	struct stat st;
	int err;

	/* A device or FIFO (-o /dev/null) keeps nothing to sync. */
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode) || f->stand_in)
		return 0;
	/* The data on the disk before the name points at it: a crash then leaves the old file or
	 * the new one whole, and a full disk is said now, while the old file is still there. */
	if (fdatasync(f->fd)) {
		err = -errno;
		snprintf(why, whylen, "%s: writing it: %s%s", f->base, strerror(-err),
			 f->tmp[0] ? " (nothing was put at the path)" : "");
		return err;
	}
	if (f->tmp[0]) {
		err = put_at(f->dirfd, f->tmp, f->base, f->uid, false, &what);
		if (err) {
			snprintf(why, whylen, "%s: %s", f->base, what ? what : strerror(-err));
			return err;
		}
		f->tmp[0] = '\0';
	}
	err = sync_dir(f->dirfd);
	if (err)
		snprintf(why, whylen, "%s: syncing its directory: %s", f->base, strerror(-err));
	return err;
}

int output_file__rewrite(struct output_file *f,
			 int (*copy)(void *ctx, int in, int out, char *why, size_t whylen),
			 void *ctx, char *why, size_t whylen)
{
	/* A prepared file (a flight recorder's, not yet published) is copied at its hidden name. */
	const bool prepared = f->tmp[0];
	const char *name = prepared ? f->tmp : f->base;
	struct stat ours, at;
	char tmp[sizeof(f->tmp)], how[256] = "";
	int in, out, err;

	if (fstat(f->fd, &ours) || !S_ISREG(ours.st_mode) || f->stand_in) {
		snprintf(why, whylen, "%s: not a recording's regular file", f->base);
		return -EINVAL;
	}
	/* Read through the path, checked to be still this file (which holds the lock). */
	in = open_nolinks(f->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (in >= 0 && (fstat(in, &at) || !same_file(&at, &ours))) {
		close(in);
		in = -EAGAIN;
	}
	if (in < 0) {
		snprintf(why, whylen, "%s: %s", f->base, in == -EAGAIN ?
			 "the path no longer names the recording's file" : strerror(-in));
		return in;
	}
	out = make_temp(f->dirfd, ours.st_uid, ours.st_gid, tmp);	/* the same owner */
	err = out < 0 ? out : copy(ctx, in, out, how, sizeof(how));
	close(in);
	if (!err && !prepared && fdatasync(out))
		err = -errno;
	/* Still ours at the path (no recording could take it: we hold its lock). */
	if (!err && (fstatat(f->dirfd, name, &at, AT_SYMLINK_NOFOLLOW) ||
		     !same_file(&at, &ours)))
		err = -EAGAIN;
	/* A prepared file's copy takes its place unpublished: output_file__publish puts it at
	 * the path, synced, as it would have put the file it replaces. */
	if (!err && (prepared ? unlinkat(f->dirfd, name, 0) :
				renameat(f->dirfd, tmp, f->dirfd, f->base)))
		err = -errno;
	if (err) {
		if (out >= 0) {
			unlinkat(f->dirfd, tmp, 0);
			close(out);
		}
		snprintf(why, whylen, "%s: %s", f->base, how[0] ? how : err == -EAGAIN ?
			 "the path no longer names the recording's file" : strerror(-err));
		return err;
	}
	close(f->fd);
	f->fd = out;
	if (prepared) {
		memcpy(f->tmp, tmp, sizeof(f->tmp));
		return 0;
	}
	err = sync_dir(f->dirfd);
	if (err)
		snprintf(why, whylen, "%s: syncing its directory: %s", f->base, strerror(-err));
	return err;
}

struct output_file *output_file__hold(const char *path, uid_t uid, gid_t gid, char *why,
				      size_t whylen)
{
	return open_path(path, uid, gid, HOW_HOLD, why, whylen);
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
	/* Never published: a recording that did not start leaves nothing. */
	if (f->tmp[0])
		unlinkat(f->dirfd, f->tmp, 0);
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
