/* disk_cache.h - what a run computed, kept on disk for the next runs: entries by key in one
 * directory that only this user (root) can enter, bounded in size.
 *
 * The directory is what makes an entry trustworthy, so it is taken only as it must be: reached
 * with no symlink anywhere on its path (openat2 RESOLVE_NO_SYMLINKS), created with mode 0700
 * when missing (in its parent, opened the same way, which must exist), and refused unless it
 * is a directory owned by this process's user that nobody else may enter (no group or other
 * bits): another user who could write there could plant entries. Everything after goes through the directory's descriptor,
 * so a path renamed or replaced later changes nothing.
 *
 * An entry is a file named by a hash of its key, holding the whole key, the data and a CRC-32
 * of both: a different key under the same name is a miss, and an entry that is short, long, of
 * another format or fails its checksum is counted as corrupt, removed, and a miss. An entry that
 * is not a regular file of this user with a single link is refused the same way. Entries are
 * written atomically: a temporary file in the directory, written, fsync'ed, renamed over the
 * name; a reader sees the old entry or the new, never a part.
 *
 * The bound: once the entries pass max_bytes, the least recently used (a hit touches its
 * entry's mtime) are removed until they fill three quarters of it. Temporary files a crashed
 * run left (ten minutes old) are removed at the open and at each eviction. Several runs may share the directory: each keeps its own
 * count of the bytes, corrected by the scan each eviction makes.
 *
 * Thread-safe: one lock around each call.
 */
#ifndef LXTRACE_LIB_DISK_CACHE_H
#define LXTRACE_LIB_DISK_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Where lxtrace keeps its cache unless told otherwise, and its bound. */
#define DISK_CACHE_DEFAULT_DIR "/var/cache/lxtrace"
#define DISK_CACHE_DEFAULT_MAX (256ull << 20)
/* The longest key. */
#define DISK_CACHE_KEY_MAX 256

struct disk_cache;

struct disk_cache_stats {
	uint64_t hits, misses;
	uint64_t corrupt;	/* entries ignored and removed: short, bad checksum, not a file */
	uint64_t stored;	/* entries written */
	uint64_t store_failed;	/* entries that could not be written (disk full, ...) */
	uint64_t evicted;	/* entries removed for the bound */
	uint64_t bytes;		/* what the entries fill, as this run counts */
};

/* Opens (creating it when missing) the directory dir as above, bounded to max_bytes. NULL with
 * errno: ELOOP (a symlink on the path), EPERM (not this user's, or others may enter it),
 * ENOTDIR, or the system's own. */
struct disk_cache *disk_cache__open(const char *dir, uint64_t max_bytes);

/* The data stored under key (klen bytes, at most DISK_CACHE_KEY_MAX): 1 with *data (malloc'd,
 * the caller frees it) and *len, 0 when there is none or it was corrupt (counted), or -ENOMEM. */
int disk_cache__get(struct disk_cache *c, const void *key, size_t klen, void **data, size_t *len);

/* Stores len bytes of data under key, replacing what was there, then evicts if the entries
 * passed the bound. 0, -EFBIG when the entry alone would pass it, or the system's errno. */
int disk_cache__put(struct disk_cache *c, const void *key, size_t klen, const void *data,
		    size_t len);

/* The entry under key, whose data a hit gave but the caller found corrupt: removed, and counted
 * as corrupt. */
void disk_cache__drop(struct disk_cache *c, const void *key, size_t klen);

const char *disk_cache__dir(const struct disk_cache *c);
uint64_t disk_cache__max(const struct disk_cache *c);
void disk_cache__stats(struct disk_cache *c, struct disk_cache_stats *out);

/* Accepts NULL. */
void disk_cache__free(struct disk_cache *c);

#endif
