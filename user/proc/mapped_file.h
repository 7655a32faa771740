/* mapped_file.h - opening the file behind a process's executable mapping, to read its symbols
 * or its call-frame information.
 *
 * The mapping names the file by (device, inode); its path is only a hint, and any user may have
 * put something else there since. So the file is opened through /proc/PID/map_files (the
 * kernel's link to the mapped file itself, which reaches it even when it was deleted, replaced
 * or is in another mount namespace); failing that, by its path as the process sees it,
 * resolved inside the process's root (an absolute symlink there stays there); and when the
 * process is gone, by the path as lxtrace sees it, with no symlink anywhere on it. Every open
 * follows lib/foreign_file.h (a regular file, opened without blocking, at most
 * MAPPED_FILE_MAX_BYTES), and a path counts only if it leads to that very (device, inode).
 * What comes back is the file itself when only root can write it and it lies on a local
 * filesystem (foreign_file__local), else a private copy.
 *
 * The open, the checks and the copy run in the file worker (lib/file_worker.h), never on the
 * caller's thread: a file on FUSE or NFS may be served by a program that never answers, and so
 * may be the path to it. A file that does not come in time is -ETIMEDOUT, and so is at once
 * every other one of its device while that job runs: late, to be asked for again (the worker
 * tells a stalled filesystem from a slow one by whether its late job ends).
 */
#ifndef LXTRACE_USER_PROC_MAPPED_FILE_H
#define LXTRACE_USER_PROC_MAPPED_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* No binary is larger: a bound on what a file another user mapped can make lxtrace read. */
#define MAPPED_FILE_MAX_BYTES (4ull << 30)
/* A file another user can write is read from a private copy (lib/foreign_file.h,
 * foreign_file__private: truncated under a mapping, it would kill the recorder with SIGBUS),
 * held in memory as long as it is read: at most this large. */
#define MAPPED_FILE_COPY_MAX_BYTES (1ull << 30)

struct mapped_file {
	const char *proc_root;	/* "/proc", or a test's stand-in (then lxtrace's own view of a
				 * path, which would be the machine's, is not tried) */
	pid_t pid;
	uint64_t start, end;	/* the mapping */
	const char *path;	/* the file's path, or NULL */
	uint64_t dev, ino;	/* st_dev (makedev) and inode; dev 0: any device */
};

/* The file's descriptor, or a negative errno: lib/foreign_file.h's refusals
 * (foreign_file__refused), -ETIMEDOUT (late: ask again), -ESTALE when the path leads to another
 * file, or the system's. *local (if not NULL): whether the file lies on a local filesystem
 * (the descriptor may still be a copy, of another user's file). */
int mapped_file__open(const struct mapped_file *f, bool *local);

#endif
