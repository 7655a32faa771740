/* foreign_file.h - opening and reading files that another user controls.
 *
 * lxtrace runs as root and reads files that exist because of what some other user did: a
 * process's perf map (/tmp/perf-PID.map), the binaries it maps, their debug files, anything
 * under /proc/PID/root. That user chooses what sits at the path: a symlink to a root-only
 * file (whose text would land in the trace), a FIFO (an open that never returns), /dev/zero
 * (a read that never ends), a huge sparse file, a hard link to someone else's file, a mount.
 * Whatever the file is, opening and reading it here never follows a link the rules forbid,
 * never blocks on it, never reads more than the caller's bound, and tells which rule refused it.
 *
 * Refusals are negative errnos, each with one meaning here (foreign_file__why names them):
 *   -ELOOP   the path goes through a symlink (or a /proc magic link) the rules forbid
 *   -EXDEV   the path crosses a mount point (e.g. a FUSE mount on the file) or leaves dirfd,
 *            where the rules forbid it
 *   -ENXIO   not a regular file (FIFO, socket, device, directory)
 *   -EPERM   owned by someone else than root and the allowed owner
 *   -EMLINK  has other hard links, when the rules want the only one
 *   -EFBIG   larger than the rules' bound
 *   -E2BIG   (reading) a line longer than the reader's bound: not the text the caller expects
 * and, for callers that read a file in steps: -ESTALE, the file shrank between two reads; for
 * callers that parse a file's structure: -ENOBUFS, it declares more memory than they budget
 * (an ELF file's compressed sections, user/stacks/sym_elf.h), and -EOVERFLOW, part of it would
 * take more (its DWARF) and is left unread. Not refusals, but named by foreign_file__why for
 * callers that read a file where a stall costs them nothing (lib/file_worker.h): -ETIMEDOUT,
 * not read in time and its filesystem has not answered since ("read stalled"), and -EAGAIN, not
 * read in time although its filesystem answered, later ("read slow"): whoever owns the file, it
 * is its filesystem that was late. Anything else is the system's own errno (-ENOENT: nothing
 * there).
 *
 * Reads use pread on the descriptor; on a local filesystem, a regular file's read returns.
 * Network and FUSE filesystems can stall a read for as long as their server likes: keep
 * foreign files on the path that may not stall (the mount rule refuses a mount on the file
 * itself), or read them where a stall costs nothing (lib/file_worker.h).
 */
#ifndef LXTRACE_LIB_FOREIGN_FILE_H
#define LXTRACE_LIB_FOREIGN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/openat2.h>

/* No symlink, magic link or mount point anywhere on the path, which stays below dirfd. */
#define FOREIGN_RESOLVE_STRICT \
	(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH)
/* owner: no ownership rule (e.g. a binary a process mapped, which anyone may own). */
#define FOREIGN_ANY_OWNER ((uid_t)-1)

struct foreign_rules {
	size_t sz;		/* sizeof(struct foreign_rules), for growth */
	uint64_t resolve;	/* openat2 RESOLVE_* flags, e.g. FOREIGN_RESOLVE_STRICT; for a
				 * path inside a process's root, RESOLVE_IN_ROOT with dirfd on
				 * /proc/PID/root makes its absolute symlinks stay in that root */
	bool follow;		/* the last component may be a link: a /proc magic link that
				 * names the file itself (/proc/PID/map_files/...), or a symlink
				 * under RESOLVE_IN_ROOT; never with a plain dirfd, where a link
				 * names whatever the user likes, even what he could not open */
	uid_t owner;		/* the file must belong to root or to this user (perf's rule for
				 * perf maps: the process's user); FOREIGN_ANY_OWNER: no rule */
	bool single_link;	/* refuse a file with other hard links (a hard link to a file
				 * the user could not read, where protected_hardlinks is off) */
	uint64_t max_bytes;	/* refuse a larger file; 0: no bound */
};

/* Opens path (relative to dirfd, or absolute when the rules allow) read-only, non-blocking
 * (a FIFO's open returns at once), close-on-exec, without a controlling terminal, and checks
 * it by what the descriptor refers to: a regular file that meets the rules. A link at the end
 * of the path is not followed unless rules->follow. rules NULL: no rule but those. Returns the
 * descriptor, with its stat in *st when st is not NULL, or a negative errno (above). */
int foreign_file__open(int dirfd, const char *path, const struct foreign_rules *rules,
		       struct stat *st);

/* Whether fd's filesystem is one the local kernel serves from memory or its own disks, by
 * fstatfs's f_type, from a list: ext2-4, XFS, Btrfs, F2FS, bcachefs, tmpfs, ramfs, hugetlbfs
 * (memfd code), and the read-only images root mounts (SquashFS, EROFS, ISO 9660). A read of
 * such a file returns; on any other (FUSE, NFS, CIFS, 9p, and any filesystem lxtrace does not
 * know) it waits for whatever serves the file. Not on the list although local: overlayfs, whose
 * layers may be anything (a user namespace's overlay over its owner's FUSE mount), so its files
 * are copied. On FUSE or NFS fstatfs asks the server: call it where a stall costs nothing. */
bool foreign_file__local(int fd);

/* A descriptor of fd's contents that its owner cannot change under a reader that maps it
 * (libelf, libdw), and whose pages a reader that maps it never waits for: a file another user
 * can write may be truncated while it is mapped, and touching a page past the new end kills
 * the reader with SIGBUS; a page of a file on FUSE or NFS waits for the server. So a file root
 * owns that only root can write (st, as fd's), on a local filesystem (local: what
 * foreign_file__local said of fd), comes back as it is (fd itself); any other is copied, at
 * most max bytes (larger: -EFBIG), into a private memory file with the file's owner and mode,
 * and fd is closed (a FUSE server may claim that root owns its file). What the file held when
 * read is the copy: a file cut short meanwhile gives a short copy. Returns the descriptor or a
 * negative errno (fd closed). */
int foreign_file__private(int fd, const struct stat *st, bool local, uint64_t max);

/* Whether err is one of the refusals above (not the system's own error, such as -ENOENT). */
bool foreign_file__refused(int err);

/* A phrase for a refusal of foreign_file__open or foreign_file__lines ("a symbolic link",
 * "not a regular file", ...), or strerror's text for any other errno (err < 0). */
const char *foreign_file__why(int err);

/* Called for each complete line: line is NUL-terminated (the '\n' replaced), len bytes, at
 * file offset off. 0 goes on, > 0 stops the read there (after this line), < 0 stops it and is
 * returned. line may be changed in place. */
typedef int (*foreign_line_fn)(void *ctx, char *line, size_t len, uint64_t off);

/* Reads the lines of fd that end between offsets from and limit (limit 0: the file's end),
 * with pread, so the descriptor's position is untouched. A last line without its '\n' (a
 * writer still appending) is left for the next read: *end (if not NULL) is the offset after
 * the last line handed to fn, where the next read starts. Returns 0 at the limit or the end,
 * fn's own stop (> 0 is returned as 0), -E2BIG at a line longer than max_line bytes (*end at
 * its start), or a negative errno. */
int foreign_file__lines(int fd, uint64_t from, uint64_t limit, size_t max_line,
			foreign_line_fn fn, void *ctx, uint64_t *end);

/* The foreign files a component refused: a count, and the first few named, for a summary.
 * The caller notes each refused file once (it remembers what it gave up on). */
struct foreign_log;

/* keep: how many refusals to name. NULL with errno set. */
struct foreign_log *foreign_log__new(size_t keep);
/* Counts one refused file; names it when fewer than keep are named (path may be NULL or
 * empty: a file known by its device and inode alone). */
void foreign_log__note(struct foreign_log *l, const char *path, int err);
uint64_t foreign_log__count(const struct foreign_log *l);
/* Prints "PREFIX PATH: WHY" for each file named, then "PREFIX ... and N more" when some were
 * not. Prints nothing when none was refused. */
void foreign_log__print(const struct foreign_log *l, FILE *f, const char *prefix);
/* Accepts NULL. */
void foreign_log__free(struct foreign_log *l);

#endif
