/* sym_core.h - the symbolizer's state and what its files share: interned strings and frames
 * and the PCs they are handed out at (sym_intern.c), one module per binary, shared by every
 * process mapping it (sym_module.c), one snapshot per process image (sym_process.c); the front,
 * symbolize.c, answers lookups with them. Private to these files: everyone else uses
 * symbolize.h.
 *
 * Calls run one way: symbolize.c -> sym_process.c -> sym_module.c -> sym_intern.c.
 */
#ifndef LXTRACE_USER_STACKS_SYM_CORE_H
#define LXTRACE_USER_STACKS_SYM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "user/stacks/sym_elf.h"
#include "user/stacks/sym_perfmap.h"
#include "user/stacks/symbolize.h"

struct gt_tracemap;
struct pcclaims;
struct sym_kernel;
struct sym_unknowns;
struct u64map;

struct module {
	uint64_t dev, ino;	/* st_dev (makedev) and inode; LX_VDSO_INO for the vDSO */
	char *path;
	const char *name;	/* interned basename, for "[unknown] NAME+0x..." */
	const char *file;	/* interned path: the file of frames without DWARF lines */
	int fd;			/* the file: sym_elf reads a copy, this one reads it again */
	bool failed;		/* no file (yet): opened again with the next process mapping it */
	bool bad;		/* not an ELF file libdwfl reads: for good */
	bool late;		/* its open was not answered in time (lib/file_worker.h): asked
				 * again on lookups, at most every SYM_LATE_RETRY_NS */
	uint64_t retry_at;	/* CLOCK_MONOTONIC ns: when a late open is asked again */
	uint64_t late_since;	/* CLOCK_MONOTONIC ns: when its first open was late; 0 never */
	pid_t pid;		/* the last process seen mapping it, at [start, end): how it is */
	uint64_t start, end;	/* opened again */
	struct sym_elf *elf;
	/* elf's PT_LOAD segments, noted at its first open: a closed binary's addresses are
	 * translated without reading it again (sym_module_vaddr) */
	struct sym_elf_load *loads;
	int nloads;
	bool loads_noted;
	bool closable;		/* elf may be closed: a file root or the trusted user controls */
	uint64_t bytes;		/* elf's sym_elf__bytes, as counted in symbolizer.elf_bytes */
	uint64_t used;		/* 1 + the sweep during which elf was last asked for; 0: never */
	uint64_t used_at;	/* symbolizer_stats.lookups when elf was last asked for */
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
	uid_t uid;			/* its user: its perf map's owner may be it or root */
	struct sym_perfmap *perfmap;
	bool gone;			/* found gone by the last sym_process_sweep */
};

struct frame {
	const char *func, *file;
	uint64_t line;
};

struct symbolizer {
	char proc_root[256], kallsyms_path[256], perfmap_dir[256];
	char *debuginfo_path;
	struct sym_perfmap_env perfmaps;	/* what the processes' perf maps share */
	/* pid -> its user, of processes whose JIT code a lookup left unnamed (SYM_JIT_REFUSED:
	 * their map was refused), and pid -> index in late of the map symbolizer__late_jit
	 * reads again. */
	struct u64map *jit_owners, *late_maps;
	struct sym_perfmap **late_jit;
	size_t nlate_jit, late_jit_cap;
	struct foreign_log *refused;	/* files other users control, refused by their rules */
	struct foreign_log *unread;	/* binaries still late at the end (symbolizer__finish) */
	size_t nlate;			/* modules late now */
	uint64_t foreign_left;		/* of FOREIGN_BUDGET (sym_module_elf) */
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
	uint64_t sweep;			/* sweeps of unused ELFs so far (sym_module_sweep) */
	/* What the open closable ELFs hold (sym_elf__bytes), and the most they may: past it the
	 * least recently used are closed (sym_module_frames). */
	uint64_t elf_bytes, elf_budget;
	uint64_t paged_out_at;		/* CLOCK_MONOTONIC ns of the last sym_module_page_out */

	struct u64map *procs;	/* pid -> index in plist */
	struct process **plist;
	size_t nprocs, procs_cap;
	struct pcclaims *claims;	/* pc -> frame id */
	struct sym_unknowns *unknowns;	/* "[unknown] ..." frames, in generations */

	struct sym_kernel *kernel;	/* NULL when unreadable or addresses hidden */
	uint64_t kernel_read_at;	/* CLOCK_MONOTONIC ns of the last read; 0 = never */
	struct u64map *kcache;	/* kernel pc -> frame id, named addresses only */

	struct symbolizer_stats st;
};

/* ---- interning (sym_intern.c) ---- */

/* Grows *arr to hold need elements, zeroing the new ones: a table indexed by the ids of a
 * tracemap may lack the entry of an id whose insertion ran out of memory, and reads it as
 * zero (absent) rather than garbage. 0 or -ENOMEM. */
int sym_grow(void **arr, size_t *cap, size_t need, size_t elem);
/* The interned copy of str, stable for the symbolizer's life; NULL when out of memory. */
const char *sym_intern(struct symbolizer *s, const char *str);
/* The id (> 0) of the frame (func, file, line) with its strings interned; 0 on ENOMEM. */
uint32_t sym_frame_id(struct symbolizer *s, const char *func, const char *file, uint64_t line);
/* Fills out with the "[unknown] ..." frame named by fmt, at address a, counted as unknown:
 * kept in generations (sym_unknowns.h), not for good. 1 or -ENOMEM. */
int sym_emit_unknown(struct symbolizer *s, uint64_t a, struct sym_frame *out, const char *file,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Fills out[0..n) from frame ids looked up at address a (see PCs in symbolize.h). Returns n
 * or -ENOMEM. */
int sym_emit(struct symbolizer *s, uint64_t a, const uint32_t *ids, int n,
	     struct sym_frame *out);
/* The same for one frame id; id 0 (a failed sym_frame_id): -ENOMEM. */
int sym_emit_one(struct symbolizer *s, uint64_t a, uint32_t id, struct sym_frame *out);

/* ---- modules (sym_module.c) ---- */

/* The module id of (dev, ino), opening the file when new (and again when its last open
 * failed). 0 on ENOMEM. */
uint32_t sym_module_get(struct symbolizer *s, pid_t pid, const struct mapping *mp,
			const char *path, uint64_t dev, uint64_t ino);
/* The ELF of m, opened on first use (a late open asked again); NULL when it has none (yet). */
struct sym_elf *sym_module_elf(struct symbolizer *s, struct module *m);
/* Whether m's file is late (asked for again first) and has been for less than
 * SYM_LATE_HOLD_NS: worth waiting for. */
bool sym_module_awaited(struct symbolizer *s, struct module *m);
/* The frame ids of vaddr in m, from its cache or computed once. Returns their count (0 when
 * nothing names vaddr) and the pool offset in *first, or -ENOMEM. What computing them made
 * m's ELF read counts against s->elf_budget: past it, the ELFs of the modules least recently
 * asked for are closed (as a sweep closes them) until the open ones hold 3/4 of it, m's
 * excepted. */
int sym_module_frames(struct symbolizer *s, struct module *m, uint64_t vaddr, size_t *first);
/* The ELF virtual address of file offset off in m (through its PT_LOAD segments, read with its
 * ELF the first time); off itself when no segment maps it or the ELF cannot be read. */
uint64_t sym_module_vaddr(struct symbolizer *s, struct module *m, uint64_t off);
/* Counts in s->elf_bytes what m's ELF holds now (read ahead: symbolizer__prepare), closing
 * nothing. */
void sym_module_count(struct symbolizer *s, struct module *m);
/* Closes the ELF of every module none asked for since the last sweep: what reading a binary
 * took (libdw's DWARF, the sorted symbols, libelf's sections and mapped pages) goes with the
 * processes that mapped it. The module keeps its file, and its ELF is read again when asked
 * for; its cached frames stay. A binary other users control keeps its ELF: what it was charged
 * (FOREIGN_BUDGET) is not given back. */
void sym_module_sweep(struct symbolizer *s);

/* Gives back the pages of every open ELF's files that reading them touched (sym_elf__page_out):
 * what was parsed from them stays. */
void sym_module_page_out(struct symbolizer *s);

/* Names m in s->unread if its file is still late, asked for once more: "read stalled" while its
 * filesystem has not answered since, else "read slow". */
void sym_module_note_unread(struct symbolizer *s, struct module *m);
/* Accepts NULL. */
void sym_module_free(struct module *m);

/* ---- processes (sym_process.c) ---- */

/* proc's snapshot, noting proc now if it never was; NULL when it cannot be. */
struct process *sym_process_get(struct symbolizer *s, uint64_t proc);
/* The mapping of a in p, re-reading the maps of a process still alive (and still the same
 * process) when a is in none and the snapshot is old enough; NULL when none holds it. */
const struct mapping *sym_lookup_mapping(struct symbolizer *s, struct process *p, uint64_t a);
/* Forgets the snapshots of processes found gone by two sweeps in a row (called every
 * PAGE_OUT_NS): those whose exit record was lost (a busy ring) would otherwise stay until their
 * pid comes back, up to pid_max of them. A process is gone when its /proc directory is, or when
 * it was already gone when noted (its pid, alive now, is another process's); the sweep between
 * leaves the stacks it made before its exit, which come within seconds, their snapshot. */
void sym_process_sweep(struct symbolizer *s);
/* Accepts NULL. */
void sym_process_free(struct process *p);

#endif
