/* cfi_cache.h - a binary's compiled unwind rows (cfi.h) kept across recordings in the disk
 * cache (lib/disk_cache.h), so that each recording does not compile every binary again.
 *
 * An entry must never be made from, or given to, a file whose content could differ from what
 * its key says. So only a file that only root can write, on a local filesystem, opened as
 * itself (user/proc/mapped_file.h hands any other as a private copy) has a key: its device,
 * inode, size, mtime and ctime (to the nanosecond), and the build-id of this lxtrace (rows of
 * another build may differ: none are used). Nobody but root can change such a file, and no
 * change of it leaves its ctime as it was, with one gap: a change within the filesystem clock's
 * tick of the last one keeps the same ctime. So an entry is made only of a file whose ctime was
 * over CFI_CACHE_SETTLED_S old before the compile read it and is the same after: every later
 * change then shows. A file whose key matches an entry has not changed since the entry was
 * made.
 */
#ifndef LXTRACE_USER_STACKS_CFI_CACHE_H
#define LXTRACE_USER_STACKS_CFI_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/disk_cache.h"
#include "user/stacks/cfi.h"

/* How long a file's ctime must lie in the past for its rows to be stored: far more than any
 * filesystem clock's tick. */
#define CFI_CACHE_SETTLED_S 2

struct cfi_cache_key {
	uint8_t build_id[24];	/* this lxtrace's (20 bytes from ld), zeros past its end */
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};

/* The key of the file open as fd, which the loader knows as (dev, ino) (st_dev's encoding):
 * true when its rows may come from the cache; *settled then says whether they may also go
 * to it (its ctime is old enough). false: the file is a copy, not only root's to write, not on
 * a local filesystem, or this lxtrace has no build-id. */
bool cfi_cache__key(int fd, uint64_t dev, uint64_t ino, struct cfi_cache_key *k, bool *settled);

/* Whether fd still has key k's identity (after a compile read it). */
bool cfi_cache__same(int fd, const struct cfi_cache_key *k);

/* The rows stored under k into t (t->rows malloc'd, possibly 0 rows: a file without usable
 * CFI), checked: whole rows, sorted. 1 when found, 0 when not (or not usable: dropped,
 * disk_cache__drop), -ENOMEM. More rows than a recording has room for are its to refuse, as
 * compiled ones. */
int cfi_cache__get(struct disk_cache *c, const struct cfi_cache_key *k, struct cfi_table *t);

/* Stores n rows (0: none, as above) under k. 0 or a negative errno (disk_cache__put). */
int cfi_cache__put(struct disk_cache *c, const struct cfi_cache_key *k,
		   const struct lx_cfi_row *rows, size_t n);

#endif
