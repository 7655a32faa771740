/* sym_module.c - the symbolizer's modules: one per binary, shared by every process mapping it,
 * its file opened once, its ELF on first use, its frames cached by address (sym_core.h). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/unwind.h"
#include "format/tracemap.h"
#include "lib/clock.h"
#include "lib/file_worker.h"
#include "lib/foreign_file.h"
#include "lib/u64map.h"
#include "user/proc/mapped_file.h"
#include "user/stacks/sym_core.h"
#include "user/stacks/sym_elf.h"
#include "user/stacks/vdso.h"

#define MAX_FRAMES 64
/* How often a late binary is asked for again: while its filesystem's late job runs the worker
 * answers at once, and once it has ended it hands its answer over, or an open may wait
 * FILE_WORKER_SLOW_WAIT_NS. */
#define SYM_LATE_RETRY_NS (10ull * 1000 * 1000)
/* How long stacks in a late binary are held for it (callstacks__ready): a disk behind direct-IO
 * reads and a dropped page cache took over a second to open some; a stalled filesystem holds
 * the stream that long once per binary. */
#define SYM_LATE_HOLD_NS (3000ull * 1000 * 1000)

void sym_module_free(struct module *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	sym_elf__free(m->elf);
	free(m->loads);
	u64map__free(m->cache);
	free(m->path);
	free(m);
}

/* Opens m's file as mapped at [start, end) of pid (user/proc/mapped_file.h), at path when the
 * process is gone; a refusal by lib/foreign_file.h's rules is named in the summary, and a file
 * not come in time is late: asked for again on a lookup. */
static void open_mapped(struct symbolizer *s, struct module *m, pid_t pid, uint64_t start,
			uint64_t end, const char *path)
{
	const struct mapped_file f = { s->proc_root, pid, start, end, path, m->dev, m->ino };
	bool was_late = m->late;

	m->pid = pid;
	m->start = start;
	m->end = end;
	m->fd = mapped_file__open(&f, NULL);
	if (foreign_file__refused(m->fd))
		foreign_log__note(s->refused, path, m->fd);
	m->failed = m->fd < 0;
	m->late = m->fd == -ETIMEDOUT;
	s->nlate += (size_t)m->late - (size_t)was_late;
	s->st.modules_read_late += was_late && m->fd >= 0;
	if (m->late) {
		m->retry_at = now_ns() + SYM_LATE_RETRY_NS;
		if (!m->late_since)
			m->late_since = now_ns();
	}
}

uint32_t sym_module_get(struct symbolizer *s, pid_t pid, const struct mapping *mp,
			   const char *path, uint64_t dev, uint64_t ino)
{
	uint64_t key[2] = { dev, ino };
	const char *base;
	struct module *m;
	bool added;
	uint64_t id = gt_tracemap__put(s->mod_ids, key, sizeof(key), &added);

	if (!id || id > UINT32_MAX)
		return 0;
	if (!added) {
		m = id <= s->mods_cap ? s->mods[id - 1] : NULL;
		/* A module left half-built by an earlier ENOMEM stays unusable. */
		if (!m || !m->file)
			return 0;
		/* One that could not be opened (its process was gone) gets another chance with
		 * each process that maps it: a failure is never kept for good. */
		if (m->failed && !m->bad && !m->elf && pid > 0) {
			open_mapped(s, m, pid, mp->start, mp->end, path);
			s->st.modules_retried++;
		}
		return (uint32_t)id;
	}
	if (sym_grow((void **)&s->mods, &s->mods_cap, id, sizeof(*s->mods)))
		return 0;
	m = calloc(1, sizeof(*m));
	s->mods[id - 1] = m;
	if (!m)
		return 0;
	m->fd = -1;
	m->dev = dev;
	m->ino = ino;
	m->path = strdup(mp->name);
	m->cache = u64map__new();
	base = strrchr(mp->name, '/');
	m->name = sym_intern(s, base ? base + 1 : mp->name);
	if (!m->path || !m->cache || !m->name)
		return 0;
	/* Set last: a module with a file is complete. */
	m->file = sym_intern(s, mp->name);
	if (!m->file)
		return 0;
	if (ino == LX_VDSO_INO && !dev)
		m->fd = vdso__open();	/* the same image in every process of this kernel */
	else if (pid > 0)
		open_mapped(s, m, pid, mp->start, mp->end, path);
	else
		m->fd = -ENOENT;
	m->failed = m->fd < 0;
	s->st.modules++;
	s->st.modules_failed += m->failed;
	return (uint32_t)id;
}

/* Whether the file at fd is root's, or the invoking user's, and only its owner may change it:
 * what reading it takes is then the administrator's choice (Debian's debug packages compress
 * theirs), or the choice of the user who gets the trace. */
static bool trusted(const struct symbolizer *s, int fd)
{
	struct stat st;

	return !fstat(fd, &st) && (st.st_uid == 0 || st.st_uid == s->trusted_uid) &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* DWARF itself is read by libdwfl on first lookup. What reading a binary takes (compressed
 * sections inflated, DWARF parsed) is held while the binary is in use (sym_module_sweep): all
 * the binaries other users control share FOREIGN_BUDGET, so that none can make lxtrace grow
 * without bound (a zlib bomb declares 1,000 times its size, a line table takes 100 times its
 * own). */
struct sym_elf *sym_module_elf(struct symbolizer *s, struct module *m)
{
	/* A binary read late is named from then on: nothing that was readable stays unknown
	 * because a loaded disk answered after the wait. */
	sym_module_awaited(s, m);
	if (!m->elf && !m->failed) {
		bool again = m->used != 0;
		int fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);

		m->elf = fd < 0 ? NULL : sym_elf__open(fd, m->path, s->debuginfo_path,
						      trusted(s, m->fd) ? NULL : &s->foreign_left);
		if (!m->elf && errno == ENOBUFS)
			foreign_log__note(s->refused, m->path, -ENOBUFS);
		else if (m->elf && sym_elf__dwarf_refused(m->elf))
			foreign_log__note(s->refused, m->path, -EOVERFLOW);
		m->failed = m->bad = !m->elf;
		m->closable = m->elf && trusted(s, m->fd);
		m->bytes = 0;
		s->st.modules_failed += m->failed;
		s->st.modules_reread += again && m->elf;
		if (m->failed) {
			close(m->fd);
			m->fd = -1;
		}
	}
	if (m->elf) {
		m->used = s->sweep + 1;
		m->used_at = s->st.lookups;
	}
	return m->elf;
}

uint64_t sym_module_vaddr(struct symbolizer *s, struct module *m, uint64_t off)
{
	if (!m->loads_noted && sym_module_elf(s, m)) {
		int n = sym_elf__loads(m->elf, NULL, 0);

		m->loads = n > 0 ? calloc((size_t)n, sizeof(*m->loads)) : NULL;
		m->nloads = m->loads ? sym_elf__loads(m->elf, m->loads, n) : 0;
		m->loads_noted = true;
	}
	for (int i = 0; i < m->nloads; i++)
		if (off >= m->loads[i].off && off - m->loads[i].off < m->loads[i].size)
			return off - m->loads[i].off + m->loads[i].vaddr;
	return off;
}

/* Closes m's ELF, giving back what it was counted. */
static void close_elf(struct symbolizer *s, struct module *m)
{
	sym_elf__free(m->elf);
	m->elf = NULL;
	s->elf_bytes -= m->bytes;
	m->bytes = 0;
	s->st.modules_closed++;
}

void sym_module_count(struct symbolizer *s, struct module *m)
{
	uint64_t now = m->elf && m->closable ? sym_elf__bytes(m->elf) : 0;

	s->elf_bytes += now - m->bytes;
	m->bytes = now;
}

/* Counts what m's ELF holds now; past the budget, closes the least recently used others until
 * the open ELFs hold 3/4 of it. A module's frames stay cached: a closed binary is read again
 * only for an address never looked up. */
static void count_elf(struct symbolizer *s, struct module *m)
{
	sym_module_count(s, m);
	if (s->elf_bytes <= s->elf_budget)
		return;
	while (s->elf_bytes > s->elf_budget / 4 * 3) {
		struct module *lru = NULL;

		for (size_t i = 0; i < s->mods_cap; i++) {
			struct module *o = s->mods[i];

			if (o && o != m && o->elf && o->closable &&
			    (!lru || o->used_at < lru->used_at))
				lru = o;
		}
		if (!lru)
			break;
		close_elf(s, lru);
		s->st.modules_over_budget++;
	}
}

void sym_module_sweep(struct symbolizer *s)
{
	uint64_t closed = 0;

	s->sweep++;
	for (size_t i = 0; i < s->mods_cap; i++) {
		struct module *m = s->mods[i];

		if (!m || !m->elf || m->used >= s->sweep || !m->closable)
			continue;
		close_elf(s, m);
		closed++;
	}
	/* libdw's blocks lie among the others in the heap: free, they stay resident until
	 * trimmed. */
	if (closed)
		malloc_trim(0);
}

void sym_module_page_out(struct symbolizer *s)
{
	for (size_t i = 0; i < s->mods_cap; i++)
		if (s->mods[i] && s->mods[i]->elf)
			sym_elf__page_out(s->mods[i]->elf);
	s->paged_out_at = now_ns();
}

bool sym_module_awaited(struct symbolizer *s, struct module *m)
{
	uint64_t now;

	if (!m->late)
		return false;
	now = now_ns();
	if (now >= m->retry_at) {
		open_mapped(s, m, m->pid, m->start, m->end, m->path);
		s->st.modules_retried++;
	}
	return m->late && now - m->late_since < SYM_LATE_HOLD_NS;
}

void sym_module_note_unread(struct symbolizer *s, struct module *m)
{
	if (!m->late)
		return;
	/* A late job that has answered since is not unread. */
	open_mapped(s, m, m->pid, m->start, m->end, m->path);
	s->st.modules_retried++;
	if (m->late)
		foreign_log__note(s->unread, m->path,
				  file_worker__stalled(m->dev) ? -ETIMEDOUT : -EAGAIN);
}

int sym_module_frames(struct symbolizer *s, struct module *m, uint64_t vaddr, size_t *first)
{
	struct sym_elf_frame ef[MAX_FRAMES];
	uint64_t *slot = u64map__get(m->cache, vaddr);
	struct sym_elf *elf;
	bool added;
	int n;

	if (slot) {
		s->st.cache_hits++;
		*first = *slot >> 8;
		return (int)(*slot & 0xff);
	}
	/* Only a miss needs the ELF, opened again if it was closed. */
	elf = sym_module_elf(s, m);
	/* Not kept for a binary still late: its names are asked for again. */
	if (!elf && m->late)
		return 0;
	n = elf ? sym_elf__frames(elf, vaddr, ef, MAX_FRAMES) : 0;
	if (n < 0)
		n = 0;
	count_elf(s, m);
	if (sym_grow((void **)&s->pool, &s->pool_cap, s->pool_len + (size_t)n, sizeof(*s->pool)))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		uint32_t id = sym_frame_id(s, ef[i].func ? ef[i].func : "[unknown]",
				       ef[i].file ? ef[i].file : m->file, ef[i].line);

		if (!id)
			return -ENOMEM;
		s->pool[s->pool_len + (size_t)i] = id;
	}
	slot = u64map__put(m->cache, vaddr, &added);
	if (!slot)
		return -ENOMEM;
	*first = s->pool_len;
	*slot = (uint64_t)s->pool_len << 8 | (uint64_t)n;
	s->pool_len += (size_t)n;
	return n;
}
