/* python.c - Python processes, their threads for the BPF walk, their code objects named
 * (python.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/proc/mapped_file.h"
#include "user/proc/procmaps.h"
#include "user/proc/procstat.h"
#include "user/stacks/elf_section.h"
#include "user/stacks/py_debug_offsets.h"
#include "user/stacks/py_layouts.h"
#include "user/stacks/py_lines.h"
#include "user/stacks/python.h"
#include "user/stacks/thread_db.h"

/* Bounds on what a process can make lxtrace read or keep. */
#define MAX_PROCS 4096		/* candidates and Python processes (py_procs' size) */
#define MAX_THREADS 4096	/* a process's threads read per scan */
#define MAX_TRIES 100		/* looks for a candidate's interpreter before giving up */
#define SCAN_NS (50 * 1000 * 1000ull)	/* between two reads of a process's threads */
#define JUDGED_NS (1000 * 1000 * 1000ull)	/* between two looks whether a judged one lives */
/* After a process creates a thread, its threads are read at every refresh for this long: the
 * new thread writes its tid into its PyThreadState as it starts (t_bootstrap), and until the
 * walk is told of it its stacks have no Python frames. */
#define NEW_THREAD_NS (50 * 1000 * 1000ull)
/* A thread created but not run yet (its state in the list without a tid: under load it waits
 * for a CPU) keeps its process read at every refresh, this long after the creation at most. */
#define UNBORN_NS (1000 * 1000 * 1000ull)
#define TSTATE_READ 256		/* the bytes of a PyThreadState read to find its tid and next */
#define MAX_STR 256		/* a name or file's characters kept */
#define MAX_LINETABLE (64 * 1024)
#define MAX_CODES 65536		/* code objects kept named; past it the cache starts again */

struct pythread {
	uint32_t tid;
	uint64_t tstate;
};

struct pyproc {
	pid_t pid;
	bool found;		/* its interpreter is known */
	bool dead;		/* to forget: gone, or not Python after all */
	bool judged;		/* left native for good (a version not known, its own offsets
				 * refused, no interpreter found): kept, so that a process noted
				 * again is judged and counted once, until it is gone */
	unsigned long long starttime;	/* /proc/PID/stat's: tells it from a later process
					 * under its pid */
	unsigned tries;
	uint64_t next_ns;	/* its next look or scan */
	uint64_t new_until;	/* scanned at every refresh until then: it created a thread */
	uint64_t created_ns;	/* when it last created one */
	size_t unborn;		/* thread states without a tid at the last scan */
	const struct py_layout *l;
	uint64_t runtime;	/* _PyRuntime's address */
	uint64_t code_type;	/* PyCode_Type's */
	struct thread_db db;	/* its glibc's struct pthread: the kernel tid's offset, where
				 * the layout has no native_thread_id; its pthread keys' */
	struct lx_py_proc bpf;	/* what the walk has of it (py_procs) */
	struct pythread *threads;	/* given to the walk, by tid */
	size_t nthreads, threads_cap;
};

/* What tells a code object from another that later took its address: its strings' and
 * table's addresses and first line, read again at each naming (cheap: one read). */
struct code_ident {
	uint64_t fname, qname, table;
	int32_t first;
};

struct pycode {
	pid_t pid;
	uint64_t addr;
	uint16_t adaptive;	/* its version's co_code_adaptive */
	uint8_t lines;		/* its version's enum py_lines_format */
	struct code_ident id;
	char func[2 * MAX_STR + 2];
	char file[MAX_STR + 1];
	uint8_t *linetable;
	size_t linetable_len;
};

struct python {
	char proc_root[256];
	struct python_maps maps;
	bool has_maps;
	struct pyproc **procs;
	size_t nprocs, procs_cap;
	struct u64map *codes;	/* hash of (pid, code) -> struct pycode * */
	struct pycode **code_list;	/* every one of them, to free */
	size_t ncodes, codes_cap;
	struct python_stats st;
};

/* Where a thread state of p's version says which thread it is: native_thread_id, or before
 * 3.11 thread_id, its pthread_t. */
static uint16_t tid_field(const struct py_layout *l)
{
	return l->tstate_native_tid != LX_PY_NONE ? l->tstate_native_tid : l->tstate_pthread;
}

/* Gives the walk layout i: the table's, with where a thread state says which thread it is, for
 * the states the walk finds itself. */
static void walk_layout(int fd, uint32_t i)
{
	const struct py_layout *l = py_layouts__at(i);
	struct lx_py_layout w = l->walk;

	w.tstate_owner = tid_field(l);
	if (l->tstate_native_tid == LX_PY_NONE)
		w.flags |= LX_PY_OWNER_PTHREAD;
	(void)bpf_map_update_elem(fd, &i, &w, BPF_ANY);
}

struct python *python__new(const char *proc_root, const struct python_maps *maps)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	snprintf(py->proc_root, sizeof(py->proc_root), "%s", proc_root ? proc_root : "/proc");
	py->codes = u64map__new();
	if (!py->codes) {
		free(py);
		return NULL;
	}
	if (maps) {
		py->maps = *maps;
		py->has_maps = true;
		for (uint32_t i = 0; i < py_layouts__count(); i++)
			walk_layout(maps->layouts_fd, i);
	}
	elf_version(EV_CURRENT);
	return py;
}

/* Reads len bytes at addr of process pid; false unless all of them came. */
static bool peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return addr && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static bool peek_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return peek(pid, addr, v, sizeof(*v));
}

static struct pyproc *proc_find(const struct python *py, pid_t pid)
{
	for (size_t i = 0; i < py->nprocs; i++)
		if (py->procs[i]->pid == pid && !py->procs[i]->dead)
			return py->procs[i];
	return NULL;
}

/* Whether a mapped file's name is CPython's: python3.N or libpython3.N.so. */
static bool python_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	return !strncmp(base, "python3", 7);
}

/* The start time of the process pid is now; false when it is gone. */
static bool starttime_of(const struct python *py, pid_t pid, unsigned long long *out)
{
	char path[300], text[1024];
	struct procstat st;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/stat", py->proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (procstat__parse(text, &st) || !st.has_starttime)
		return false;
	*out = st.starttime;
	return true;
}

static void forget(struct python *py, struct pyproc *p);

static void proc_add(struct python *py, pid_t pid)
{
	struct pyproc *p = proc_find(py, pid);
	unsigned long long start;

	if (!starttime_of(py, pid, &start))
		return;
	/* Known: the same process, or a later one under its pid, which replaces it. */
	if (p && p->starttime == start)
		return;
	if (p)
		forget(py, p);
	if (py->nprocs >= MAX_PROCS ||
	    grow_array((void **)&py->procs, &py->procs_cap, py->nprocs + 1, sizeof(*py->procs), 16))
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->pid = pid;
	p->starttime = start;
	py->procs[py->nprocs++] = p;
}

void python__note(struct python *py, pid_t pid)
{
	char path[300], line[4096];
	struct procmaps_entry e;
	FILE *f;

	if (!py)
		return;
	snprintf(path, sizeof(path), "%s/%d/maps", py->proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (procmaps__parse_exec(line, &e) && e.ino && python_name(e.name)) {
			proc_add(py, pid);
			break;
		}
	fclose(f);
}

void python__mapped(struct python *py, const struct lx_mmap *m)
{
	char path[LX_PATH_LEN + 1];

	if (!py || !m->ino)
		return;
	memcpy(path, m->path, LX_PATH_LEN);
	path[LX_PATH_LEN] = '\0';
	if (python_name(path))
		proc_add(py, (pid_t)m->pid);
}

/* The symbols lxtrace needs of the interpreter's binary, at their link-time addresses. */
struct py_syms {
	uint64_t runtime, code_type, version;
	bool is_none;		/* Py_IsNone: 3.10 or later */
	uint64_t load_delta;	/* p_vaddr - p_offset of the segment holding the code mapped */
};

static bool py_sym(const char *name, const GElf_Sym *sym, void *ctx)
{
	struct py_syms *out = ctx;

	if (!strcmp(name, "_PyRuntime"))
		out->runtime = sym->st_value;
	else if (!strcmp(name, "PyCode_Type"))
		out->code_type = sym->st_value;
	else if (!strcmp(name, "Py_Version"))
		out->version = sym->st_value;
	else if (!strcmp(name, "Py_IsNone"))
		out->is_none = true;
	return false;
}

static void syms_of(Elf *elf, uint64_t pgoff, struct py_syms *out)
{
	GElf_Phdr ph;
	size_t nph = 0;

	if (!elf_getphdrnum(elf, &nph))
		for (size_t i = 0; i < nph; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    pgoff >= (ph.p_offset & ~0xfffull) && pgoff < ph.p_offset + ph.p_filesz)
				out->load_delta = ph.p_vaddr - ph.p_offset;
	elf_section__each_symbol(elf, py_sym, out);
}

/* The minor version a CPython file's name says: python3.N, libpython3.N.so; -1 for none. */
static int minor_of_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char *end;
	long v;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (strncmp(base, "python3.", 8))
		return -1;
	v = strtol(base + 8, &end, 10);
	return end > base + 8 && v >= 0 && v < 100 && (!*end || *end == '.') ? (int)v : -1;
}

/* Whether the offsets p publishes (3.13+: _Py_DebugOffsets, at runtime, its _PyRuntime) are
 * those of p's table; counted when not. */
static bool offsets_agree(struct python *py, const struct pyproc *p, uint64_t runtime,
			  uint32_t version)
{
	uint8_t block[PY_DEBUG_OFFSETS_SIZE];

	if (peek(p->pid, runtime, block, sizeof(block)) &&
	    py_debug_offsets__check(block, sizeof(block), version, p->l) == PY_DEBUG_AGREE)
		return true;
	py->st.offsets_refused++;
	return false;
}

/* Looks for p's interpreter in its mappings: 1 found (p->l set, or p->dead for a version not
 * known), 0 not yet, -1 never (counted where it is not plain: no python file mapped). */
static int find_interpreter(struct python *py, struct pyproc *p)
{
	char path[300], line[4096];
	struct procmaps_entry e;
	struct py_syms s = { 0 };
	uint64_t bias = 0;
	uint32_t ver = 0;
	int name_minor = -1;
	bool seen = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", py->proc_root, (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!s.runtime && fgets(line, sizeof(line), f)) {
		struct mapped_file mf;
		Elf *elf;
		int fd;

		if (!procmaps__parse_exec(line, &e) || !e.ino || !python_name(e.name))
			continue;
		seen = true;
		mf = (struct mapped_file){ py->proc_root, p->pid, e.start, e.end, e.name, e.dev,
					   e.ino };
		fd = mapped_file__open(&mf, NULL);
		if (fd < 0)
			continue;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf) {
			s = (struct py_syms){ 0 };
			syms_of(elf, e.pgoff, &s);
			bias = e.start - e.pgoff - s.load_delta;
			name_minor = minor_of_name(e.name);
			elf_end(elf);
		}
		close(fd);
	}
	fclose(f);
	if (!s.runtime || !s.code_type)
		return seen ? 0 : -1;
	/* Py_Version (3.11+): 0xMMmmppXX, as PY_VERSION_HEX. Before it, the file's name says
	 * the version, for 3.10 alone, which a function new in 3.10 (Py_IsNone) confirms. */
	if (s.version && !peek(p->pid, bias + s.version, &ver, sizeof(ver)))
		return 0;
	if (!s.version)
		ver = s.is_none && name_minor == 10 ? 0x030a0000 : 0;
	p->l = py_layouts__find(ver >> 24, (ver >> 16) & 0xff);
	if (p->l && p->l->minor >= 13 && !offsets_agree(py, p, bias + s.runtime, ver))
		return -1;
	/* glibc's descriptors: the threads' keys, and their tid where the thread state has
	 * none (3.10), without which it is not walked. */
	if (p->l && !thread_db__read(py->proc_root, p->pid, &p->db) &&
	    p->l->tstate_native_tid == LX_PY_NONE) {
		py->st.not_found++;
		return -1;
	}
	p->runtime = bias + s.runtime;
	p->code_type = bias + s.code_type;
	return 1;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct pythread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Takes p's threads out of the walk's map. */
static void drop_threads(struct python *py, struct pyproc *p)
{
	for (size_t i = 0; py->has_maps && i < p->nthreads; i++)
		(void)bpf_map_delete_elem(py->maps.threads_fd, &p->threads[i].tid);
	p->nthreads = 0;
}

/* The kernel tid of the thread whose state begins with buf (through tid_field) in p: its
 * native_thread_id, or before 3.11 the tid in its struct pthread; 0 for a thread not started
 * yet, or whose struct pthread does not read (gone). */
static uint64_t thread_tid(const struct pyproc *p, const uint8_t *buf)
{
	uint64_t v;
	uint32_t t = 0;

	memcpy(&v, buf + tid_field(p->l), sizeof(v));
	if (p->l->tstate_native_tid != LX_PY_NONE)
		return v;
	if (v && !peek(p->pid, v + p->db.tid, &t, sizeof(t)))
		t = 0;
	return t;
}

/* Reads p's thread list and gives the walk what changed. False when the process is gone. */
static bool scan_threads(struct python *py, struct pyproc *p)
{
	struct pythread *now = NULL, *old = p->threads;
	size_t n = 0, cap = 0, j = 0, nold = p->nthreads;
	size_t span = (size_t)(tid_field(p->l) > p->l->tstate_next ? tid_field(p->l) :
								     p->l->tstate_next) + 8;
	uint64_t interp = 0, ts = 0;
	uint8_t buf[TSTATE_READ];

	if (!peek_u64(p->pid, p->runtime + p->l->runtime_interp_head, &interp))
		return false;
	if (interp && !peek_u64(p->pid, interp + p->l->interp_threads_head, &ts))
		return false;
	p->unborn = 0;
	for (unsigned k = 0; ts && k < MAX_THREADS; k++) {
		uint64_t tid, next;

		/* One read a thread: its tid and next in the same bytes. */
		if (span > sizeof(buf) || !peek(p->pid, ts, buf, span))
			break;
		tid = thread_tid(p, buf);
		memcpy(&next, buf + p->l->tstate_next, sizeof(next));
		p->unborn += !tid;
		if (tid && tid < (1u << 22) &&
		    !grow_array((void **)&now, &cap, n + 1, sizeof(*now), 16))
			now[n++] = (struct pythread){ (uint32_t)tid, ts };
		ts = next;
	}
	qsort(now, n, sizeof(*now), cmp_tid);
	for (size_t i = 0; i < n; i++) {
		struct lx_py_thread v = { now[i].tstate, (uint32_t)p->pid, py_layouts__index(p->l) };

		while (j < nold && old[j].tid < now[i].tid)
			(void)bpf_map_delete_elem(py->maps.threads_fd, &old[j++].tid);
		if (j < nold && old[j].tid == now[i].tid && old[j].tstate == now[i].tstate) {
			j++;
			continue;
		}
		if (j < nold && old[j].tid == now[i].tid)
			j++;
		if (bpf_map_update_elem(py->maps.threads_fd, &now[i].tid, &v, BPF_ANY))
			py->st.threads_full++;
		else
			py->st.threads++;
	}
	while (j < nold)
		(void)bpf_map_delete_elem(py->maps.threads_fd, &old[j++].tid);
	free(old);
	p->threads = now;
	p->nthreads = n;
	p->threads_cap = cap;
	return true;
}

/* Forgets p: its threads, its process entry, its code objects. */
static void forget(struct python *py, struct pyproc *p)
{
	uint32_t pid = (uint32_t)p->pid;

	drop_threads(py, p);
	if (py->has_maps && p->found)
		(void)bpf_map_delete_elem(py->maps.procs_fd, &pid);
	p->dead = true;
}

/* Gives the walk what it needs of p (py_procs): its layout, and where its threads keep their
 * states, once its interpreter has made the key (read at every scan: an interpreter made
 * again makes another), for the stacks of the threads the scans have not read yet. always:
 * even when unchanged. */
static void publish(struct python *py, struct pyproc *p, bool always)
{
	struct lx_py_proc v = { .layout = py_layouts__index(p->l) };
	uint32_t pid = (uint32_t)p->pid;
	int32_t tss[2];		/* Py_tss_t: made (1), the key */

	if (!peek(p->pid, p->runtime + p->l->runtime_tss, tss, sizeof(tss)) || tss[0] != 1 ||
	    tss[1] < 0 || !thread_db__key(&p->db, (uint32_t)tss[1], &v.tsd_block, &v.tsd_value)) {
		v.tsd_block = LX_PY_NO_TSD;
		v.tsd_value = 0;
	}
	if ((always || memcmp(&v, &p->bpf, sizeof(v))) &&
	    !bpf_map_update_elem(py->maps.procs_fd, &pid, &v, BPF_ANY))
		p->bpf = v;
}

/* Leaves p native for good, looked at again only to learn when it is gone. */
static void judge(struct pyproc *p, uint64_t now)
{
	p->judged = true;
	p->next_ns = now + JUDGED_NS;
}

static void refresh_one(struct python *py, struct pyproc *p, uint64_t now)
{
	unsigned long long start;
	int r;

	if (now < p->next_ns && !(p->found && now < p->new_until) &&
	    !(p->unborn && now < p->created_ns + UNBORN_NS))
		return;
	if (p->judged) {
		p->next_ns = now + JUDGED_NS;
		p->dead = !starttime_of(py, p->pid, &start) || start != p->starttime;
		return;
	}
	p->next_ns = now + SCAN_NS;
	if (!p->found) {
		r = find_interpreter(py, p);
		if (r == 0 && ++p->tries < MAX_TRIES)
			return;
		if (r < 0 || (r == 0 && p->tries >= MAX_TRIES)) {
			py->st.not_found += r == 0;
			judge(p, now);
			return;
		}
		if (!p->l) {
			py->st.unknown_version++;
			judge(p, now);
			return;
		}
		p->found = true;
		py->st.processes++;
		if (py->has_maps)
			publish(py, p, true);
	} else if (py->has_maps) {
		publish(py, p, false);
	}
	if (py->has_maps && !scan_threads(py, p))
		forget(py, p);
}

void python__thread_created(struct python *py, pid_t pid, uint64_t ts)
{
	struct pyproc *p = py ? proc_find(py, pid) : NULL;

	if (p && ts + NEW_THREAD_NS > p->new_until) {
		p->new_until = ts + NEW_THREAD_NS;
		p->created_ns = ts;
	}
}

void python__refresh(struct python *py, uint64_t now_ns)
{
	size_t k = 0;

	if (!py)
		return;
	for (size_t i = 0; i < py->nprocs; i++)
		if (!py->procs[i]->dead)
			refresh_one(py, py->procs[i], now_ns);
	for (size_t i = 0; i < py->nprocs; i++) {
		struct pyproc *p = py->procs[i];

		if (p->dead) {
			free(p->threads);
			free(p);
		} else {
			py->procs[k++] = p;
		}
	}
	py->nprocs = k;
}

/* The text of a str object at addr of pid, printable ASCII kept (anything else is '?'): the
 * name lands in a trace and on terminals. False when it is no compact string. */
static bool read_str(pid_t pid, const struct py_layout *l, uint64_t addr, char *out, size_t cap)
{
	uint8_t hdr[80];
	uint64_t len;
	uint32_t state;
	unsigned kind, width;
	uint8_t buf[MAX_STR * 4];
	size_t n;

	if (!peek(pid, addr, hdr, sizeof(hdr)))
		return false;
	memcpy(&len, hdr + PY_STR_LENGTH, sizeof(len));
	memcpy(&state, hdr + PY_STR_STATE, sizeof(state));	/* interned 2, kind 3, compact 1,
								 * ascii 1 bits */
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return false;
	width = kind;
	n = len < cap - 1 ? (size_t)len : cap - 1;
	if (n > MAX_STR)
		n = MAX_STR;
	if (!peek(pid, addr + ((state >> 6) & 1 ? l->str_ascii_data : l->str_compact_data), buf,
		  n * width))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = width == 1 ? buf[i] : width == 2 ? (uint32_t)buf[2 * i] | buf[2 * i + 1] << 8 :
			     (uint32_t)buf[4 * i] | (uint32_t)buf[4 * i + 1] << 8;

		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[n] = '\0';
	return true;
}

/* The module a file is: its name without ".py", or its directory's for a package's
 * __init__.py. */
static void module_of(const char *file, char *out, size_t cap)
{
	const char *base = strrchr(file, '/'), *dir = file;
	size_t len;

	base = base ? base + 1 : file;
	len = strcspn(base, ".");
	if (len == 8 && !strncmp(base, "__init__", 8) && base > file + 1) {
		for (const char *c = base - 2; c >= file && *c != '/'; c--)
			dir = c;
		base = dir;
		len = strcspn(base, "/");
	}
	snprintf(out, cap, "%.*s", (int)len, base);
}

/* The header of the code object at addr of p into *id; false when it is none. */
static bool code_header(const struct pyproc *p, uint64_t addr, struct code_ident *id)
{
	const struct py_layout *l = p->l;
	uint8_t hdr[256];
	uint64_t type;

	_Static_assert(sizeof(hdr) >= 208, "the code header read holds co_code_adaptive's offset");
	if (!peek(p->pid, addr, hdr, sizeof(hdr)))
		return false;
	memcpy(&type, hdr + PY_OB_TYPE, sizeof(type));
	if (type != p->code_type)
		return false;
	memcpy(&id->fname, hdr + l->code_filename, sizeof(id->fname));
	memcpy(&id->qname, hdr + l->code_qualname, sizeof(id->qname));
	memcpy(&id->table, hdr + l->code_linetable, sizeof(id->table));
	memcpy(&id->first, hdr + l->code_firstlineno, sizeof(id->first));
	return true;
}

/* Reads the code object at addr of p, whose header says id; NULL when it is none. */
static struct pycode *read_code(struct python *py, const struct pyproc *p, uint64_t addr,
				const struct code_ident *id)
{
	char mod[MAX_STR + 1], qual[MAX_STR + 1];
	struct pycode *c = calloc(1, sizeof(*c));
	uint64_t size;

	if (!c)
		return NULL;
	c->pid = p->pid;
	c->addr = addr;
	c->adaptive = p->l->code_adaptive;
	c->lines = p->l->linetable;
	c->id = *id;
	if (!read_str(p->pid, p->l, id->fname, c->file, sizeof(c->file)) ||
	    !read_str(p->pid, p->l, id->qname, qual, sizeof(qual))) {
		free(c);
		return NULL;
	}
	module_of(c->file, mod, sizeof(mod));
	snprintf(c->func, sizeof(c->func), "%s.%s", mod, qual);
	/* co_linetable, a bytes object. */
	if (peek_u64(p->pid, id->table + PY_BYTES_SIZE, &size) && size <= MAX_LINETABLE) {
		c->linetable = malloc(size ? size : 1);
		if (c->linetable && peek(p->pid, id->table + PY_BYTES_DATA, c->linetable, size))
			c->linetable_len = size;
	}
	py->st.codes++;
	return c;
}

static void codes_clear(struct python *py)
{
	for (size_t i = 0; i < py->ncodes; i++) {
		free(py->code_list[i]->linetable);
		free(py->code_list[i]);
	}
	py->ncodes = 0;
	u64map__clear(py->codes);
}

/* Keeps c under key; false (c freed) on ENOMEM. */
static bool code_keep(struct python *py, uint64_t key, struct pycode *c)
{
	uint64_t *v;
	bool added;

	if (py->ncodes >= MAX_CODES) {
		codes_clear(py);
		py->st.cache_clears++;
	}
	if (grow_array((void **)&py->code_list, &py->codes_cap, py->ncodes + 1,
		       sizeof(*py->code_list), 64) ||
	    !(v = u64map__put(py->codes, key, &added))) {
		free(c->linetable);
		free(c);
		return false;
	}
	py->code_list[py->ncodes++] = c;
	*v = (uint64_t)(uintptr_t)c;
	return true;
}

static uint64_t code_key(pid_t pid, uint64_t addr)
{
	return hash_mix(addr ^ hash_mix((uint64_t)(uint32_t)pid + 1));
}

/* The name of frame f of process pid into *out: from the process when it runs (the code
 * object checked to be the one cached, read again when not), else as cached. */
static bool name_frame(struct python *py, pid_t pid, const struct lx_pyframe *f,
		       struct python_name *out, bool recheck)
{
	const struct pyproc *p = proc_find(py, pid);
	struct code_ident id;
	struct pycode *c;
	uint64_t key, *v;
	int64_t index;

	memset(&id, 0, sizeof(id));	/* compared whole, padding too */
	key = code_key(pid, f->code);
	v = u64map__get(py->codes, key);
	c = v ? (struct pycode *)(uintptr_t)*v : NULL;
	if (c && (c->pid != pid || c->addr != f->code))
		c = NULL;
	if (p && p->found && (recheck || !c)) {
		if (!code_header(p, f->code, &id)) {
			/* Gone since: what was read of it stands. */
			if (!c || kill(pid, 0) == 0 || errno != ESRCH)
				return false;
		} else if (!c || memcmp(&c->id, &id, sizeof(id))) {
			c = read_code(py, p, f->code, &id);
			if (!c || !code_keep(py, key, c))
				return false;
		}
	}
	if (!c)
		return false;
	out->func = c->func;
	out->file = c->file;
	index = f->instr == ~0u ? -1 : ((int64_t)f->instr - c->adaptive) / 2;
	out->line = py_lines__line(c->lines, c->linetable, c->linetable_len, c->id.first, index);
	return true;
}

bool python__name(struct python *py, pid_t pid, const struct lx_pyframe *f,
		  struct python_name *out)
{
	if (!py)
		return false;
	if (name_frame(py, pid, f, out, true))
		return true;
	py->st.bad_codes++;
	return false;
}

int python__line(struct python *py, pid_t pid, const struct lx_pyframe *f)
{
	struct python_name nm;

	return py && name_frame(py, pid, f, &nm, false) ? nm.line : -1;
}

void python__peek(struct python *py, const struct lx_pyrec *r)
{
	const struct pyproc *p = py ? proc_find(py, (pid_t)r->ps.pid) : NULL;
	struct python_name nm;

	for (unsigned i = 0; p && i < r->ps.n && i < LX_PY_FRAMES_MAX; i++)
		(void)name_frame(py, p->pid, &r->f[i], &nm, false);
}

void python__stats(const struct python *py, struct python_stats *out)
{
	*out = py ? py->st : (struct python_stats){ 0 };
}

void python__free(struct python *py)
{
	if (!py)
		return;
	for (size_t i = 0; i < py->nprocs; i++) {
		free(py->procs[i]->threads);
		free(py->procs[i]);
	}
	free(py->procs);
	codes_clear(py);
	free(py->code_list);
	u64map__free(py->codes);
	free(py);
}
