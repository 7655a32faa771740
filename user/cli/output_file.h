/* output_file.h - the file `lxtrace record` writes its trace to, opened so that no other user
 * can steer where the trace goes or read it.
 *
 * Root writes a trace of the whole machine, often into a shared directory. So:
 *  - no symbolic link anywhere on the path is followed: a user's link to a root file would
 *    otherwise have that file emptied, set 0600 and given away;
 *  - an existing regular file is replaced, never written into: a user who holds it open keeps
 *    the old, empty inode and reads nothing of the trace; and it is replaced only when it
 *    belongs to root or to the invoking user (SUDO_UID), never taken from someone else;
 *  - the trace is a new file, created O_EXCL with mode 0600 beside the path and renamed onto
 *    it before anything is recorded, so that from the start the path names the recording's
 *    file: after kill -9, a crash or power loss, the trace written so far is at the path;
 *  - the file is flock'ed for the whole recording: a second recording to the same path fails
 *    with a one-line error before it starts, instead of replacing the first one's file (the
 *    lock goes with the process, so a killed recording leaves no stale lock); a flight
 *    recorder, which writes beside the path, holds the path by the same lock;
 *  - the file goes to the invoking user (SUDO_UID/SUDO_GID) by fchown on the new file's own
 *    descriptor, which nothing on the path can redirect.
 * An existing character device or FIFO that root or the invoking user owns (-o /dev/null) is
 * written as it is.
 */
#ifndef LXTRACE_USER_CLI_OUTPUT_FILE_H
#define LXTRACE_USER_CLI_OUTPUT_FILE_H

#include <stddef.h>
#include <sys/types.h>

struct output_file;


/* Opens path for the trace, on behalf of user uid, group gid ((uid_t)-1: root's own run; the
 * file stays root's). NULL with errno set and a one-line reason (naming path) in why. */
struct output_file *output_file__open(const char *path, uid_t uid, gid_t gid, char *why,
				      size_t whylen);

/* The same, but the new file is put at path only by output_file__publish, once the recording
 * has started: a start that fails leaves whatever was at path as it was, and no file of its
 * own (output_file__close removes one never published). The checks are made now, so a bad
 * path fails before anything is loaded, and again when it is published, where a path that
 * changed meanwhile can still be refused. A special file (-o /dev/null) is written at once. */
struct output_file *output_file__prepare(const char *path, uid_t uid, gid_t gid, char *why,
					 size_t whylen);

/* Puts a prepared file at its path, as output_file__open would have, its data on the disk
 * first and the directory synced after; on a file already at its path (opened, or published
 * before) syncs its data and the directory again: called once the file is written, it is on
 * the disk whole. A device or FIFO is left as it is. 0, or -errno with a one-line reason
 * (naming the path) in why; a prepared file not put at its path then leaves the path as it
 * was. */
int output_file__publish(struct output_file *f, char *why, size_t whylen);

/* Takes the file as copy(ctx, in, out, why, whylen) makes it anew: in reads the file as it
 * stands (published, written whole), out is a new file made beside the path as
 * output_file__open makes one. Once copy returns 0 the new file, on the disk, is put at the
 * path and is f's file from then on (locked as the old one was). 0, or -errno with a one-line
 * reason (naming the path) in why; then the path keeps the file as it was. A prepared file not
 * yet published (a flight recorder's) is copied the same way at its hidden name, and the copy
 * is what output_file__publish puts at the path. For a regular file only (-EINVAL otherwise). */
int output_file__rewrite(struct output_file *f,
			 int (*copy)(void *ctx, int in, int out, char *why, size_t whylen),
			 void *ctx, char *why, size_t whylen);

/* Holds path for a recording that writes beside it (a flight recorder's numbered files), by
 * the same rules and with the same lock, so that a second recording to path, of either kind,
 * fails as it does for output_file__open: a file already there is locked as it is, never
 * written or replaced; where there is none, an empty one (made as output_file__open makes its
 * file) stands in until output_file__close takes it away. Fails too when no file can be made
 * in path's directory. NULL with errno set and a one-line reason (naming path) in why. */
struct output_file *output_file__hold(const char *path, uid_t uid, gid_t gid, char *why,
				      size_t whylen);

/* Where the trace is written. */
int output_file__fd(const struct output_file *f);

/* Closes the file (which releases the lock), after taking away the stand-in output_file__hold
 * made. Returns 0, or -errno when close reports a write error. Accepts NULL. */
int output_file__close(struct output_file *f);

/* Takes away a file that could not be written whole (a flight recorder's), if its name in the
 * directory it was made in is still this file's, and closes it. */
void output_file__remove(struct output_file *f);

#endif
