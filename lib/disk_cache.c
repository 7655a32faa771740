/* disk_cache.c - entries kept across runs in a root-only directory (disk_cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/disk_cache.h"
#include "lib/grow.h"
#include "lib/hash.h"

/* The first bytes of an entry: this format. */
static const char MAGIC[8] = "LXCACHE1";

struct header {
	char magic[8];
	uint32_t klen;
	uint32_t crc;		/* CRC-32 of the key and the data */
	uint64_t len;		/* of the data */
};

/* Temporary files start so: never an entry's name (16 hex digits). */
#define TMP_PREFIX ".tmp."
/* A temporary file this old belongs to no run still writing it. */
#define TMP_STALE_S 600

struct disk_cache {
	pthread_mutex_t lock;
	int dirfd;
	uint64_t max;
	char dir[PATH_MAX];
	unsigned tmp_seq;
	struct disk_cache_stats st;
};

/* An entry's name: its key's hash, 16 hex digits. */
static void entry_name(const void *key, size_t klen, char name[17])
{
	snprintf(name, 17, "%016" PRIx64, hash_mix(hash_bytes(HASH_BYTES_INIT, key, klen)));
}

static bool is_entry_name(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == 16 && !s[n];
}

/* Whether what fd refers to (st) may be read as an entry: a regular file of this user, with no
 * other link (an entry is only ever renamed into place). */
static bool entry_file_ok(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1;
}

struct victim {
	char name[17];
	struct timespec used;
	uint64_t size;
};

/* What the entries fill now, by a scan, with the entries in *v (malloc'd; v NULL: not wanted;
 * an entry that finds no memory is left out of *v, not of the count); temporary files a
 * crashed run left go. */
static uint64_t scan(struct disk_cache *c, struct victim **v, size_t *n)
{
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	time_t now = time(NULL);
	uint64_t bytes = 0;
	struct dirent *e;
	size_t cap = 0;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return c->st.bytes;
	}
	while ((e = readdir(d))) {
		if (fstatat(c->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) &&
		    now - st.st_mtime > TMP_STALE_S)
			unlinkat(c->dirfd, e->d_name, 0);
		if (!is_entry_name(e->d_name) || !S_ISREG(st.st_mode))
			continue;
		bytes += (uint64_t)st.st_size;
		if (!v || grow_array((void **)v, &cap, *n + 1, sizeof(**v), 64))
			continue;
		memcpy((*v)[*n].name, e->d_name, sizeof((*v)[*n].name));
		(*v)[*n].used = st.st_mtim;
		(*v)[(*n)++].size = (uint64_t)st.st_size;
	}
	closedir(d);
	return bytes;
}

static int older_first(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* The least recently used entries go until the rest fill three quarters of the bound. With
 * c->lock held. */
static void evict(struct disk_cache *c)
{
	struct victim *v = NULL;
	size_t n = 0;
	uint64_t bytes = scan(c, &v, &n);

	if (n)
		qsort(v, n, sizeof(*v), older_first);
	for (size_t i = 0; i < n && bytes > c->max / 4 * 3; i++)
		if (!unlinkat(c->dirfd, v[i].name, 0)) {
			bytes -= v[i].size;
			c->st.evicted++;
		}
	free(v);
	c->st.bytes = bytes;
}

/* dir opened as a directory with no symlink anywhere on its path (RESOLVE_NO_SYMLINKS covers
 * the last component too: a link there is ELOOP), made 0700 when missing: inside its parent,
 * itself opened so, so that a parent swapped for a link meanwhile cannot make it elsewhere. A
 * link put at its name fails the mkdir (EEXIST) and then the open; a directory someone else
 * made first is refused by its owner (disk_cache__open). */
static int open_dir(const char *dir)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	char parent[PATH_MAX], *slash;
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how)), pfd, err;
	const char *name;

	if (fd >= 0 || errno != ENOENT)
		return fd;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash == parent)
		parent[1] = '\0';
	else if (slash)
		*slash = '\0';
	name = slash ? dir + (slash - parent) + 1 : dir;
	pfd = (int)syscall(SYS_openat2, AT_FDCWD, slash ? parent : ".", &how, sizeof(how));
	if (pfd < 0)
		return -1;
	if (!mkdirat(pfd, name, 0700) || errno == EEXIST)
		fd = (int)syscall(SYS_openat2, pfd, name, &how, sizeof(how));
	err = errno;
	close(pfd);
	errno = err;
	return fd;
}

struct disk_cache *disk_cache__open(const char *dir, uint64_t max_bytes)
{
	struct disk_cache *c;
	struct stat st;
	int fd, err;

	if (!dir || !*dir || strlen(dir) >= PATH_MAX || !max_bytes) {
		errno = EINVAL;
		return NULL;
	}
	fd = open_dir(dir);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (st.st_uid != geteuid() || (st.st_mode & 077))
		err = EPERM;
	else
		err = 0;
	c = err ? NULL : calloc(1, sizeof(*c));
	if (!c) {
		err = err ? err : errno;
		close(fd);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->dirfd = fd;
	c->max = max_bytes;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	c->st.bytes = scan(c, NULL, NULL);
	return c;
}

/* The entry open as fd (st its stat) checked and read: 1 with *data and *len, 0 when it holds
 * another key (whose hash is the same), -EBADMSG when it is corrupt, or -ENOMEM. */
static int read_entry(int fd, const struct stat *st, const void *key, size_t klen, void **data,
		      size_t *len)
{
	uint64_t size = (uint64_t)st->st_size;
	unsigned char *buf;
	struct header h;
	uint32_t crc;

	if (size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, MAGIC, sizeof(MAGIC)) || h.klen > DISK_CACHE_KEY_MAX ||
	    h.len != size - sizeof(h) - h.klen || size < sizeof(h) + h.klen)
		return -EBADMSG;
	buf = malloc(h.klen + h.len + 1);
	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, h.klen + h.len, sizeof(h)) != (ssize_t)(h.klen + h.len)) {
		free(buf);
		return -EBADMSG;
	}
	crc = (uint32_t)crc32(crc32(0, NULL, 0), buf, (uInt)(h.klen + h.len));
	if (crc != h.crc || h.klen != klen || memcmp(buf, key, klen)) {
		free(buf);
		return crc != h.crc ? -EBADMSG : 0;
	}
	memmove(buf, buf + klen, h.len);
	*data = buf;
	*len = h.len;
	return 1;
}

int disk_cache__get(struct disk_cache *c, const void *key, size_t klen, void **data, size_t *len)
{
	char name[17];
	struct stat st;
	int fd, ret = 0;

	if (klen > DISK_CACHE_KEY_MAX)
		return 0;
	entry_name(key, klen, name);
	pthread_mutex_lock(&c->lock);
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		ret = !fstat(fd, &st) && entry_file_ok(&st) ?
			read_entry(fd, &st, key, klen, data, len) : -EBADMSG;
		if (ret == 1)
			futimens(fd, NULL);	/* recently used: last to go */
		close(fd);
	} else if (errno != ENOENT)
		ret = -EBADMSG;		/* a link there, or worse: not an entry */
	if (ret == -EBADMSG) {
		/* Never read again; the slot is free for the entry this run will write. */
		c->st.corrupt++;
		unlinkat(c->dirfd, name, 0);
		ret = 0;
	}
	if (ret == 1)
		c->st.hits++;
	else
		c->st.misses++;
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int disk_cache__put(struct disk_cache *c, const void *key, size_t klen, const void *data,
		    size_t len)
{
	struct header h = { .klen = (uint32_t)klen, .len = len };
	uint64_t size = sizeof(h) + klen + len;
	char name[17], tmp[64];
	struct stat old;
	int fd, err = 0;
	uint32_t crc;

	if (klen > DISK_CACHE_KEY_MAX)
		return -EINVAL;
	if (size > c->max)
		return -EFBIG;
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	crc = (uint32_t)crc32(crc32(0, NULL, 0), key, (uInt)klen);
	/* zlib's crc32 of a NULL buffer is its initial value, not crc. */
	h.crc = len ? (uint32_t)crc32(crc, data, (uInt)len) : crc;
	entry_name(key, klen, name);
	pthread_mutex_lock(&c->lock);
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d.%u", (int)getpid(), c->tmp_seq++);
	pthread_mutex_unlock(&c->lock);
	/* Written and synced without the lock: a get (the recorder's reader) never waits for a
	 * disk's fsync. */
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		err = -errno;
	else if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		 pwrite(fd, key, klen, sizeof(h)) != (ssize_t)klen ||
		 pwrite(fd, data, len, (off_t)(sizeof(h) + klen)) != (ssize_t)len || fsync(fd))
		err = errno ? -errno : -EIO;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	pthread_mutex_lock(&c->lock);
	if (!err && !fstatat(c->dirfd, name, &old, AT_SYMLINK_NOFOLLOW) && S_ISREG(old.st_mode))
		c->st.bytes -= (uint64_t)old.st_size < c->st.bytes ? (uint64_t)old.st_size :
								      c->st.bytes;
	if (!err && renameat(c->dirfd, tmp, c->dirfd, name))
		err = -errno;
	if (err) {
		if (fd >= 0)
			unlinkat(c->dirfd, tmp, 0);
		c->st.store_failed++;
	} else {
		c->st.stored++;
		c->st.bytes += size;
		if (c->st.bytes > c->max)
			evict(c);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

void disk_cache__drop(struct disk_cache *c, const void *key, size_t klen)
{
	char name[17];

	entry_name(key, klen, name);
	pthread_mutex_lock(&c->lock);
	c->st.corrupt++;
	unlinkat(c->dirfd, name, 0);
	pthread_mutex_unlock(&c->lock);
}

const char *disk_cache__dir(const struct disk_cache *c)
{
	return c->dir;
}

uint64_t disk_cache__max(const struct disk_cache *c)
{
	return c->max;
}

void disk_cache__stats(struct disk_cache *c, struct disk_cache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
}

void disk_cache__free(struct disk_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
