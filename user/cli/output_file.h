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
 *    lock goes with the process, so a killed recording leaves no stale lock);
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

/* Whether files can be made beside path later (a flight recorder's numbered files), by the
 * same rules: 0, or -errno with a one-line reason (naming path) in why. */
int output_file__check_dir(const char *path, char *why, size_t whylen);

/* Where the trace is written. */
int output_file__fd(const struct output_file *f);

/* Closes the file (which releases the lock). Returns 0, or -errno when close reports a write
 * error. Accepts NULL. */
int output_file__close(struct output_file *f);

/* Takes away a file that could not be written whole (a flight recorder's), if its name in the
 * directory it was made in is still this file's, and closes it. */
void output_file__remove(struct output_file *f);

#endif
