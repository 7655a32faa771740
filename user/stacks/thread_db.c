/* thread_db.c - glibc's struct pthread from its libthread_db descriptors (thread_db.h). */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "user/proc/mapped_file.h"
#include "user/proc/procmaps.h"
#include "user/stacks/elf_section.h"
#include "user/stacks/thread_db.h"

/* A field's descriptor, as glibc's nptl/db_info.c defines them: its size in bits (an
 * array's element's, or the whole field's), how many elements, its offset. A struct's size
 * is one word (_thread_db_sizeof_*). */
enum { D_BITS, D_COUNT, D_OFFSET, D_WORDS };

/* The descriptors read. */
enum desc {
	PTHREAD_TID,		/* struct pthread's tid */
	PTHREAD_SPECIFIC,	/* its specific[]: one field of all its pointers */
	LEVEL2_DATA,		/* a block's values: an array */
	KEY_DATA_DATA,		/* struct pthread_key_data's data */
	SIZEOF_KEY_DATA,
	NDESC,
};

static const struct {
	const char *name;
	unsigned words;
} descs[NDESC] = {
	[PTHREAD_TID] = { "_thread_db_pthread_tid", D_WORDS },
	[PTHREAD_SPECIFIC] = { "_thread_db_pthread_specific", D_WORDS },
	[LEVEL2_DATA] = { "_thread_db_pthread_key_data_level2_data", D_WORDS },
	[KEY_DATA_DATA] = { "_thread_db_pthread_key_data_data", D_WORDS },
	[SIZEOF_KEY_DATA] = { "_thread_db_sizeof_pthread_key_data", 1 },
};

struct found {
	Elf *elf;
	bool has[NDESC];
	uint32_t d[NDESC][D_WORDS];
};

static bool desc_sym(const char *name, const GElf_Sym *sym, void *ctx)
{
	struct found *f = ctx;

	if (strncmp(name, "_thread_db_", 11))
		return false;
	for (int i = 0; i < NDESC; i++)
		if (!f->has[i] && !strcmp(name, descs[i].name) &&
		    sym->st_size == descs[i].words * sizeof(uint32_t))
			f->has[i] = elf_section__read(f->elf, sym->st_value, f->d[i],
						      sym->st_size);
	return false;
}

/* The bounds lxtrace accepts: a struct pthread is 2,368 bytes in glibc 2.36. */
#define MAX_OFFSET 16384

/* Fills db from what f found; false without a tid. */
static bool from_descs(const struct found *f, struct thread_db *db)
{
	const uint32_t *tid = f->d[PTHREAD_TID], *sp = f->d[PTHREAD_SPECIFIC],
		       *l2 = f->d[LEVEL2_DATA], *kd = f->d[KEY_DATA_DATA];
	uint32_t size = f->d[SIZEOF_KEY_DATA][0];

	*db = (struct thread_db){ 0 };
	/* A 32-bit pid_t, one of it. */
	db->has_tid = f->has[PTHREAD_TID] && tid[D_BITS] == 32 && tid[D_COUNT] == 1 &&
		      tid[D_OFFSET] < MAX_OFFSET;
	db->tid = tid[D_OFFSET];
	/* specific[] is pointers, described as one field: its bits are all of them. A value is
	 * a pointer-sized data inside its struct, the block an array of them. */
	db->has_keys = f->has[PTHREAD_SPECIFIC] && f->has[LEVEL2_DATA] && f->has[KEY_DATA_DATA] &&
		       f->has[SIZEOF_KEY_DATA] && sp[D_COUNT] == 1 && sp[D_BITS] % 64 == 0 &&
		       sp[D_BITS] && sp[D_BITS] / 8 < MAX_OFFSET &&
		       sp[D_OFFSET] < MAX_OFFSET - sp[D_BITS] / 8 &&
		       size >= 8 && size <= 64 && l2[D_BITS] == 8 * size && l2[D_COUNT] &&
		       l2[D_COUNT] <= 1024 && l2[D_OFFSET] < MAX_OFFSET &&
		       kd[D_BITS] == 64 && kd[D_COUNT] == 1 && kd[D_OFFSET] <= size - 8;
	if (db->has_keys) {
		db->specific = sp[D_OFFSET];
		db->blocks = sp[D_BITS] / 64;
		db->block_keys = l2[D_COUNT];
		db->block_data = l2[D_OFFSET];
		db->value_size = size;
		db->value_data = kd[D_OFFSET];
	}
	return db->has_tid;
}

bool thread_db__read(const char *proc_root, pid_t pid, struct thread_db *db)
{
	char path[300], line[4096];
	struct procmaps_entry e;
	bool ok = false;
	FILE *f;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!ok && fgets(line, sizeof(line), f)) {
		struct found found = { 0 };
		struct mapped_file mf;
		const char *base;
		int fd;

		if (!procmaps__parse_exec(line, &e) || !e.ino)
			continue;
		base = strrchr(e.name, '/');
		base = base ? base + 1 : e.name;
		if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5) &&
		    strncmp(base, "libpthread", 10))
			continue;
		mf = (struct mapped_file){ proc_root, pid, e.start, e.end, e.name, e.dev, e.ino };
		fd = mapped_file__open(&mf, NULL);
		if (fd < 0)
			continue;
		found.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (found.elf) {
			elf_section__each_symbol(found.elf, desc_sym, &found);
			ok = from_descs(&found, db);
			elf_end(found.elf);
		}
		close(fd);
	}
	fclose(f);
	return ok;
}

bool thread_db__key(const struct thread_db *db, uint32_t key, uint32_t *block, uint32_t *value)
{
	if (!db->has_keys || key / db->block_keys >= db->blocks)
		return false;
	*block = db->specific + key / db->block_keys * 8;
	*value = db->block_data + key % db->block_keys * db->value_size + db->value_data;
	return true;
}
