/* symbolize.c - per-process mapping snapshots, per-binary frame caches, one-to-one trace PCs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tracemap.h"
#include "bpf/unwind.h"
#include "lib/clock.h"
#include "lib/foreign_file.h"
#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/proc/procmaps.h"
#include "user/proc/mapped_file.h"
#include "user/proc/procstat.h"
#include "user/stacks/pcclaims.h"
#include "user/stacks/sym_elf.h"
#include "user/stacks/sym_kernel.h"
#include "user/stacks/sym_perfmap.h"
#include "user/stacks/sym_search.h"
#include "user/stacks/symbolize.h"
#include "user/stacks/vdso.h"

#define ADDR_MASK ((1ull << 47) - 1)
#define MAX_DEPTH_PC 255
#define MAX_FRAMES 64
/* PC claims a generation holds (pcclaims.h): ~4 MiB of them at most. */
#define GEN_CLAIMS (1u << 16)
/* An address kallsyms did not name (a module or BPF program loaded since it was read) reads
 * it again, at most this often: a read takes tens of milliseconds. */
#define KALLSYMS_RELOAD_NS 10000000000ull
/* A miss in a live process re-reads its maps (code mapped since the snapshot, e.g. dlopen),
 * at most this often, so addresses that stay unknown cost no more than a read a second. */
#define REFRESH_NS 1000000000ull
/* Reading ahead inflates no DWARF from a file larger than this: a whole library's debug data
 * (LLVM's is hundreds of MiB) can take seconds and gigabytes, whereas stacks may need a few of
 * its lines. libc6-dbg's libc: 4 MiB. */
#define PREPARE_DWARF_BYTES (32ull << 20)

/* The memory that reading all the binaries other users control may take, in all (module_elf,
 * sym_elf__open): their compressed sections inflated, and their own DWARF at
 * SYM_ELF_DWARF_COST a byte, so 2 MiB of it. Real DWARF inflates about 3 times (Debian's debug
 * files: 2.6 over all their compressed sections). */
#define FOREIGN_BUDGET (256ull << 20)

struct module {
	uint64_t dev, ino;	/* st_dev (makedev) and inode; LX_VDSO_INO for the vDSO */
	char *path;
	const char *name;	/* interned basename, for "[unknown] NAME+0x..." */
	const char *file;	/* interned path: the file of frames without DWARF lines */
	int fd;			/* until sym_elf takes it; -1 after */
	bool failed;		/* no file (yet): opened again with the next process mapping it */
	bool bad;		/* not an ELF file libdwfl reads, or its read stalled: for good */
	struct sym_elf *elf;
	struct u64map *cache;	/* vaddr -> pool offset << 8 | frame count */
};

struct mapping {
	uint64_t start, end, pgoff;
	uint32_t mod;		/* module id; 0: not a file */
	const char *name;	/* interned: the path, "[vdso]", or "" for anonymous memory */
};

struct process {
	uint64_t key;			/* as noted: pid, or pid | generation << 32 */
	pid_t pid;
	unsigned long long starttime;	/* tells a reused pid from the process noted */
	struct mapping *maps;		/* executable mappings, sorted by start */
	size_t n, cap;
	bool refresh;			/* read from /proc: a miss may re-read it */
	uint64_t read_at;		/* CLOCK_MONOTONIC ns of the last maps read */
	uid_t uid;			/* its user: the owner its perf map may have, besides root */
	struct sym_perfmap *perfmap;
};

struct frame {
	const char *func, *file;
	uint64_t line;
};

struct symbolizer {
	char proc_root[256], kallsyms_path[256], perfmap_dir[256];
	char *debuginfo_path;
	struct sym_perfmap_env perfmaps;	/* what the processes' perf maps share */
	struct foreign_log *refused;	/* files other users control, refused by their rules */
	uint64_t foreign_left;		/* of FOREIGN_BUDGET (module_elf) */
	uid_t trusted_uid;		/* symbolizer_opts.trusted_uid */

	struct gt_tracemap *str_ids;	/* interned strings; strs[id - 1] owns the copy */
	char **strs;
	size_t strs_cap;

	struct gt_tracemap *frame_ids;	/* (func id, file id, line) -> frame id */
	struct frame *frames;
	size_t frames_cap;
	uint32_t *pool;			/* frame ids of cached expansions, innermost first */
	size_t pool_len, pool_cap;

	struct gt_tracemap *mod_ids;	/* (dev, inode) -> module id */
	struct module **mods;
	size_t mods_cap;

	struct u64map *procs;	/* pid -> index in plist */
	struct process **plist;
	size_t nprocs, procs_cap;
	struct pcclaims *claims;	/* pc -> frame id */

	struct sym_kernel *kernel;	/* NULL when unreadable or addresses hidden */
	uint64_t kernel_read_at;	/* CLOCK_MONOTONIC ns of the last read; 0 = never */
	struct u64map *kcache;	/* kernel pc -> frame id, named addresses only */

	struct symbolizer_stats st;
};

/* Grows *arr to hold need elements, zeroing the new ones: a table indexed by the ids of a
 * tracemap may lack the entry of an id whose insertion ran out of memory, and reads it as
 * zero (absent) rather than garbage. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;

	if (grow_array(arr, cap, need, elem, 64))
		return -ENOMEM;
	if (*cap > old)		/* *arr may still be NULL otherwise: no memset of that */
		memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
	return 0;
}

/* The interned copy of s, stable for the symbolizer's life; NULL when out of memory. */
static const char *intern(struct symbolizer *s, const char *str)
{
	size_t len = strlen(str);
	bool added;
	uint64_t id = gt_tracemap__put(s->str_ids, str, len + 1, &added);

	if (!id)
		return NULL;
	if (added) {
		if (grow((void **)&s->strs, &s->strs_cap, id, sizeof(*s->strs)))
			return NULL;
		s->strs[id - 1] = strdup(str);
	}
	return id <= s->strs_cap ? s->strs[id - 1] : NULL;
}

/* The id (> 0) of the frame (func, file, line) with its strings interned; 0 on ENOMEM. */
static uint32_t frame_id(struct symbolizer *s, const char *func, const char *file, uint64_t line)
{
	struct frame f = { intern(s, func), intern(s, file), line };
	bool added;
	uint64_t id;

	if (!f.func || !f.file)
		return 0;
	/* Interned strings are unique, so their addresses identify them. */
	id = gt_tracemap__put(s->frame_ids, &f, sizeof(f), &added);
	if (!id || id > UINT32_MAX)
		return 0;
	if (added) {
		if (grow((void **)&s->frames, &s->frames_cap, id, sizeof(*s->frames)))
			return 0;
		s->frames[id - 1] = f;
	}
	return id <= s->frames_cap && s->frames[id - 1].func ? (uint32_t)id : 0;
}

static uint32_t unknown_frame(struct symbolizer *s, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static uint32_t unknown_frame(struct symbolizer *s, const char *file, const char *fmt, ...)
{
	char func[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(func, sizeof(func), fmt, ap);
	va_end(ap);
	s->st.unknown++;
	return frame_id(s, func, file, 0);
}

/* Fills out[0..n) from frame ids looked up at address a (see PCs in symbolize.h). */
static int emit(struct symbolizer *s, uint64_t a, const uint32_t *ids, int n,
		struct sym_frame *out)
{
	for (int i = 0; i < n; i++) {
		const struct frame *f = &s->frames[ids[i] - 1];
		uint64_t depth = i < MAX_DEPTH_PC ? (uint64_t)i : MAX_DEPTH_PC;
		uint64_t pc = i ? SYM_PC_SYNTHETIC | depth << 47 | (a & ADDR_MASK) : a;

		pc = pcclaims__claim(s->claims, pc, ids[i]);
		if (!pc)
			return -ENOMEM;
		out[i] = (struct sym_frame){ pc, f->func, f->file, f->line };
	}
	return n;
}

static int emit_one(struct symbolizer *s, uint64_t a, uint32_t id, struct sym_frame *out)
{
	return id ? emit(s, a, &id, 1, out) : -ENOMEM;
}

/* ---- modules: one per binary, shared by every process mapping it ---- */

static void module_free(struct module *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	sym_elf__free(m->elf);
	u64map__free(m->cache);
	free(m->path);
	free(m);
}

/* Opens the file (dev, ino) mapped at [start, end) of pid (user/proc/mapped_file.h); a
 * refusal by lib/foreign_file.h's rules is named in the summary. */
static int open_mapped(struct symbolizer *s, pid_t pid, uint64_t start, uint64_t end,
		       const char *path, uint64_t dev, uint64_t ino)
{
	const struct mapped_file f = { s->proc_root, pid, start, end, path, dev, ino };
	int fd = mapped_file__open(&f, NULL);

	if (foreign_file__refused(fd))
		foreign_log__note(s->refused, path, fd);
	return fd;
}

/* The module id of (dev, ino), opening the file when new. 0 on ENOMEM. */
static uint32_t module_get(struct symbolizer *s, pid_t pid, const struct mapping *mp,
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
			m->fd = open_mapped(s, pid, mp->start, mp->end, path, dev, ino);
			m->failed = m->fd < 0;
			m->bad = m->fd == -ETIMEDOUT;
			s->st.modules_retried++;
		}
		return (uint32_t)id;
	}
	if (grow((void **)&s->mods, &s->mods_cap, id, sizeof(*s->mods)))
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
	m->name = intern(s, base ? base + 1 : mp->name);
	if (!m->path || !m->cache || !m->name)
		return 0;
	/* Set last: a module with a file is complete. */
	m->file = intern(s, mp->name);
	if (!m->file)
		return 0;
	if (ino == LX_VDSO_INO && !dev)
		m->fd = vdso__open();	/* the same image in every process of this kernel */
	else
		m->fd = pid > 0 ? open_mapped(s, pid, mp->start, mp->end, path, dev, ino) : -ENOENT;
	m->failed = m->fd < 0;
	/* A file that stalled is not asked for again (nor named twice). */
	m->bad = m->fd == -ETIMEDOUT;
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

/* The ELF of m, opened on first use (DWARF itself is read by libdwfl on first lookup). What
 * reading a binary takes (compressed sections inflated, DWARF parsed) is held for the whole
 * recording: all the binaries other users control share FOREIGN_BUDGET, so that none can make
 * lxtrace grow without bound (a zlib bomb declares 1,000 times its size, a line table takes 100
 * times its own). */
static struct sym_elf *module_elf(struct symbolizer *s, struct module *m)
{
	if (!m->elf && !m->failed) {
		m->elf = sym_elf__open(m->fd, m->path, s->debuginfo_path,
				       trusted(s, m->fd) ? NULL : &s->foreign_left);
		if (!m->elf && errno == ENOBUFS)
			foreign_log__note(s->refused, m->path, -ENOBUFS);
		else if (m->elf && sym_elf__dwarf_refused(m->elf))
			foreign_log__note(s->refused, m->path, -EOVERFLOW);
		m->fd = -1;
		m->failed = m->bad = !m->elf;
		s->st.modules_failed += m->failed;
	}
	return m->elf;
}

/* The frame ids of vaddr in m, from its cache or computed once. Returns their count (0 when
 * nothing names vaddr) and the pool offset in *first, or -ENOMEM. */
static int module_frames(struct symbolizer *s, struct module *m, uint64_t vaddr, size_t *first)
{
	struct sym_elf_frame ef[MAX_FRAMES];
	struct sym_elf *elf = module_elf(s, m);
	uint64_t *slot = u64map__get(m->cache, vaddr);
	bool added;
	int n;

	if (slot) {
		s->st.cache_hits++;
		*first = *slot >> 8;
		return (int)(*slot & 0xff);
	}
	n = elf ? sym_elf__frames(elf, vaddr, ef, MAX_FRAMES) : 0;
	if (n < 0)
		n = 0;
	if (grow((void **)&s->pool, &s->pool_cap, s->pool_len + (size_t)n, sizeof(*s->pool)))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		uint32_t id = frame_id(s, ef[i].func ? ef[i].func : "[unknown]",
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

/* ---- processes ---- */

static void process_free(struct process *p)
{
	if (!p)
		return;
	free(p->maps);
	sym_perfmap__free(p->perfmap);
	free(p);
}

/* The start time of /proc/PID/stat (user/proc/procstat.h); and, when uid is not NULL, the
 * file's owner, which procfs makes the process's effective user (root for a process that may
 * not be inspected, e.g. setuid). */
static int read_starttime(struct symbolizer *s, pid_t pid, unsigned long long *out, uid_t *uid)
{
	struct procstat ps;
	char path[320], buf[1024];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", s->proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (uid)
		*uid = fstat(fd, &st) ? 0 : st.st_uid;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n ? -errno : -ESRCH;
	buf[n] = '\0';
	if (procstat__parse(buf, &ps) || !ps.has_starttime)
		return -EINVAL;
	*out = ps.starttime;
	return 0;
}

/* Reads the executable mappings of pid into p->maps, opening new binaries. */
static int read_maps(struct symbolizer *s, struct process *p)
{
	char path[320], *line = NULL;
	struct mapping *maps = NULL;
	size_t n = 0, cap = 0, lcap = 0;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	s->st.maps_reads++;
	while (getline(&line, &lcap, f) > 0) {
		struct procmaps_entry e;
		struct mapping *mp;

		if (!procmaps__parse_exec(line, &e))
			continue;
		if (grow((void **)&maps, &cap, n + 1, sizeof(*maps))) {
			err = -ENOMEM;
			break;
		}
		mp = &maps[n];
		*mp = (struct mapping){ e.start, e.end, e.pgoff, 0, intern(s, e.name) };
		if (!mp->name) {
			err = -ENOMEM;
			break;
		}
		if (!e.ino && !strcmp(e.name, "[vdso]")) {
			e.ino = LX_VDSO_INO;
			e.dev = 0;
		}
		if (e.ino && (*e.name == '/' || e.ino == LX_VDSO_INO)) {
			mp->mod = module_get(s, p->pid, mp, e.name, e.dev, e.ino);
			if (!mp->mod) {
				err = -ENOMEM;
				break;
			}
		}
		n++;
	}
	free(line);
	fclose(f);
	if (err) {
		free(maps);
		return err;
	}
	/* The kernel lists mappings sorted by address already. A snapshot lives as long as its
	 * process: give back what growth reserved (64 entries where a process has a dozen). */
	if (n && n < cap) {
		struct mapping *fit = realloc(maps, n * sizeof(*maps));

		if (fit) {
			maps = fit;
			cap = n;	/* a mapping reported later grows it again */
		}
	}
	free(p->maps);
	p->maps = maps;
	p->n = n;
	p->cap = cap;
	p->read_at = now_ns();
	return 0;
}

/* Puts p in as proc's snapshot, replacing an earlier one. Takes p, even on failure. */
static int process_put(struct symbolizer *s, struct process *p)
{
	uint64_t *slot;
	bool added;

	p->perfmap = sym_perfmap__new(&s->perfmaps, p->pid, p->uid);
	slot = p->perfmap ? u64map__put(s->procs, p->key, &added) : NULL;
	if (slot && added && grow((void **)&s->plist, &s->procs_cap, s->nprocs + 1,
				  sizeof(*s->plist))) {
		u64map__del(s->procs, p->key);
		slot = NULL;
	}
	if (!slot) {
		process_free(p);
		return -ENOMEM;
	}
	if (added) {
		*slot = s->nprocs++;
		s->st.processes++;
	} else {
		process_free(s->plist[*slot]);
	}
	s->plist[*slot] = p;
	return 0;
}

int symbolizer__note_process(struct symbolizer *s, uint64_t proc)
{
	struct process *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->key = proc;
	p->pid = SYM_PROC_PID(proc);
	err = read_starttime(s, p->pid, &p->starttime, &p->uid);
	if (!err)
		err = read_maps(s, p);
	if (err) {
		process_free(p);
		return err;
	}
	p->refresh = true;
	return process_put(s, p);
}

int symbolizer__image_new(struct symbolizer *s, uint64_t proc, bool snapshot)
{
	struct process *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->key = proc;
	p->pid = SYM_PROC_PID(proc);
	/* A process already gone: only a perf map of root's is read for it. */
	if (read_starttime(s, p->pid, &p->starttime, &p->uid))
		p->uid = 0;
	else
		p->refresh = snapshot;
	p->read_at = now_ns();
	return process_put(s, p);
}

int symbolizer__image_copy(struct symbolizer *s, uint64_t proc, uint64_t from)
{
	uint64_t *slot = u64map__get(s->procs, from);
	const struct process *f;
	struct process *p;

	if (!slot)
		return -ENOENT;
	f = s->plist[*slot];
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->key = proc;
	p->pid = SYM_PROC_PID(proc);
	if (f->n && grow((void **)&p->maps, &p->cap, f->n, sizeof(*p->maps))) {
		process_free(p);
		return -ENOMEM;
	}
	if (f->n)
		memcpy(p->maps, f->maps, f->n * sizeof(*p->maps));
	p->n = f->n;
	p->uid = f->uid;
	/* A copy of a snapshot misses what its original missed: the child may re-read its own.
	 * Its start time is its own (the parent's would refuse every re-read). */
	if (f->refresh && !read_starttime(s, p->pid, &p->starttime, NULL)) {
		p->refresh = true;
		p->read_at = f->read_at;
	}
	return process_put(s, p);
}

/* The mapping of m as a process holds it, its module opened or found. */
static int mapping_of(struct symbolizer *s, const struct sym_mapping *m, struct mapping *mp)
{
	*mp = (struct mapping){ m->start, m->end, m->pgoff, 0, intern(s, m->path ? m->path : "") };
	if (!mp->name)
		return -ENOMEM;
	if (m->ino) {
		mp->mod = module_get(s, m->pid, mp, m->path, m->dev, m->ino);
		if (!mp->mod)
			return -ENOMEM;
	}
	return 0;
}

int symbolizer__file(struct symbolizer *s, const struct sym_mapping *m)
{
	struct mapping mp;

	return m->ino ? mapping_of(s, m, &mp) : 0;
}

int symbolizer__map(struct symbolizer *s, uint64_t proc, const struct sym_mapping *m)
{
	uint64_t *slot = u64map__get(s->procs, proc);
	struct process *p;
	struct mapping mp;
	size_t i, j = 0, pos;
	int err;

	if (!slot)
		return -ENOENT;
	p = s->plist[*slot];
	err = mapping_of(s, m, &mp);
	if (err)
		return err;
	if (grow((void **)&p->maps, &p->cap, p->n + 1, sizeof(*p->maps)))
		return -ENOMEM;
	/* Drop what it overlaps, then insert it in order. */
	for (i = 0; i < p->n; i++)
		if (p->maps[i].end <= mp.start || p->maps[i].start >= mp.end)
			p->maps[j++] = p->maps[i];
	p->n = j;
	pos = sym_search__upto(p->maps, p->n, sizeof(*p->maps), offsetof(struct mapping, start),
			       mp.start);
	memmove(&p->maps[pos + 1], &p->maps[pos], (p->n - pos) * sizeof(*p->maps));
	p->maps[pos] = mp;
	p->n++;
	return 0;
}

void symbolizer__forget_process(struct symbolizer *s, uint64_t proc)
{
	uint64_t *slot = u64map__get(s->procs, proc);
	struct process *last;
	uint64_t idx;

	if (!slot)
		return;
	idx = *slot;
	process_free(s->plist[idx]);
	u64map__del(s->procs, proc);
	last = s->plist[--s->nprocs];
	if (idx != s->nprocs) {
		s->plist[idx] = last;
		*u64map__get(s->procs, last->key) = idx;
	}
	s->st.processes--;
}

static struct process *process_get(struct symbolizer *s, uint64_t proc)
{
	uint64_t *slot = u64map__get(s->procs, proc);

	if (!slot && symbolizer__note_process(s, proc) == 0)
		slot = u64map__get(s->procs, proc);
	return slot ? s->plist[*slot] : NULL;
}

static const struct mapping *find_mapping(const struct process *p, uint64_t a)
{
	/* Mappings do not overlap: only the last one starting at or below a can hold it. */
	size_t lo = sym_search__upto(p->maps, p->n, sizeof(*p->maps),
				     offsetof(struct mapping, start), a);

	return lo && a < p->maps[lo - 1].end ? &p->maps[lo - 1] : NULL;
}

/* The mapping of a, re-reading the maps of a process still alive (and still the same
 * process) when a is in none and the snapshot is old enough. */
static const struct mapping *lookup_mapping(struct symbolizer *s, struct process *p, uint64_t a)
{
	const struct mapping *mp = find_mapping(p, a);
	unsigned long long starttime;

	/* Images made from the kernel's own reports of each mapping are exact: a miss is no code. */
	if (mp || !p->refresh || now_ns() - p->read_at < REFRESH_NS)
		return mp;
	p->read_at = now_ns();
	if (read_starttime(s, p->pid, &starttime, NULL) || starttime != p->starttime ||
	    read_maps(s, p))
		return NULL;
	return find_mapping(p, a);
}

bool symbolizer__mapped(struct symbolizer *s, uint64_t proc, uint64_t addr)
{
	struct process *p = process_get(s, proc);

	return p && (lookup_mapping(s, p, addr) || sym_perfmap__find(p->perfmap, addr));
}

int symbolizer__code_at(struct symbolizer *s, uint64_t proc, uint64_t addr, struct sym_code *out)
{
	struct process *p = process_get(s, proc);
	const struct mapping *mp = p ? lookup_mapping(s, p, addr) : NULL;
	const struct module *m;

	if (!mp)
		return -ENOENT;
	m = mp->mod ? s->mods[mp->mod - 1] : NULL;
	*out = (struct sym_code){ mp->start, mp->end, mp->pgoff, m ? m->dev : 0, m ? m->ino : 0,
				  p->pid, m && m->path ? m->path : "" };
	return 0;
}

int symbolizer__user(struct symbolizer *s, uint64_t proc, uint64_t addr, bool is_return_addr,
		     struct sym_frame *out, int max)
{
	uint64_t a = is_return_addr && addr ? addr - 1 : addr;
	const struct mapping *mp = NULL;
	struct process *p;
	const char *name;

	if (max < 1)
		return -EINVAL;
	s->st.lookups++;
	p = process_get(s, proc);
	if (p)
		mp = lookup_mapping(s, p, a);
	if (mp && mp->mod) {
		struct module *m = s->mods[mp->mod - 1];
		uint64_t off = a - mp->start + mp->pgoff, vaddr = off;
		size_t first;
		int n;

		if (module_elf(s, m) && sym_elf__vaddr(m->elf, off, &vaddr))
			vaddr = off;
		n = module_frames(s, m, vaddr, &first);
		if (n < 0)
			return n;
		if (n > 0)
			return emit(s, a, s->pool + first, n < max ? n : max, out);
		return emit_one(s, a, unknown_frame(s, m->file, "[unknown] %s+0x%" PRIx64,
						    m->name, vaddr), out);
	}
	/* JIT code lives in anonymous memory; look up unmapped addresses too, as the
	 * process may have unmapped the code since it ran. */
	if (p && (!mp || !*mp->name)) {
		name = sym_perfmap__find(p->perfmap, a);
		if (name)
			return emit_one(s, a, frame_id(s, name, sym_perfmap__path(p->perfmap), 0),
					out);
	}
	if (mp && *mp->name)
		return emit_one(s, a, unknown_frame(s, mp->name, "[unknown] %s+0x%" PRIx64,
						    mp->name, a - mp->start + mp->pgoff), out);
	return emit_one(s, a, unknown_frame(s, "[unknown]", "[unknown] 0x%" PRIx64, a), out);
}

/* Reads kallsyms on first use, and again after a miss once KALLSYMS_RELOAD_NS have passed;
 * the cache of named addresses stays valid, as a name once given keeps its PC. */
static void kernel_load(struct symbolizer *s)
{
	uint64_t now = now_ns();
	struct sym_kernel *k;

	if (s->kernel_read_at && now - s->kernel_read_at < KALLSYMS_RELOAD_NS)
		return;
	s->kernel_read_at = now;
	k = sym_kernel__load(s->kallsyms_path);
	if (k || !s->kernel) {
		sym_kernel__free(s->kernel);
		s->kernel = k;
	}
}

int symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return_addr,
		       struct sym_frame *out, int max)
{
	uint64_t a = is_return_addr && addr ? addr - 1 : addr;
	const char *func = NULL, *module = NULL;
	char file[80];
	uint64_t *slot;
	uint32_t id;
	bool added;

	if (max < 1)
		return -EINVAL;
	slot = u64map__get(s->kcache, a);
	if (slot)
		return emit_one(s, a, (uint32_t)*slot, out);
	if (!s->kernel_read_at)
		kernel_load(s);
	if (s->kernel)
		func = sym_kernel__find(s->kernel, a, &module);
	if (!func) {
		kernel_load(s);
		if (s->kernel)
			func = sym_kernel__find(s->kernel, a, &module);
	}
	if (!func)
		return emit_one(s, a, unknown_frame(s, "[kernel]", "[unknown] 0x%" PRIx64, a), out);
	snprintf(file, sizeof(file), "[%s]", module ? module : "kernel");
	id = frame_id(s, func, file, 0);
	slot = id ? u64map__put(s->kcache, a, &added) : NULL;
	if (!slot)
		return -ENOMEM;
	*slot = id;
	return emit_one(s, a, id, out);
}

/* A module id and how many mappings of noted processes name it. */
struct use {
	uint32_t mod, n;
};

static int more_used(const void *a, const void *b)
{
	const struct use *x = a, *y = b;

	return x->n != y->n ? (x->n < y->n ? 1 : -1) : (x->mod > y->mod) - (x->mod < y->mod);
}

void symbolizer__prepare(struct symbolizer *s, bool kernel, uint64_t budget_ns)
{
	uint64_t t0 = now_ns();
	size_t nmods = gt_tracemap__count(s->mod_ids), nused = 0, ndwarf = 0;
	struct use *use;

	if (kernel && !s->kernel_read_at) {
		kernel_load(s);
		s->st.prepared_kernel = s->kernel != NULL;
	}
	use = nmods ? calloc(nmods, sizeof(*use)) : NULL;
	if (!use)
		goto out;
	for (size_t i = 0; i < nmods; i++)
		use[i].mod = (uint32_t)i + 1;
	for (size_t i = 0; i < s->nprocs; i++)
		for (size_t j = 0; s->plist[i] && j < s->plist[i]->n; j++) {
			uint32_t id = s->plist[i]->maps[j].mod;

			if (id && id <= nmods)
				use[id - 1].n++;
		}
	qsort(use, nmods, sizeof(*use), more_used);
	for (size_t i = 0; i < nmods && use[i].n && now_ns() - t0 < budget_ns; i++) {
		struct module *m = use[i].mod <= s->mods_cap ? s->mods[use[i].mod - 1] : NULL;
		struct sym_elf *e = m && m->file ? module_elf(s, m) : NULL;

		if (e) {
			ndwarf += sym_elf__prepare(e, PREPARE_DWARF_BYTES);
			nused++;
		}
	}
	free(use);
out:
	s->st.prepared += nused;
	s->st.prepared_dwarf += ndwarf;
	s->st.prepare_ns += now_ns() - t0;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	struct pcclaims_stats cs;

	pcclaims__stats(s->claims, &cs);
	*out = s->st;
	out->remapped = cs.moved;
	out->files_refused = foreign_log__count(s->refused);
}

const struct foreign_log *symbolizer__refused(const struct symbolizer *s)
{
	return s->refused;
}

static void copy_opt(char *dst, size_t size, const char *val, const char *def)
{
	snprintf(dst, size, "%s", val ? val : def);
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer_opts o = { 0 };
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	copy_opt(s->proc_root, sizeof(s->proc_root), o.proc_root, "/proc");
	copy_opt(s->kallsyms_path, sizeof(s->kallsyms_path), o.kallsyms, "/proc/kallsyms");
	copy_opt(s->perfmap_dir, sizeof(s->perfmap_dir), o.perfmap_dir, "/tmp");
	s->debuginfo_path = o.debuginfo_path ? strdup(o.debuginfo_path) : NULL;
	s->refused = foreign_log__new(SYM_REFUSED_NAMED);
	s->foreign_left = FOREIGN_BUDGET;
	s->trusted_uid = o.trusted_uid;
	/* The maps' directory is root's: opened once, so that a map's own path is all that is
	 * resolved (without links or mounts) at each open. */
	s->perfmaps = (struct sym_perfmap_env){
		.dirfd = open(s->perfmap_dir, O_PATH | O_DIRECTORY | O_CLOEXEC),
		.dir = s->perfmap_dir,
		.budget = SYM_PERFMAP_BUDGET,
		.refused = s->refused,
	};
	s->str_ids = gt_tracemap__new();
	s->frame_ids = gt_tracemap__new();
	s->mod_ids = gt_tracemap__new();
	s->procs = u64map__new();
	s->claims = pcclaims__new(GEN_CLAIMS, SYM_PC_SYNTHETIC | SYM_PC_REMAPPED, SYM_PC_REMAPPED - 1);
	s->kcache = u64map__new();
	if ((o.debuginfo_path && !s->debuginfo_path) || !s->str_ids || !s->frame_ids ||
	    !s->mod_ids || !s->procs || !s->claims || !s->kcache || !s->refused) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		process_free(s->plist[i]);
	free(s->plist);
	u64map__free(s->procs);
	for (size_t i = 0; i < s->mods_cap; i++)
		module_free(s->mods[i]);
	free(s->mods);
	gt_tracemap__free(s->mod_ids);
	for (size_t i = 0; i < s->strs_cap; i++)
		free(s->strs[i]);
	free(s->strs);
	gt_tracemap__free(s->str_ids);
	free(s->frames);
	gt_tracemap__free(s->frame_ids);
	free(s->pool);
	pcclaims__free(s->claims);
	u64map__free(s->kcache);
	sym_kernel__free(s->kernel);
	free(s->debuginfo_path);
	if (s->perfmaps.dirfd >= 0)
		close(s->perfmaps.dirfd);
	foreign_log__free(s->refused);
	free(s);
}
