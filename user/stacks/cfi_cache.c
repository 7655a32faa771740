/* cfi_cache.c - unwind rows kept across recordings, for files that cannot change unseen
 * (cfi_cache.h). */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/foreign_file.h"
#include "user/stacks/cfi_cache.h"

_Static_assert(sizeof(struct cfi_cache_key) == 80, "cfi_cache_key: no padding, compared whole");

static uint8_t build_id[sizeof(((struct cfi_cache_key *)0)->build_id)];
static size_t build_id_len;
static pthread_once_t build_id_once = PTHREAD_ONCE_INIT;

#define NOTE_ALIGN(x) (((x) + 3) & ~(size_t)3)

/* The build-id note of the first object dl_iterate_phdr names: the program itself. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		const char *n = (const char *)(info->dlpi_addr + p->p_vaddr), *end = n + p->p_memsz;

		if (p->p_type != PT_NOTE)
			continue;
		while (n + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *h = (const void *)n;
			const char *name = n + sizeof(*h);
			const char *desc = name + NOTE_ALIGN(h->n_namesz);

			if (desc + h->n_descsz > end)
				break;
			if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && h->n_descsz && h->n_descsz <= sizeof(build_id)) {
				memcpy(build_id, desc, h->n_descsz);
				build_id_len = h->n_descsz;
				return 1;
			}
			n = desc + NOTE_ALIGN(h->n_descsz);
		}
	}
	return 1;
}

static void read_build_id(void)
{
	dl_iterate_phdr(find_build_id, NULL);
}

static void key_from_stat(const struct stat *st, struct cfi_cache_key *k)
{
	k->size = (uint64_t)st->st_size;
	k->mtime_s = st->st_mtim.tv_sec;
	k->mtime_ns = st->st_mtim.tv_nsec;
	k->ctime_s = st->st_ctim.tv_sec;
	k->ctime_ns = st->st_ctim.tv_nsec;
}

bool cfi_cache__key(int fd, uint64_t dev, uint64_t ino, struct cfi_cache_key *k, bool *settled)
{
	struct timespec now;
	struct stat st;

	pthread_once(&build_id_once, read_build_id);
	*settled = false;
	if (!build_id_len || fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    !foreign_file__local(fd))
		return false;
	memset(k, 0, sizeof(*k));
	memcpy(k->build_id, build_id, build_id_len);
	k->dev = dev;
	k->ino = ino;
	key_from_stat(&st, k);
	clock_gettime(CLOCK_REALTIME, &now);
	*settled = st.st_ctim.tv_sec + CFI_CACHE_SETTLED_S < now.tv_sec;
	return true;
}

bool cfi_cache__same(int fd, const struct cfi_cache_key *k)
{
	struct cfi_cache_key now = *k;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	key_from_stat(&st, &now);
	return (uint64_t)st.st_dev == k->dev && (uint64_t)st.st_ino == k->ino &&
	       !memcmp(&now, k, sizeof(now));
}

int cfi_cache__get(struct disk_cache *c, const struct cfi_cache_key *k, struct cfi_table *t)
{
	struct lx_cfi_row *rows;
	void *data = NULL;
	size_t len = 0, n;
	int ret = disk_cache__get(c, k, sizeof(*k), &data, &len);
	bool ok;

	if (ret != 1)
		return ret;
	rows = data;
	n = len / sizeof(*rows);
	/* The checksum says the entry is what was written; these say it is rows the unwinder can
	 * search (cfi_rows__find), whatever wrote it. */
	ok = len % sizeof(*rows) == 0;

	for (size_t i = 1; ok && i < n; i++)
		ok = rows[i - 1].off < rows[i].off;
	if (!ok) {
		free(data);
		disk_cache__drop(c, k, sizeof(*k));
		return 0;
	}
	t->rows = n ? rows : NULL;
	t->n = n;
	if (!n)
		free(data);
	return 1;
}

int cfi_cache__put(struct disk_cache *c, const struct cfi_cache_key *k,
		   const struct lx_cfi_row *rows, size_t n)
{
	return disk_cache__put(c, k, sizeof(*k), rows, n * sizeof(*rows));
}
