/* symbolize.c - the symbolizer's front: user and kernel addresses to frames, reading ahead, its
 * life and its counts (symbolize.h); its parts are in sym_core.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tracemap.h"
#include "lib/clock.h"
#include "lib/foreign_file.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/stacks/pcclaims.h"
#include "user/stacks/sym_core.h"
#include "user/stacks/sym_elf.h"
#include "user/stacks/sym_kernel.h"
#include "user/stacks/sym_perfmap.h"
#include "user/stacks/sym_unknowns.h"
#include "user/stacks/symbolize.h"

/* PC claims a generation holds (pcclaims.h): ~4 MiB of them at most. */
#define GEN_CLAIMS (1u << 16)
/* Frames of unknown addresses a generation holds (sym_unknowns.h): ~1.5 MiB with their strings
 * and keys. A whole machine under bench/soak.sh's churn made 8.4 MB of them in 3 minutes, kept
 * for good before. */
#define GEN_UNKNOWNS (1u << 14)
/* An address kallsyms did not name (a module or BPF program loaded since it was read) reads
 * it again, at most this often: a read takes tens of milliseconds. */
#define KALLSYMS_RELOAD_NS 10000000000ull
/* Reading ahead inflates no DWARF from a file larger than this: a whole library's debug data
 * (LLVM's is hundreds of MiB) can take seconds and gigabytes, whereas stacks may need a few of
 * its lines. libc6-dbg's libc: 4 MiB. */
#define PREPARE_DWARF_BYTES (32ull << 20)
/* The memory that reading all the binaries other users control may take, in all (sym_module_elf,
 * sym_elf__open): their compressed sections inflated, and their own DWARF at
 * SYM_ELF_DWARF_COST a byte, so 2 MiB of it. Real DWARF inflates about 3 times (Debian's debug
 * files: 2.6 over all their compressed sections). */
#define FOREIGN_BUDGET (256ull << 20)

/* Every this many lookups, the ELFs of the binaries none of them asked for are closed
 * (sym_module_sweep): about a minute of a whole machine under process churn. A binary read
 * again costs milliseconds (libc's DWARF inflated: 85 ms): sweeps every 262,144 lookups read
 * 548 of the 606 binaries they closed in 10 minutes again. A recording that looks nothing up
 * opens nothing either. */
#define SWEEP_LOOKUPS (1u << 20)
/* What the open binaries may hold at most (sym_elf__bytes: mostly libdw's line tables of the
 * CUs lookups met), unless symbolizer_opts.elf_budget says otherwise: past it the least
 * recently used are closed. A whole machine at load 18, where every rebuild of a test binary
 * is a new binary with DWARF, kept 100-120 MB of them open between sweeps. */
#define ELF_BUDGET (32ull << 20)
/* In symbolizer.jit_owners: the process's perf map was refused, and is not opened again. */
#define SYM_JIT_REFUSED UINT64_MAX

/* Notes p's user as the owner its perf map may have when it is read again at the end
 * (symbolizer__late_jit); false when that map was refused, or on ENOMEM. */
static bool note_jit_owner(struct symbolizer *s, const struct process *p)
{
	uint64_t *slot;
	bool added;

	slot = u64map__put(s->jit_owners, (uint32_t)p->pid, &added);
	if (!slot)
		return false;
	if (added || *slot != SYM_JIT_REFUSED)
		*slot = sym_perfmap__given_up(p->perfmap) ? SYM_JIT_REFUSED : p->uid;
	return *slot != SYM_JIT_REFUSED;
}

/* Every this often (looked at every PAGE_OUT_LOOKUPS lookups) the pages of the open binaries'
 * files that reading them touched are given back (sym_module_page_out): 70 MB of the
 * recorder's RSS a minute into a whole machine at load 18 (libpython's DWARF alone 13.6 MB),
 * whose parsed form libdw keeps anyway. A page touched again is read again, from the page
 * cache while the kernel still holds it. */
#define PAGE_OUT_NS (10 * 1000 * 1000 * 1000ull)
#define PAGE_OUT_LOOKUPS 4096

/* A where word (symbolizer__where): SYM_WHERE, the module id in the bits below it, and the
 * ELF virtual address in the low WHERE_VADDR_BITS (user code is below 2^47). */
#define WHERE_VADDR_BITS 47
#define WHERE_MODS ((1u << (63 - WHERE_VADDR_BITS)) - 1)

bool symbolizer__where(struct symbolizer *s, uint64_t proc, const uint64_t *addrs, size_t n,
		       uint64_t *out)
{
	struct process *p = sym_process_get(s, proc);

	for (size_t i = 0; p && i < n; i++) {
		const struct mapping *mp = sym_lookup_mapping(s, p, addrs[i]);
		struct module *m = mp && mp->mod && mp->mod <= WHERE_MODS ? s->mods[mp->mod - 1] : NULL;
		uint64_t vaddr;

		/* A file not read yet names its addresses "[unknown]" now, and otherwise later. */
		if (!m || m->late || m->failed)
			return false;
		vaddr = sym_module_vaddr(s, m, addrs[i] - mp->start + mp->pgoff);
		if (vaddr >> WHERE_VADDR_BITS)
			return false;
		out[i] = SYM_WHERE | (uint64_t)mp->mod << WHERE_VADDR_BITS | vaddr;
	}
	return p != NULL;
}

int symbolizer__user(struct symbolizer *s, uint64_t proc, uint64_t addr, bool is_return_addr,
		     struct sym_frame *out, int max)
{
	uint64_t a = is_return_addr && addr ? addr - 1 : addr;
	const struct mapping *mp = NULL;
	struct process *p;
	const char *name;
	int n;

	if (max < 1)
		return -EINVAL;
	if (!(++s->st.lookups % SWEEP_LOOKUPS))
		sym_module_sweep(s);
	if (!(s->st.lookups % PAGE_OUT_LOOKUPS) && now_ns() - s->paged_out_at >= PAGE_OUT_NS) {
		sym_module_page_out(s);
		sym_process_sweep(s);
	}
	p = sym_process_get(s, proc);
	if (p)
		mp = sym_lookup_mapping(s, p, a);
	if (mp && mp->mod) {
		struct module *m = s->mods[mp->mod - 1];
		uint64_t vaddr = sym_module_vaddr(s, m, a - mp->start + mp->pgoff);
		size_t first;

		n = sym_module_frames(s, m, vaddr, &first);
		if (n < 0)
			return n;
		if (n > 0)
			return sym_emit(s, a, s->pool + first, n < max ? n : max, out);
		return sym_emit_unknown(s, a, out, m->file, "[unknown] %s+0x%" PRIx64, m->name,
					vaddr);
	}
	/* JIT code lives in anonymous memory; look up unmapped addresses too, as the
	 * process may have unmapped the code since it ran. */
	if (p && (!mp || !*mp->name)) {
		name = sym_perfmap__find(p->perfmap, a);
		if (name)
			return sym_emit_one(s, a, sym_frame_id(s, name, sym_perfmap__path(p->perfmap), 0),
					out);
	}
	if (mp && *mp->name)
		return sym_emit_unknown(s, a, out, mp->name, "[unknown] %s+0x%" PRIx64, mp->name,
					a - mp->start + mp->pgoff);
	n = sym_emit_unknown(s, a, out, "[unknown]", "[unknown] 0x%" PRIx64, a);
	if (n > 0 && p)
		out->late_jit = note_jit_owner(s, p);
	return n;
}

int symbolizer__late_jit(struct symbolizer *s, pid_t pid, uint64_t a, bool last,
			 struct sym_frame *out)
{
	const uint64_t *owner = u64map__get(s->jit_owners, (uint32_t)pid);
	struct sym_perfmap *m;
	const char *name;
	uint64_t *slot;
	bool added;

	if (!owner || *owner == SYM_JIT_REFUSED)
		return 0;
	slot = u64map__put(s->late_maps, (uint32_t)pid, &added);
	if (!slot)
		return -ENOMEM;
	if (added) {
		m = sym_grow((void **)&s->late_jit, &s->late_jit_cap, s->nlate_jit + 1,
			       sizeof(*s->late_jit)) ? NULL :
			sym_perfmap__new(&s->perfmaps, pid, (uid_t)*owner);
		if (!m) {
			u64map__del(s->late_maps, (uint32_t)pid);
			return -ENOMEM;
		}
		*slot = s->nlate_jit;
		s->late_jit[s->nlate_jit++] = m;
	}
	m = s->late_jit[*slot];
	if (!m)
		return 0;
	name = sym_perfmap__find(m, a);
	/* No map at the end: none comes while the other addresses of the pid are asked for.
	 * Before it (a flight recorder's window), one may come later: it is looked for again. */
	if (!name && last && sym_perfmap__absent(m)) {
		sym_perfmap__free(m);
		s->late_jit[*slot] = NULL;
	}
	if (!name)
		return 0;
	return sym_emit_one(s, a, sym_frame_id(s, name, sym_perfmap__path(m), 0), out);
}

bool symbolizer__perf_map_absent(const struct symbolizer *s, pid_t pid)
{
	char name[32];
	struct stat st;

	snprintf(name, sizeof(name), "perf-%d.map", (int)pid);
	return s->perfmaps.dirfd >= 0 &&
	       fstatat(s->perfmaps.dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && errno == ENOENT;
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

/* Named frames take the deepest inline depth, which no inlined caller reaches in practice, and
 * a hash of their frame's id below it; a clash is moved like any other (pcclaims.h). */
int symbolizer__named(struct symbolizer *s, const char *func, const char *file, uint64_t line,
		      struct sym_frame *out)
{
	uint32_t id = sym_frame_id(s, func, file, line);

	return sym_emit_one(s, SYM_PC_SYNTHETIC | 255ull << 47 | (hash_mix(id) & ((1ull << 47) - 1)),
			    id, out);
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
		return sym_emit_one(s, a, (uint32_t)*slot, out);
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
		return sym_emit_unknown(s, a, out, "[kernel]", "[unknown] 0x%" PRIx64, a);
	snprintf(file, sizeof(file), "[%s]", module ? module : "kernel");
	id = sym_frame_id(s, func, file, 0);
	slot = id ? u64map__put(s->kcache, a, &added) : NULL;
	if (!slot)
		return -ENOMEM;
	*slot = id;
	return sym_emit_one(s, a, id, out);
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
		struct sym_elf *e = m && m->file ? sym_module_elf(s, m) : NULL;

		if (e) {
			ndwarf += sym_elf__prepare(e, PREPARE_DWARF_BYTES);
			sym_module_count(s, m);
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
	out->unknown_held = sym_unknowns__held(s->unknowns);
	out->files_refused = foreign_log__count(s->refused);
}

uint64_t symbolizer__read_late(const struct symbolizer *s)
{
	return s->st.modules_read_late;
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
	s->unread = foreign_log__new(SYM_REFUSED_NAMED);
	s->foreign_left = FOREIGN_BUDGET;
	s->elf_budget = o.elf_budget ? o.elf_budget : ELF_BUDGET;
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
	s->unknowns = sym_unknowns__new(GEN_UNKNOWNS);
	s->kcache = u64map__new();
	s->jit_owners = u64map__new();
	s->late_maps = u64map__new();
	if (!s->jit_owners || !s->late_maps ||
	    (o.debuginfo_path && !s->debuginfo_path) || !s->str_ids || !s->frame_ids ||
	    !s->mod_ids || !s->procs || !s->claims || !s->unknowns || !s->kcache || !s->refused ||
	    !s->unread) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void symbolizer__finish(struct symbolizer *s)
{
	for (size_t i = 0; i < s->mods_cap; i++)
		if (s->mods[i])
			sym_module_note_unread(s, s->mods[i]);
}

const struct foreign_log *symbolizer__unread(const struct symbolizer *s)
{
	return s->unread;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		sym_process_free(s->plist[i]);
	free(s->plist);
	u64map__free(s->procs);
	for (size_t i = 0; i < s->mods_cap; i++)
		sym_module_free(s->mods[i]);
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
	sym_unknowns__free(s->unknowns);
	u64map__free(s->kcache);
	u64map__free(s->jit_owners);
	u64map__free(s->late_maps);
	for (size_t i = 0; i < s->nlate_jit; i++)
		sym_perfmap__free(s->late_jit[i]);
	free(s->late_jit);
	sym_kernel__free(s->kernel);
	free(s->debuginfo_path);
	if (s->perfmaps.dirfd >= 0)
		close(s->perfmaps.dirfd);
	foreign_log__free(s->refused);
	foreign_log__free(s->unread);
	free(s);
}
