/* sym_process.c - the symbolizer's process snapshots: the executable mappings of each process
 * image, read from /proc or made from the kernel's reports, and the mapping an address is in
 * (sym_core.h, symbolize.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/unwind.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/proc/procmaps.h"
#include "user/proc/procstat.h"
#include "user/stacks/sym_core.h"
#include "user/stacks/sym_perfmap.h"
#include "user/stacks/sym_search.h"

/* A miss in a live process re-reads its maps (code mapped since the snapshot, e.g. dlopen),
 * at most this often, so addresses that stay unknown cost no more than a read a second. */
#define REFRESH_NS 1000000000ull
/* A snapshot's first room for mappings: a short process (a shell, /bin/true) maps 4-8
 * executable ones, and a snapshot lives as long as its process, or until its pid comes back
 * when the exit record was lost: 64 entries (2.5 KB) a process held 62 MB in 3 minutes of
 * a whole machine under churn. */
#define MAPS_MIN 8

void sym_process_free(struct process *p)
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
		if (sym_grow((void **)&maps, &cap, n + 1, sizeof(*maps))) {
			err = -ENOMEM;
			break;
		}
		mp = &maps[n];
		*mp = (struct mapping){ e.start, e.end, e.pgoff, 0, sym_intern(s, e.name) };
		if (!mp->name) {
			err = -ENOMEM;
			break;
		}
		if (!e.ino && !strcmp(e.name, "[vdso]")) {
			e.ino = LX_VDSO_INO;
			e.dev = 0;
		}
		if (e.ino && (*e.name == '/' || e.ino == LX_VDSO_INO)) {
			mp->mod = sym_module_get(s, p->pid, mp, e.name, e.dev, e.ino);
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

/* Whether old, the snapshot p replaces, is of the same process (the start reads a process
 * before attaching and again once attached). */
static bool same_process(const struct process *old, const struct process *p)
{
	return old && old->starttime == p->starttime && old->uid == p->uid;
}

/* Puts p in as proc's snapshot, replacing an earlier one. Takes p, even on failure. */
static int process_put(struct symbolizer *s, struct process *p)
{
	struct process *old;
	uint64_t *slot;
	bool added;

	slot = u64map__put(s->procs, p->key, &added);
	if (slot && added && sym_grow((void **)&s->plist, &s->procs_cap, s->nprocs + 1,
				  sizeof(*s->plist))) {
		u64map__del(s->procs, p->key);
		slot = NULL;
	}
	if (!slot) {
		sym_process_free(p);
		return -ENOMEM;
	}
	old = added ? NULL : s->plist[*slot];
	/* The same process keeps its perf map as read so far: read again from the start, a map
	 * refused would be named twice in the summary, and one indexed be indexed twice. */
	if (same_process(old, p)) {
		p->perfmap = old->perfmap;
		old->perfmap = NULL;
	} else {
		p->perfmap = sym_perfmap__new(&s->perfmaps, p->pid, p->uid);
	}
	if (!p->perfmap) {
		if (added)
			u64map__del(s->procs, p->key);
		sym_process_free(p);
		return -ENOMEM;
	}
	if (added) {
		*slot = s->nprocs++;
		s->st.processes++;
	}
	sym_process_free(old);
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
		sym_process_free(p);
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
	if (f->n && grow_array((void **)&p->maps, &p->cap, f->n, sizeof(*p->maps), MAPS_MIN)) {
		sym_process_free(p);
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
	*mp = (struct mapping){ m->start, m->end, m->pgoff, 0,
				sym_intern(s, m->path ? m->path : "") };
	if (!mp->name)
		return -ENOMEM;
	if (m->ino) {
		mp->mod = sym_module_get(s, m->pid, mp, m->path, m->dev, m->ino);
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
	if (grow_array((void **)&p->maps, &p->cap, p->n + 1, sizeof(*p->maps), MAPS_MIN))
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
	sym_process_free(s->plist[idx]);
	u64map__del(s->procs, proc);
	last = s->plist[--s->nprocs];
	if (idx != s->nprocs) {
		s->plist[idx] = last;
		*u64map__get(s->procs, last->key) = idx;
	}
	s->st.processes--;
}

void sym_process_sweep(struct symbolizer *s)
{
	char path[320];
	struct stat st;

	for (size_t i = 0; i < s->nprocs;) {
		struct process *p = s->plist[i];
		bool gone;

		snprintf(path, sizeof(path), "%s/%d", s->proc_root, p->pid);
		gone = !p->starttime || (stat(path, &st) && errno == ENOENT);
		if (gone && p->gone) {
			/* The last one moves into slot i. */
			symbolizer__forget_process(s, p->key);
			s->st.processes_swept++;
			continue;
		}
		p->gone = gone;
		i++;
	}
}

struct process *sym_process_get(struct symbolizer *s, uint64_t proc)
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

const struct mapping *sym_lookup_mapping(struct symbolizer *s, struct process *p, uint64_t a)
{
	const struct mapping *mp = find_mapping(p, a);
	unsigned long long starttime;

	/* Images made from the kernel's reports of each mapping are exact: a miss is no code. */
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
	struct process *p = sym_process_get(s, proc);

	return p && (sym_lookup_mapping(s, p, addr) || sym_perfmap__find(p->perfmap, addr));
}

bool symbolizer__awaited(struct symbolizer *s, uint64_t proc, uint64_t addr)
{
	struct process *p;
	const struct mapping *mp;

	/* A process first seen here has its binaries opened now: one of them may come late. */
	p = sym_process_get(s, proc);
	if (!s->nlate)
		return false;
	mp = p ? sym_lookup_mapping(s, p, addr) : NULL;
	return mp && mp->mod && sym_module_awaited(s, s->mods[mp->mod - 1]);
}

int symbolizer__code_at(struct symbolizer *s, uint64_t proc, uint64_t addr, struct sym_code *out)
{
	struct process *p = sym_process_get(s, proc);
	const struct mapping *mp = p ? sym_lookup_mapping(s, p, addr) : NULL;
	const struct module *m;

	if (!mp)
		return -ENOENT;
	m = mp->mod ? s->mods[mp->mod - 1] : NULL;
	*out = (struct sym_code){ mp->start, mp->end, mp->pgoff, m ? m->dev : 0, m ? m->ino : 0,
				  p->pid, m && m->path ? m->path : "" };
	return 0;
}
