/* callstacks.c - raw kernel/user stacks to deduplicated, symbolized, trimmed trace stacks, and
 * the process images they are symbolized against (callstacks.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/go119/wire.h"
#include "format/varint.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/proc/kdev.h"
#include "user/proc/mmap_path.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/cfi_loader.h"
#include "user/stacks/late_walk.h"
#include "user/stacks/python.h"
#include "user/stacks/symbolize.h"

/* Frames gathered before trimming: every kernel frame, the syscall, user frames with their
 * inlined calls. Deeper expansions are cut at the root end like any deep stack. */
#define GATHER_MAX 512
/* What a frame costs in a Stack body at most, but for its PC and line: two string ids, which
 * stay below 2^28 (4 varint bytes) in any trace a person can open. */
#define FRAME_STRINGS_BYTES 8
/* Below vm.mmap_min_addr's default nothing is mapped. */
#define MIN_USER_ADDR 4096
/* A body's id and frame count. */
#define BODY_HEAD_BYTES 12
/* A stack's flags here are enum lx_ustack_flags and this: BPF walked it on by frame pointers
 * where the ring had no room for its copy (LX_USLOT_NO_ROOM): a cut there is marked so. */
#define USTACK_NO_ROOM (1u << 8)
/* The second word of a shed stack's key (shed_stack): two words, where every stack's own key
 * has three or more, so the two never meet. */
#define SHED_KEY (~0ull)
/* Key words the memory of distinct stacks holds at most (4 MiB). Its keys name process
 * images, which exit for good, so it is kept in two generations of half that each: lookups
 * try the young one, then the old one, whose hits move to the young one; when the young one
 * is full the old one is emptied and becomes the young one. A stack still in use stays; one
 * not seen for a generation is built again if it comes back, and gets the id it had if the
 * writer still knows its PCs (one-to-one with frames), or a new one with the same frames. */
#define CACHE_WORDS (1u << 19)
/* The memory of frames shared across process images (shared_key): key words and frames its
 * two generations hold each at most (1 MiB and 2 MiB). */
#define SHARED_WORDS (1u << 17)
#define SHARED_FRAMES (1u << 16)
/* What the stacks kept for naming JIT code at the end may hold together (a stack of 100
 * frames: 3.3 KB). Past it a stack keeps its unnamed frames, counted. */
#define LATE_JIT_BYTES (32u << 20)

/* The user frames a thread's walk stored in a cache slot (LX_USTACK_STORE), which later
 * records of the thread repeat by naming the slot (LX_USTACK_HIT). A thread blocking at one
 * place sends the same hit again and again: the answer to the last one without kernel frames
 * is kept with the rest of its key (ident, nr, proc). It stands while the generation of the
 * memory of stacks that holds it is still the young one (memo_gen), where the full lookup
 * would find it, so a repeat builds, hashes and looks up no key. */
struct stored {
	struct stored *prev, *next;	/* all of them, to free at the end */
	uint64_t hit_proc, hit_stk;
	uint32_t hit_ident;
	int hit_nr;
	uint64_t hit_gen;		/* cs->memo_gen of the answer, 0: none */
	uint8_t n;
	uint8_t uflags;
	uint64_t pc[];
};

/* A stack written with JIT frames that its process's perf map did not name yet: its frames as
 * written, and where the unnamed ones are, to name them from the map as it stands at the end
 * (a map the process writes as it exits, or when asked) and define the stack again. */
struct late_stack {
	uint64_t stk;
	uint32_t p;		/* the P it was defined for */
	pid_t pid;
	uint32_t prev;		/* 1 + the index of the pid's kept stack before it; 0: none */
	uint32_t bytes;		/* the allocation's size */
	uint32_t n, njit;
	struct late_jit {
		uint32_t idx;	/* in frames */
		uint64_t addr;	/* the address looked up */
		uint64_t pc;	/* its frame's PC as written */
	} *jit;			/* after frames, in the same allocation */
	struct gt_frame frames[];	/* their names copied after jit, in the same allocation */
};

/* A distinct raw stack: its key words live in the pool at off. */
struct entry {
	size_t off;
	uint32_t len;
	uint64_t stk;
};

/* One generation of a memory: of distinct stacks (an entry's stk their id), or of the frames
 * shared across images (stk says where its frames are: shared_find). */
struct memo {
	struct u64map *by_hash;	/* hash of the key words -> entry index */
	struct entry *entries;
	size_t n, entries_cap;
	uint64_t *pool;		/* key words of its entries */
	size_t len, pool_cap;
	struct gt_frame *frames;	/* the shared frames of its entries */
	size_t nframes, frames_cap;
};

struct callstacks {
	const struct gt_tables *w;	/* where stacks get their ids */
	struct idents *ids;
	struct symbolizer *sym;
	struct memo memo[2];		/* memo[young] and the older generation */
	int young;
	uint64_t memo_gen;		/* counts young generations, from 1 */
	/* The kernel and user frames of stacks by the code they name, wherever each image
	 * loaded it (shared_key): a stack of known code in a new process is not symbolized. */
	struct memo shared[2];
	int shared_young;
	struct u64map *cur;		/* pid -> its current image's proc, when not the pid itself */
	struct cfi_loader *cfi;		/* the rows of late walks (late_walk.h), or NULL */
	uint64_t held_since;		/* CLOCK_MONOTONIC ns: a late walk waits since, 0: none */
	bool no_wait;			/* the recording ends: no late walk waits for rows */
	bool shed_waits, shed_symbols;	/* the recorder is behind: callstacks__shed */
	uint64_t read_late;		/* symbolizer_stats.modules_read_late the memo was made with */
	uint64_t late[LX_STACK_USER_MAX];	/* a late walk's frames */
	struct u64map *slots;		/* tid << 8 | cache slot -> its struct stored */
	struct stored *stored;		/* every one of them */
	uint32_t next_gen;
	uint64_t key[5 + LX_STACK_KERN_MAX + LX_STACK_USER_MAX + 2 * LX_PY_FRAMES_MAX];
	uint64_t xkey[1 + LX_STACK_KERN_MAX + LX_STACK_USER_MAX];	/* a shared key */
	uint64_t where[LX_STACK_USER_MAX];	/* its user addresses, then their where words */
	struct gt_frame frames[GATHER_MAX + 1 + IDENT_FRAMES];
	struct gt_frame spliced[GATHER_MAX];	/* frames as Python's are put in */
	struct python *py;		/* names Python frames, or NULL */
	struct sym_frame sf[GATHER_MAX];
	struct late_jit jit[GATHER_MAX];	/* the unnamed JIT frames of the last gather */
	uint32_t njit;
	struct late_stack **jit_stacks;		/* kept to name their JIT frames at the end; NULL:
						 * dropped (drop_late), its index in jit_free */
	size_t njit_stacks, jit_stacks_cap;
	uint32_t *jit_free;
	size_t njit_free, jit_free_cap;
	uint64_t jit_bytes;
	struct u64map *jit_ids;		/* the stack ids kept in jit_stacks */
	struct u64map *jit_pids;	/* pid -> 1 + the index of its last kept stack */
	/* Where the encoder cannot define a stack again (go1.23): the PCs a named stack was
	 * written with (their hash) -> index + 1 in jit_stacks, for a copy of the file. */
	struct u64map *jit_written;
	struct gt_frame **window;	/* [njit_window]: the kept stacks named for a flight
					 * recorder's window (callstacks__name_window); NULL:
					 * none, or not named then */
	size_t njit_window;
	char sys_func[64], trim_func[48];
	struct callstacks_stats st;
};

struct callstacks *callstacks__new(const struct gt_tables *w, struct idents *ids,
				   const char *proc_root, uid_t trusted_uid)
{
	struct callstacks *cs = calloc(1, sizeof(*cs));
	char kallsyms[4096 + 16];

	if (!cs)
		return NULL;
	cs->w = w;
	cs->ids = ids;
	cs->next_gen = 1;
	cs->memo_gen = 1;
	if (proc_root)
		snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", proc_root);
	cs->sym = symbolizer__new(&(struct symbolizer_opts){
		.sz = sizeof(struct symbolizer_opts),
		.proc_root = proc_root,
		.kallsyms = proc_root ? kallsyms : NULL,
		.trusted_uid = trusted_uid,
	});
	for (int i = 0; i < 2; i++) {
		cs->memo[i].by_hash = u64map__new();
		cs->shared[i].by_hash = u64map__new();
	}
	cs->cur = u64map__new();
	cs->slots = u64map__new();
	cs->jit_ids = u64map__new();
	cs->jit_pids = u64map__new();
	cs->jit_written = u64map__new();
	if (!cs->sym || !cs->memo[0].by_hash || !cs->memo[1].by_hash || !cs->shared[0].by_hash ||
	    !cs->shared[1].by_hash || !cs->cur || !cs->slots ||
	    !cs->jit_ids || !cs->jit_pids || !cs->jit_written) {
		callstacks__free(cs);
		errno = ENOMEM;
		return NULL;
	}
	return cs;
}

static uint64_t proc_of(const struct callstacks *cs, uint32_t pid)
{
	const uint64_t *slot = u64map__get(cs->cur, pid);

	return slot ? *slot : pid;
}

void callstacks__note(struct callstacks *cs, uint32_t pid)
{
	if (symbolizer__note_process(cs->sym, pid) == 0)
		cs->st.images++;
	python__note(cs->py, (pid_t)pid);
}

/* The mapping an LX_REC_MMAP record reports, its path rebuilt in path. */
static void mapping_of(const struct lx_mmap *r, char *path, size_t size, struct sym_mapping *m)
{
	if (r->ino == LX_VDSO_INO)
		snprintf(path, size, "[vdso]");
	else
		mmap_path__get(r, path, size);
	*m = (struct sym_mapping){
		.start = r->start, .end = r->end, .pgoff = r->pgoff,
		.dev = r->ino == LX_VDSO_INO ? 0 : kdev__to_dev(r->dev),
		.ino = r->ino, .path = path, .pid = (pid_t)r->pid,
	};
}

void callstacks__peek(struct callstacks *cs, const struct lx_rec *r, size_t size)
{
	struct sym_mapping m;
	char path[PATH_MAX];

	/* The file is opened now, while the process that mapped it may still run. */
	if (r->type == LX_REC_MMAP && size >= sizeof(struct lx_mmap)) {
		mapping_of((const struct lx_mmap *)r, path, sizeof(path), &m);
		symbolizer__file(cs->sym, &m);
		python__mapped(cs->py, (const struct lx_mmap *)r);
	}
	/* A new thread of a process (child_pid its tgid, not its own tid). */
	if (r->type == LX_REC_FORK && size >= sizeof(struct lx_fork) &&
	    ((const struct lx_fork *)r)->child_pid != r->tid)
		python__thread_created(cs->py, (pid_t)((const struct lx_fork *)r)->child_pid, r->ts);
	if (r->type == LX_REC_PYSTACK && size >= sizeof(struct lx_pyrec) &&
	    size == sizeof(struct lx_pyrec) +
		    ((const struct lx_pyrec *)r)->ps.n * sizeof(struct lx_pyframe))
		python__peek(cs->py, (const struct lx_pyrec *)r);
}

void callstacks__use_python(struct callstacks *cs, struct python *py)
{
	cs->py = py;
}

void callstacks__peek_python(struct callstacks *cs, uint32_t pid, const struct lx_pystack *ps)
{
	python__peek_frames(cs->py, (pid_t)pid, ps);
}

/* Makes proc the image of pid from now on: every stack of the old image is older. */
static void switch_image(struct callstacks *cs, uint32_t pid, uint64_t proc)
{
	uint64_t old = proc_of(cs, pid), *slot;
	bool added;

	if (old != proc)
		symbolizer__forget_process(cs->sym, old);
	slot = u64map__put(cs->cur, pid, &added);
	if (slot)
		*slot = proc;
	cs->st.images++;
}

void callstacks__mmap(struct callstacks *cs, const struct lx_mmap *r)
{
	struct sym_mapping m;
	char path[PATH_MAX];
	uint64_t proc;

	if (r->flags & LX_MMAP_NEW_IMAGE) {
		proc = SYM_PROC(r->pid, cs->next_gen++);
		if (symbolizer__image_new(cs->sym, proc, r->flags & LX_MMAP_SNAPSHOT))
			return;
		switch_image(cs, r->pid, proc);
	}
	mapping_of(r, path, sizeof(path), &m);
	proc = proc_of(cs, r->pid);
	/* A process known only from this record (started before the scan saw it). */
	if (symbolizer__map(cs->sym, proc, &m) == -ENOENT &&
	    !symbolizer__image_new(cs->sym, proc, r->flags & LX_MMAP_SNAPSHOT))
		symbolizer__map(cs->sym, proc, &m);
}

void callstacks__fork(struct callstacks *cs, uint32_t parent, uint32_t child)
{
	uint64_t proc = SYM_PROC(child, cs->next_gen++);

	/* The child has its parent's mappings; a parent never seen is read from /proc. */
	if (symbolizer__image_copy(cs->sym, proc, proc_of(cs, parent)) &&
	    symbolizer__note_process(cs->sym, proc))
		return;
	switch_image(cs, child, proc);
}

/* Whether func is where Go's own traceback ends a stack (its top frames): a new M's g0 stack
 * begins at mstart, mcall and morestack leave no caller on the g0 stack they switch to, and
 * goexit and rt0_go are the outermost frames of a goroutine and of the first M. A walk that
 * cannot go on past one has lost no frame. */
static bool go_top_frame(const char *func)
{
	static const char *const tops[] = { "runtime.mstart", "runtime.mcall", "runtime.morestack",
					    "runtime.goexit", "runtime.rt0_go" };

	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		size_t len = strlen(tops[i]);

		if (!strncmp(func, tops[i], len) && (!func[len] || !strcmp(func + len, ".abi0")))
			return true;
	}
	return false;
}

/* The native frame each run of CPython's evaluation loop shows as: its Python frames go there. */
#define EVAL_FUNC "_PyEval_EvalFrameDefault"

/* Puts the Python frames of ps (process pid) into cs->frames[from, *n), each run of the
 * evaluation loop's frames (as the walk marked them, LX_PYF_ENTRY) just leafward of the
 * loop's native frame, which stays: the native stack is kept whole, as a debugger shows it. A
 * native walk cut short (truncated) gets those its loops did not take at its root end, where
 * the frames it could not take were. Where the walk kept fewer than the thread had (deeper than
 * LX_PY_FRAMES_MAX), a "[truncated: Python frames]" follows the last one kept, counted. A
 * frame that cannot be named leaves the stack native, counted. */
static int splice_python(struct callstacks *cs, pid_t pid, const struct lx_pystack *ps,
			 size_t from, size_t *n, bool truncated)
{
	const struct lx_pyframe *pf = (const struct lx_pyframe *)(ps + 1);
	struct sym_frame named[LX_PY_FRAMES_MAX];
	size_t out = 0, next = 0, eval = 0;
	bool cut = ps->flags & LX_PYSTACK_DEEP;
	struct python_name nm;
	struct gt_frame mark;
	int err;

	for (size_t i = from; i < *n; i++)
		eval += cs->frames[i].func && !strcmp(cs->frames[i].func, EVAL_FUNC);
	if (!eval && !truncated) {
		cs->st.py_no_eval++;
		return 0;
	}
	for (unsigned i = 0; i < ps->n; i++) {
		if (!python__name(cs->py, pid, &pf[i], &nm)) {
			cs->st.py_unnamed++;
			return 0;
		}
		err = symbolizer__named(cs->sym, nm.func, nm.file, (uint64_t)(nm.line > 0 ? nm.line : 0),
					&named[i]);
		if (err < 0)
			return err;
	}
	if (cut && (err = idents__special_frame(cs->ids, IDENT_SPECIAL_PY_DEEP, &mark)))
		return err;
	for (size_t i = from; i < *n; i++) {
		bool is_eval = cs->frames[i].func && !strcmp(cs->frames[i].func, EVAL_FUNC);

		while (is_eval && next < ps->n) {
			if (out < GATHER_MAX)
				cs->spliced[out++] = (struct gt_frame){ named[next].pc, named[next].func,
									named[next].file, named[next].line };
			if (pf[next++].flags & LX_PYF_ENTRY)
				break;
		}
		if (is_eval && cut && next == ps->n && out < GATHER_MAX) {
			cs->spliced[out++] = mark;
			cut = false;
		}
		for (uint32_t j = 0; j < cs->njit; j++)
			if (cs->jit[j].idx == i)
				cs->jit[j].idx = (uint32_t)(from + out);
		if (out < GATHER_MAX)
			cs->spliced[out++] = cs->frames[i];
	}
	/* What no loop of a walk cut short took goes at its root end. */
	for (; truncated && next < ps->n && out < GATHER_MAX; next++)
		cs->spliced[out++] = (struct gt_frame){ named[next].pc, named[next].func,
							named[next].file, named[next].line };
	if (cut && next == ps->n && out < GATHER_MAX)
		cs->spliced[out++] = mark;
	if (from + out > GATHER_MAX)
		out = GATHER_MAX - from;
	memcpy(&cs->frames[from], cs->spliced, out * sizeof(cs->spliced[0]));
	*n = from + out;
	cs->st.py_stacks++;
	cs->st.py_frames += next;
	return 0;
}

static size_t shared_key(struct callstacks *cs, uint64_t proc, int nr, const struct lx_stack *st,
			 const uint64_t *upc, unsigned nuser);
static const struct gt_frame *shared_find(struct callstacks *cs, size_t nkey, uint64_t h,
					  size_t *nk, size_t *nu, bool *top, bool *old);
static void shared_put(struct callstacks *cs, size_t nkey, uint64_t h, size_t nk, size_t ufrom,
		       size_t nu, bool top);
static uint64_t key_hash(const uint64_t *key, size_t n);

/* Frames leaf first into cs->frames: kernel, syscall, user (nuser addresses at upc), and a
 * mark where the user walk was cut; returns how many or -errno. The kernel and user frames
 * of code another image ran in the same stack come from the shared memory (shared_key). */
static int gather(struct callstacks *cs, uint64_t proc, int nr, const struct lx_stack *st,
		  const uint64_t *upc, unsigned nuser, unsigned uflags, pid_t pid,
		  const struct lx_pystack *ps)
{
	size_t n = 0, ufrom, nk = 0, nu = 0, nkey = shared_key(cs, proc, nr, st, upc, nuser);
	uint64_t h = nkey ? key_hash(cs->xkey, nkey) : 0;
	bool top = false, old = false;
	const struct gt_frame *known = nkey ? shared_find(cs, nkey, h, &nk, &nu, &top, &old) : NULL;
	int err;

	cs->njit = 0;
	/* Shedding (callstacks__shed): what is known is taken, nothing is symbolized. */
	if (!known && cs->shed_symbols)
		return -ENODATA;
	if (known) {
		memcpy(cs->frames, known, nk * sizeof(*known));
		n = nk;
	}
	for (unsigned i = 0; !known && i < st->nkern && n < GATHER_MAX; i++) {
		struct sym_frame f;

		if (!st->pc[i])
			continue;
		err = symbolizer__kernel(cs->sym, st->pc[i], i > 0, &f, 1);
		if (err < 0)
			return err;
		cs->frames[n++] = (struct gt_frame){ f.pc, f.func, f.file, f.line };
	}
	nk = n;
	if (nr >= 0) {
		err = idents__syscall_frame(cs->ids, nr, cs->sys_func, sizeof(cs->sys_func),
						  &cs->frames[n++]);
		if (err)
			return err;
	}
	ufrom = n;
	if (known) {
		nu = nu < GATHER_MAX - n ? nu : GATHER_MAX - n;
		memcpy(&cs->frames[n], known + nk, nu * sizeof(*known));
		n += nu;
		cs->st.shared++;
		if (top)
			uflags &= ~LX_USTACK_TRUNCATED;
	}
	for (unsigned i = 0; !known && i < nuser && n < GATHER_MAX; i++) {
		uint64_t a = upc[i] & ~LX_PC_EXACT;
		int k;

		/* Nothing runs below mmap_min_addr, and the symbolizer has no PC for address 0. */
		if (a < MIN_USER_ADDR)
			continue;
		k = symbolizer__user(cs->sym, proc, a, !(upc[i] & LX_PC_EXACT), cs->sf,
				     (int)(GATHER_MAX - n));
		if (k < 0)
			return k;
		if (k == 1 && cs->sf[0].late_jit)
			cs->jit[cs->njit++] = (struct late_jit){
				.idx = (uint32_t)n, .addr = upc[i] & LX_PC_EXACT ? a : a - 1,
				.pc = cs->sf[0].pc,
			};
		for (int j = 0; j < k; j++)
			cs->frames[n++] = (struct gt_frame){ cs->sf[j].pc, cs->sf[j].func, cs->sf[j].file,
							     cs->sf[j].line };
		/* A new M starts with its creator's frame pointer (clone keeps the registers):
		 * past mstart a walk reads the creator's frames, no callers of this thread's. */
		if (k > 0 && go_top_frame(cs->frames[n - 1].func)) {
			uflags &= ~LX_USTACK_TRUNCATED;
			top = true;
			break;
		}
	}
	if (nkey && (!known || old))
		shared_put(cs, nkey, h, nk, ufrom, n - ufrom, top);
	if (ps && ps->n && cs->py &&
	    (err = splice_python(cs, pid, ps, ufrom, &n, uflags & LX_USTACK_TRUNCATED)) < 0)
		return err;
	if ((uflags & LX_USTACK_TRUNCATED) && n < GATHER_MAX) {
		err = idents__special_frame(cs->ids, uflags & USTACK_NO_ROOM ? IDENT_SPECIAL_NO_ROOM :
						     IDENT_SPECIAL_TRUNCATED, &cs->frames[n]);
		if (err)
			return err;
		n++;
	}
	return (int)n;
}

static size_t frame_bytes(const struct gt_frame *f)
{
	return gt_varint_len(f->pc) + FRAME_STRINGS_BYTES + gt_varint_len(f->line);
}

/* How many leaf frames of n to keep: all when they fit with the nid identity frames, else as
 * many as fit with a trim mark (sized like an identity frame: both have synthetic PCs) and
 * the identity frames. */
static size_t fit(const struct gt_frame *frames, size_t n, const struct gt_frame *ids, size_t nid)
{
	size_t base = BODY_HEAD_BYTES, bytes, keep = 0;

	for (size_t i = 0; i < nid; i++)
		base += frame_bytes(&ids[i]);
	bytes = base;
	for (size_t i = 0; i < n; i++)
		bytes += frame_bytes(&frames[i]);
	if (n + nid <= CALLSTACKS_MAX_FRAMES && bytes <= GT_MAX_LONG_BODY)
		return n;
	bytes = base + frame_bytes(&ids[0]) + 2;
	while (keep + 1 + nid < CALLSTACKS_MAX_FRAMES &&
	       bytes + frame_bytes(&frames[keep]) <= GT_MAX_LONG_BODY)
		bytes += frame_bytes(&frames[keep++]);
	return keep;
}

static const char *name_of(const char *s)
{
	return s ? s : "";
}

/* Keeps stack stk, cs->frames[0, len) for P p, whose gather left JIT frames of process pid
 * unnamed (cs->jit), those among its first keep frames, to be named at the end. */
static void keep_late(struct callstacks *cs, uint64_t stk, uint32_t p, pid_t pid, size_t len,
		      size_t keep)
{
	struct late_stack *ls;
	uint32_t njit = 0;
	uint64_t *slot, *last;
	size_t bytes, names = 0, idx = cs->njit_free ? cs->jit_free[cs->njit_free - 1] :
						       cs->njit_stacks;
	bool added;
	char *at;

	for (uint32_t i = 0; i < cs->njit; i++)
		njit += cs->jit[i].idx < keep;
	if (!njit || u64map__get(cs->jit_ids, stk))
		return;
	/* The frames' names are copied: they point into tables (the process's identity, a
	 * binary's symbols) that may free and reuse them before the end, when a process exits. */
	for (size_t i = 0; i < len; i++)
		names += strlen(name_of(cs->frames[i].func)) + strlen(name_of(cs->frames[i].file)) + 2;
	bytes = sizeof(*ls) + len * sizeof(ls->frames[0]) + njit * sizeof(ls->jit[0]) + names;
	if (cs->jit_bytes + bytes > LATE_JIT_BYTES || idx >= UINT32_MAX ||
	    grow_array((void **)&cs->jit_stacks, &cs->jit_stacks_cap, idx + 1,
		       sizeof(*cs->jit_stacks), 64) ||
	    !(ls = malloc(bytes))) {
		cs->st.late_jit_unkept++;
		return;
	}
	slot = u64map__put(cs->jit_ids, stk, &added);
	last = slot ? u64map__put(cs->jit_pids, (uint32_t)pid, &added) : NULL;
	if (!last) {
		if (slot)
			u64map__del(cs->jit_ids, stk);
		free(ls);
		cs->st.late_jit_unkept++;
		return;
	}
	*ls = (struct late_stack){ .stk = stk, .p = p, .pid = pid, .prev = added ? 0 : (uint32_t)*last,
				   .bytes = (uint32_t)bytes, .n = (uint32_t)len };
	*last = idx + 1;
	memcpy(ls->frames, cs->frames, len * sizeof(ls->frames[0]));
	ls->jit = (struct late_jit *)(void *)&ls->frames[len];
	for (uint32_t i = 0; i < cs->njit; i++)
		if (cs->jit[i].idx < keep)
			ls->jit[ls->njit++] = cs->jit[i];
	at = (char *)&ls->jit[njit];
	for (size_t i = 0; i < len; i++) {
		ls->frames[i].func = strcpy(at, name_of(cs->frames[i].func));
		at += strlen(at) + 1;
		ls->frames[i].file = strcpy(at, name_of(cs->frames[i].file));
		at += strlen(at) + 1;
	}
	cs->jit_stacks[idx] = ls;
	if (idx == cs->njit_stacks)
		cs->njit_stacks++;
	else
		cs->njit_free--;
	cs->jit_bytes += bytes;
	cs->st.late_jit_kept++;
}

/* Drops the stacks kept for naming pid's JIT frames, when pid has exited with no perf map: no
 * map can name them at the end any more (one of a later process under the same pid would
 * name them wrong). Their memory, and their place in jit_stacks, serve other stacks. */
static void drop_late(struct callstacks *cs, uint32_t pid)
{
	uint64_t *last = u64map__get(cs->jit_pids, pid);
	uint32_t at;

	if (!last || !symbolizer__perf_map_absent(cs->sym, (pid_t)pid))
		return;
	for (at = (uint32_t)*last; at; ) {
		struct late_stack *ls = cs->jit_stacks[at - 1];

		if (grow_array((void **)&cs->jit_free, &cs->jit_free_cap, cs->njit_free + 1,
			       sizeof(*cs->jit_free), 64))
			break;
		cs->jit_free[cs->njit_free++] = at - 1;
		cs->jit_stacks[at - 1] = NULL;
		u64map__del(cs->jit_ids, ls->stk);
		cs->jit_bytes -= ls->bytes;
		cs->st.late_jit_dropped++;
		at = ls->prev;
		free(ls);
	}
	/* What memory left unwalked stays kept, named at the end as before. */
	if (at)
		*last = at;
	else
		u64map__del(cs->jit_pids, pid);
}

/* Symbolizes, trims and writes the stack; 0 with errno set on failure. */
/* The outermost frames of a stack: the thread's identity, or what stands for one (an
 * interrupt, the idle task). Their number, or -errno. */
static int identity(struct callstacks *cs, uint32_t ident, unsigned uflags,
		    struct gt_frame ids[IDENT_FRAMES])
{
	int err;

	if (uflags & LX_USTACK_IRQ)
		err = idents__special_frame(cs->ids, IDENT_SPECIAL_IRQ, &ids[0]);
	else if (ident == CALLSTACKS_IDLE)
		err = idents__special_frame(cs->ids, IDENT_SPECIAL_IDLE, &ids[0]);
	else
		return (int)idents__frames(cs->ids, ident, ids);
	return err ? err : 1;
}

static uint64_t build(struct callstacks *cs, uint32_t p, uint32_t ident, uint64_t proc, int nr,
		      const struct lx_stack *st, const uint64_t *upc, unsigned nuser, unsigned uflags,
		      pid_t pid, const struct lx_pystack *ps)
{
	struct gt_frame ids[IDENT_FRAMES];
	int nid = identity(cs, ident, uflags, ids);
	size_t keep, len;
	uint64_t stk;
	int n;

	n = nid < 0 ? nid : gather(cs, proc, nr, st, upc, nuser, uflags, pid, ps);
	if (n < 0) {
		errno = -n;
		return 0;
	}
	keep = fit(cs->frames, (size_t)n, ids, (size_t)nid);
	for (;;) {
		len = keep;

		if (keep < (size_t)n) {
			idents__trim_frame((uint64_t)n - keep, cs->trim_func, sizeof(cs->trim_func),
						 &cs->frames[len++]);
		}
		for (int i = 0; i < nid; i++)
			cs->frames[len++] = ids[i];
		stk = gt_tables__stack(cs->w, p, cs->frames, len);
		/* The estimate of string ids' sizes was short: keep half as many frames. */
		if (stk || errno != E2BIG || !keep)
			break;
		keep /= 2;
	}
	if (stk && keep < (size_t)n)
		cs->st.trimmed++;
	if (stk && cs->njit)
		keep_late(cs, stk, p, SYM_PROC_PID(proc), len, keep);
	return stk;
}

/* The memory's hash of a key (its table's, not part of traces as lib/hash.h's are): a rotate,
 * xor and multiply per word in two independent chains, mixed once at the end. A hash_mix per
 * word, one serial chain, was ~60% of callstacks__get with kernel stacks (40-60 words a key). */
static uint64_t key_hash(const uint64_t *key, size_t n)
{
	uint64_t a = 0x51ed270b27a4e13full, b = n;
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		a = ((a << 5 | a >> 59) ^ key[i]) * 0x9e3779b97f4a7c15ull;
		b = ((b << 5 | b >> 59) ^ key[i + 1]) * 0x9e3779b97f4a7c15ull;
	}
	if (i < n)
		a = ((a << 5 | a >> 59) ^ key[i]) * 0x9e3779b97f4a7c15ull;
	return hash_mix(a ^ hash_mix(b));
}

/* The entry of key in m, probing from hash h past collisions with other keys; NULL when absent. */
static struct entry *memo_find(const struct memo *m, const uint64_t *key, size_t nkey, uint64_t h)
{
	for (;; h = hash_mix(h + 1)) {
		const uint64_t *slot = u64map__get(m->by_hash, h);
		struct entry *e;

		if (!slot)
			return NULL;
		e = &m->entries[*slot];
		if (e->len == nkey && !memcmp(&m->pool[e->off], key, nkey * sizeof(*key)))
			return e;
	}
}

static void memo_clear(struct memo *m)
{
	u64map__clear(m->by_hash);
	m->n = m->len = m->nframes = 0;
}

/* The entry of key (its stk 0) in the young generation mem[*young] with room for nframes
 * frames after m->nframes, starting a new generation (*rotated) when the young one would hold
 * more than words key words or frames frames; NULL when out of memory: then the key is simply
 * not remembered, and made again next time. */
static struct entry *memo_add(struct memo mem[2], int *young, size_t words, size_t frames,
			      const uint64_t *key, size_t nkey, uint64_t h, size_t nframes,
			      bool *rotated)
{
	struct memo *m = &mem[*young];
	uint64_t *slot;
	bool added;

	*rotated = m->len + nkey > words || m->nframes + nframes > frames;
	if (*rotated) {
		*young ^= 1;
		m = &mem[*young];
		memo_clear(m);
	}
	if (grow_array((void **)&m->entries, &m->entries_cap, m->n + 1, sizeof(*m->entries), 256) ||
	    grow_array((void **)&m->pool, &m->pool_cap, m->len + nkey, sizeof(*m->pool), 4096) ||
	    (nframes && grow_array((void **)&m->frames, &m->frames_cap, m->nframes + nframes,
				   sizeof(*m->frames), 4096)))
		return NULL;
	while (u64map__get(m->by_hash, h))
		h = hash_mix(h + 1);
	slot = u64map__put(m->by_hash, h, &added);
	if (!slot)
		return NULL;
	memcpy(&m->pool[m->len], key, nkey * sizeof(*key));
	m->entries[m->n] = (struct entry){ .off = m->len, .len = (uint32_t)nkey };
	m->len += nkey;
	*slot = m->n;
	return &m->entries[m->n++];
}

/* Remembers key -> stk in the memory of distinct stacks; false when out of memory: then it is
 * simply not remembered, built again next time, same id. */
static bool memo_put(struct callstacks *cs, const uint64_t *key, size_t nkey, uint64_t h,
		     uint64_t stk)
{
	bool rotated;
	struct entry *e = memo_add(cs->memo, &cs->young, CACHE_WORDS / 2, 0, key, nkey, h, 0,
				   &rotated);

	if (rotated) {
		cs->st.cache_clears++;
		cs->memo_gen++;
	}
	if (e)
		e->stk = stk;
	return e != NULL;
}

/* The key of st's kernel and user frames by the code they name (symbolizer__where), the same
 * in every image that ran that code wherever it loaded it, into cs->xkey: its length, or 0
 * when a user address is in no binary whose names are settled (JIT code, a file not read
 * yet), whose frames are then its image's own. Whether the syscall frame comes between them
 * is in it: it takes from the frames' budget (GATHER_MAX). */
static size_t shared_key(struct callstacks *cs, uint64_t proc, int nr, const struct lx_stack *st,
			 const uint64_t *upc, unsigned nuser)
{
	size_t nkey = 0, na = 0;

	cs->xkey[nkey++] = (uint64_t)st->nkern << 32 | (uint64_t)nuser << 16 | (nr >= 0);
	memcpy(&cs->xkey[nkey], st->pc, st->nkern * sizeof(uint64_t));
	nkey += st->nkern;
	for (unsigned i = 0; i < nuser; i++) {
		uint64_t a = upc[i] & ~LX_PC_EXACT;

		if (a >= MIN_USER_ADDR)
			cs->where[na++] = upc[i] & LX_PC_EXACT ? a : a - 1;
	}
	if (na && !symbolizer__where(cs->sym, proc, cs->where, na, cs->where))
		return 0;
	na = 0;
	/* An address below MIN_USER_ADDR is no frame (gather): 1, which no where word is. */
	for (unsigned i = 0; i < nuser; i++)
		cs->xkey[nkey++] = (upc[i] & ~LX_PC_EXACT) >= MIN_USER_ADDR ? cs->where[na++] : 1;
	return nkey;
}

/* The frames of shared key cs->xkey (nkey words, hash h): nk kernel then nu user ones, top
 * when the user walk ended at a Go top frame, old when found in the older generation (to be
 * put in the young one); NULL when not known. */
static const struct gt_frame *shared_find(struct callstacks *cs, size_t nkey, uint64_t h,
					  size_t *nk, size_t *nu, bool *top, bool *old)
{
	for (int i = 0; i < 2; i++) {
		const struct memo *m = &cs->shared[cs->shared_young ^ i];
		const struct entry *e = memo_find(m, cs->xkey, nkey, h);

		if (!e)
			continue;
		*nk = e->stk >> 12 & 0x7ff;
		*nu = e->stk & 0x7ff;
		*top = e->stk >> 23 & 1;
		*old = i;
		return &m->frames[e->stk >> 24];
	}
	return NULL;
}

/* Keeps the frames cs->frames[0, nk) and [ufrom, ufrom + nu) under shared key cs->xkey, unless
 * one of them may yet read otherwise or goes with its process: JIT code a perf map did not
 * name yet, or an "[unknown]" frame (kept only for a while: sym_unknowns.h). */
static void shared_put(struct callstacks *cs, size_t nkey, uint64_t h, size_t nk, size_t ufrom,
		       size_t nu, bool top)
{
	struct entry *e;
	struct memo *m;
	bool rotated;

	/* JIT frames name one process's code; an empty stack has nothing to share. */
	if (cs->njit || !(nk + nu))
		return;
	for (size_t i = 0; i < ufrom + nu; i++)
		if ((i < nk || i >= ufrom) && cs->frames[i].func &&
		    !strncmp(cs->frames[i].func, "[unknown]", 9))
			return;
	e = memo_add(cs->shared, &cs->shared_young, SHARED_WORDS, SHARED_FRAMES, cs->xkey, nkey, h,
		     nk + nu, &rotated);
	if (!e)
		return;
	m = &cs->shared[cs->shared_young];
	memcpy(&m->frames[m->nframes], cs->frames, nk * sizeof(cs->frames[0]));
	memcpy(&m->frames[m->nframes + nk], &cs->frames[ufrom], nu * sizeof(cs->frames[0]));
	e->stk = (uint64_t)m->nframes << 24 | (uint64_t)top << 23 | (uint64_t)nk << 12 | nu;
	m->nframes += nk + nu;
}

static void stored_free(struct callstacks *cs, struct stored *v)
{
	if (v->prev)
		v->prev->next = v->next;
	else
		cs->stored = v->next;
	if (v->next)
		v->next->prev = v->prev;
	free(v);
}

void callstacks__see(struct callstacks *cs, const struct lx_stack *st)
{
	struct stored *v;
	uint64_t *slot;
	bool added;

	if (!(st->uflags & LX_USTACK_STORE))
		return;
	v = malloc(sizeof(*v) + (size_t)st->nuser * sizeof(v->pc[0]));
	slot = v ? u64map__put(cs->slots, (uint64_t)st->tid << 8 | st->uslot, &added) : NULL;
	if (!slot) {
		free(v);	/* the hits of this walk will read as lost */
		return;
	}
	if (!added)
		stored_free(cs, (struct stored *)(uintptr_t)*slot);
	v->prev = NULL;
	v->next = cs->stored;
	if (v->next)
		v->next->prev = v;
	cs->stored = v;
	v->hit_gen = 0;
	v->n = st->nuser;
	v->uflags = st->uflags & ~(LX_USTACK_STORE | LX_USTACK_HIT);
	memcpy(v->pc, &st->pc[st->nkern], (size_t)st->nuser * sizeof(v->pc[0]));
	*slot = (uintptr_t)v;
}

void callstacks__forget_thread(struct callstacks *cs, uint32_t tid)
{
	for (uint32_t i = 0; i < LX_UC_SLOTS; i++) {
		uint64_t key = (uint64_t)tid << 8 | i, *slot = u64map__get(cs->slots, key);

		if (slot) {
			stored_free(cs, (struct stored *)(uintptr_t)*slot);
			u64map__del(cs->slots, key);
		}
	}
}

/* What the stream waits for the rows a late walk needs (callstacks__ready): a large library
 * compiles in a few hundred milliseconds. Past it the walk ends at that file, marked. */
#define LATE_WAIT_NS (1000 * 1000 * 1000ull)

/* The copy of the stack after a late walk's BPF frames (LX_USTACK_COPY). */
static const struct lx_ucopy *ucopy_of(const struct lx_stack *st)
{
	return (const struct lx_ucopy *)&st->pc[st->nkern + st->nuser];
}

/* The user frames of st, a walk BPF stopped for lack of rows, finished here into cs->late
 * (late_walk.h); their number, with *uflags as for a walk made whole in BPF. */
static unsigned finish_late(struct callstacks *cs, uint64_t proc, const struct lx_stack *st,
			    unsigned *uflags)
{
	const struct late_walk lw = { cs->sym, cs->cfi, proc };
	enum late_walk_end end;
	unsigned n = st->nuser;

	memcpy(cs->late, &st->pc[st->nkern], n * sizeof(cs->late[0]));
	late_walk__finish(&lw, ucopy_of(st), cs->late, &n, false, &end);
	cs->st.late_walks++;
	cs->st.late_frames += n - st->nuser;
	cs->st.late_ends[end]++;
	*uflags &= ~LX_USTACK_COPY;
	if (end != LATE_WALK_WHOLE)
		*uflags |= end == LATE_WALK_DEEP ? LX_USTACK_DEEP : LX_USTACK_TRUNCATED;
	return n;
}

/* How many of the nuser addresses of a kernel's walk (LX_USTACK_KWALK) of process proc to
 * keep: those before the first one past the leaf that lies in no mapping, where the walk, gone
 * on through code without frame pointers, read words that are no return addresses; that cut
 * is marked in *uflags. */
static unsigned kwalk_kept(struct callstacks *cs, uint64_t proc, const uint64_t *upc,
			   unsigned nuser, unsigned *uflags)
{
	for (unsigned i = 1; i < nuser; i++) {
		uint64_t a = upc[i] & ~LX_PC_EXACT;

		if (a >= MIN_USER_ADDR && !symbolizer__mapped(cs->sym, proc, a - 1)) {
			*uflags |= LX_USTACK_TRUNCATED;
			return i;
		}
	}
	return nuser;
}

/* Whether a user address of st (or of the walk it hits) lies in a binary whose file is late
 * and worth waiting for (symbolizer__awaited). */
static bool awaits_file(struct callstacks *cs, uint32_t pid, const struct lx_stack *st)
{
	const uint64_t *upc = (const uint64_t *)&st->pc[st->nkern];
	unsigned n = st->nuser;
	uint64_t proc = proc_of(cs, pid);

	if (st->uflags & LX_USTACK_HIT) {
		const uint64_t *v = u64map__get(cs->slots, (uint64_t)st->tid << 8 | st->uslot);
		const struct stored *sv = v ? (const struct stored *)(uintptr_t)*v : NULL;

		upc = sv ? sv->pc : NULL;
		n = sv ? sv->n : 0;
	}
	for (unsigned i = 0; i < n; i++)
		if (symbolizer__awaited(cs->sym, proc, upc[i] & ~LX_PC_EXACT))
			return true;
	return false;
}

bool callstacks__ready(struct callstacks *cs, uint32_t pid, const struct lx_stack *st)
{
	return callstacks__ready_within(cs, pid, st, LATE_WAIT_NS);
}

bool callstacks__ready_within(struct callstacks *cs, uint32_t pid, const struct lx_stack *st,
			      uint64_t limit_ns)
{
	const struct late_walk lw = { cs->sym, cs->cfi, proc_of(cs, pid) };
	enum late_walk_end end;
	unsigned n = st->nuser;
	bool rows = false;
	uint64_t now;

	/* A stack in a binary whose open was late (a loaded disk) waits for the file, as a walk
	 * for its rows, so that it is named: where the stream holds records for rows (a
	 * recording, callstacks__use_rows), not in a replay that takes each record at once.
	 * Shedding waits does not give names up: only a wait for rows is shed. */
	if (cs->cfi && awaits_file(cs, pid, st))
		goto held;
	if (!(st->uflags & LX_USTACK_COPY) || !cs->cfi)
		return true;
	if (late_walk__finish(&lw, ucopy_of(st), cs->late, &n, true, &end) != -EAGAIN) {
		cs->held_since = 0;
		return true;
	}
	rows = true;
held:
	now = now_ns();
	if (!cs->held_since) {
		cs->held_since = now;
		cs->st.late_held++;
	}
	if (now - cs->held_since < limit_ns && !cs->no_wait && !(rows && cs->shed_waits))
		return false;
	cs->st.unwaited += rows && cs->shed_waits && !cs->no_wait;
	cs->held_since = 0;
	return true;
}

void callstacks__warm(struct callstacks *cs, uint32_t pid, const struct lx_stack *st)
{
	const struct late_walk lw = { cs->sym, cs->cfi, proc_of(cs, pid) };
	const uint64_t *upc = (const uint64_t *)&st->pc[st->nkern];
	unsigned n = st->nuser, uflags = st->uflags;
	enum late_walk_end end;

	if (uflags & LX_USTACK_HIT)
		return;
	if (uflags & LX_USTACK_COPY) {
		memcpy(cs->late, upc, n * sizeof(cs->late[0]));
		late_walk__finish(&lw, ucopy_of(st), cs->late, &n, false, &end);
		upc = cs->late;
		uflags &= ~LX_USTACK_COPY;
	}
	(void)gather(cs, lw.proc, -1, st, upc, n, uflags, (pid_t)pid, NULL);
}

void callstacks__use_rows(struct callstacks *cs, struct cfi_loader *cfi)
{
	cs->cfi = cfi;
}

void callstacks__stop_waiting(struct callstacks *cs)
{
	cs->no_wait = true;
}

void callstacks__shed(struct callstacks *cs, bool waits, bool symbols)
{
	cs->shed_waits = waits;
	cs->shed_symbols = symbols;
}

/* The stack of a thread whose stack is shed: its identity under the one frame that says so,
 * remembered by the identity alone. */
static uint64_t shed_stack(struct callstacks *cs, uint32_t p, uint32_t ident, unsigned uflags)
{
	uint64_t key[2] = { (uint64_t)ident << 32 | !!(uflags & LX_USTACK_IRQ), SHED_KEY };
	uint64_t h = key_hash(key, 2), stk;
	struct gt_frame frames[1 + IDENT_FRAMES];
	struct entry *e = memo_find(&cs->memo[cs->young], key, 2, h);
	int n;

	cs->st.shed++;
	if (e && gt_tables__current(cs->w, true, e->stk))
		return e->stk;
	n = idents__special_frame(cs->ids, IDENT_SPECIAL_SHED, &frames[0]);
	if (!n)
		n = identity(cs, ident, uflags, &frames[1]);
	if (n < 0) {
		errno = -n;
		return 0;
	}
	stk = gt_tables__stack(cs->w, p, frames, (size_t)n + 1);
	if (!stk)
		return 0;
	if (e)
		e->stk = stk;
	else
		memo_put(cs, key, 2, h, stk);
	return stk;
}

/* Notes stk, young in the memory, as the answer for sv's hits with (ident, nr, proc). */
static uint64_t hit_answer(const struct callstacks *cs, struct stored *sv, uint32_t ident, int nr,
			   uint64_t proc, uint64_t stk)
{
	if (sv) {
		sv->hit_ident = ident;
		sv->hit_nr = nr;
		sv->hit_proc = proc;
		sv->hit_stk = stk;
		sv->hit_gen = cs->memo_gen;
	}
	return stk;
}

/* Forgets every stack remembered by its addresses, when a binary read late names addresses
 * that read "[unknown]" before. */
static void memo_forget_late(struct callstacks *cs)
{
	uint64_t read_late = symbolizer__read_late(cs->sym);

	if (read_late == cs->read_late)
		return;
	cs->read_late = read_late;
	for (int i = 0; i < 2; i++) {
		memo_clear(&cs->memo[i]);
		memo_clear(&cs->shared[i]);
	}
	cs->st.cache_clears++;
	cs->memo_gen++;
}

uint64_t callstacks__get(struct callstacks *cs, uint32_t p, uint32_t ident, uint32_t pid, int nr,
			 const struct lx_stack *st, const struct lx_pystack *ps)
{
	const struct lx_pyframe *pf = ps ? (const struct lx_pyframe *)(ps + 1) : NULL;
	const uint64_t *upc = (const uint64_t *)&st->pc[st->nkern];
	unsigned nuser = st->nuser, uflags = st->uflags & ~LX_USTACK_STORE;
	uint64_t proc, h, t0, stk;
	struct stored *sv = NULL;
	struct entry *young, *e;
	size_t nkey = 0;
	bool deep;

	cs->st.lookups++;
	memo_forget_late(cs);
	if (uflags & LX_USTACK_HIT) {
		const uint64_t *v = u64map__get(cs->slots, (uint64_t)st->tid << 8 | st->uslot);

		sv = v ? (struct stored *)(uintptr_t)*v : NULL;
		if (sv) {
			upc = sv->pc;
			nuser = sv->n;
			uflags = sv->uflags;
		} else {
			/* The record that stored the walk never came (lost): a truncated stack. */
			cs->st.hits_lost++;
			nuser = 0;
			uflags = LX_USTACK_TRUNCATED;
		}
	}
	if (uflags & LX_USTACK_COPY) {
		nuser = finish_late(cs, proc_of(cs, pid), st, &uflags);
		upc = cs->late;
	}
	if (!(st->uflags & (LX_USTACK_HIT | LX_USTACK_STORE)) && st->uslot == LX_USLOT_NO_ROOM) {
		uflags |= USTACK_NO_ROOM;
		cs->st.copies_refused++;
	}
	if (uflags & LX_USTACK_KWALK)
		nuser = kwalk_kept(cs, proc_of(cs, pid), upc, nuser, &uflags);
	/* A walk cut at its most frames is as incomplete as one cut at a frame that is no code. */
	if (uflags & LX_USTACK_DEEP)
		uflags |= LX_USTACK_TRUNCATED;
	/* Every stack handed out cut short is counted, its native walk or its Python frames
	 * (deeper than the walk keeps: marked where by splice_python): nothing is lost silently. */
	deep = cs->py && ps && ps->n && (ps->flags & LX_PYSTACK_DEEP);
	cs->st.py_deep += deep;
	cs->st.cut += (uflags & LX_USTACK_TRUNCATED) || deep;
	if (uflags & LX_USTACK_IRQ)
		nr = -1;
	proc = nuser ? proc_of(cs, pid) : 0;
	if (nr > 0xfffd)
		nr = -1;
	/* With kernel or Python frames the key is more than the walk's: only hits without are
	 * answered. */
	if (st->nkern || ps)
		sv = NULL;
	if (sv && sv->hit_gen == cs->memo_gen && sv->hit_ident == ident && sv->hit_nr == nr &&
	    sv->hit_proc == proc && gt_tables__current(cs->w, true, sv->hit_stk))
		return sv->hit_stk;
	cs->key[nkey++] = (uint64_t)ident << 32 | (uint64_t)(nr + 1);
	cs->key[nkey++] = proc;
	cs->key[nkey++] = (uint64_t)st->nkern << 24 | nuser << 16 |
			  (uflags & (LX_USTACK_TRUNCATED | LX_USTACK_IRQ | USTACK_NO_ROOM));
	memcpy(&cs->key[nkey], st->pc, st->nkern * sizeof(uint64_t));
	nkey += st->nkern;
	memcpy(&cs->key[nkey], upc, nuser * sizeof(uint64_t));
	nkey += nuser;
	if (ps) {
		cs->key[nkey++] = (uint64_t)ps->n << 16 | ps->flags | 1ull << 63;
		/* By line where the frame was named when read: a loop's instructions on one line
		 * make one stack, not one each (every new stack is symbolized whole). */
		for (unsigned i = 0; i < ps->n; i++) {
			int line = python__line(cs->py, (pid_t)pid, &pf[i]);

			cs->key[nkey++] = pf[i].code;
			cs->key[nkey++] = (line >= 0 ? (uint64_t)line : 1ull << 31 | pf[i].instr) << 32 |
					  pf[i].flags;
		}
	}
	h = key_hash(cs->key, nkey);
	/* A stack not in the writer's current generation is built again (format/dedup.h): the
	 * writer then keeps its id while it still knows it, or gives a new one. */
	young = memo_find(&cs->memo[cs->young], cs->key, nkey, h);
	if (young && gt_tables__current(cs->w, true, young->stk))
		return hit_answer(cs, sv, ident, nr, proc, young->stk);
	e = young ? NULL : memo_find(&cs->memo[cs->young ^ 1], cs->key, nkey, h);
	if (e && gt_tables__current(cs->w, true, e->stk)) {
		stk = e->stk;	/* e moves with the young generation's growth: copy first */
		if (memo_put(cs, cs->key, nkey, h, stk))
			return hit_answer(cs, sv, ident, nr, proc, stk);
		return stk;
	}

	t0 = now_ns();
	stk = build(cs, p, ident, proc, nr, st, upc, nuser, uflags, (pid_t)pid, ps);
	cs->st.symbolize_ns += now_ns() - t0;
	if (!stk && errno == ENODATA)
		return shed_stack(cs, p, ident, uflags);
	if (!stk)
		return 0;
	if (!young && !e)
		cs->st.distinct++;
	if (young) {
		young->stk = stk;
		return hit_answer(cs, sv, ident, nr, proc, stk);
	}
	if (memo_put(cs, cs->key, nkey, h, stk))
		return hit_answer(cs, sv, ident, nr, proc, stk);
	return stk;
}

void callstacks__want_rows(struct callstacks *cs, const uint32_t *pids, size_t n)
{
	for (size_t i = 0; cs->cfi && i < n; i++)
		(void)cfi_loader__want_process(cs->cfi, (pid_t)pids[i]);	/* gone: none */
}

bool callstacks__rows_loaded(struct callstacks *cs)
{
	return !cs->cfi || cfi_loader__wait_urgent(cs->cfi, 0);
}

void callstacks__prepare(struct callstacks *cs, const uint32_t *pids, size_t n, bool kernel,
			 uint64_t budget_ns)
{
	for (size_t i = 0; i < n; i++)
		(void)symbolizer__note_process(cs->sym, pids[i]);	/* gone: nothing to read */
	symbolizer__prepare(cs->sym, kernel, budget_ns);
}

void callstacks__stats(const struct callstacks *cs, struct callstacks_stats *out)
{
	struct symbolizer_stats ss;

	symbolizer__stats(cs->sym, &ss);
	*out = cs->st;
	out->live_images = ss.processes;
	out->prepared = ss.prepared;
	out->prepared_dwarf = ss.prepared_dwarf;
	out->prepared_kernel = ss.prepared_kernel;
	out->prepare_ns = ss.prepare_ns;
	out->binaries = ss.modules;
	out->binaries_closed = ss.modules_closed;
	out->binaries_over_budget = ss.modules_over_budget;
	out->binaries_reread = ss.modules_reread;
	out->walks = u64map__count(cs->slots);
}

uint64_t callstacks__image(const struct callstacks *cs, uint32_t pid)
{
	return proc_of(cs, pid);
}

void callstacks__exit(struct callstacks *cs, uint32_t pid, uint64_t image)
{
	drop_late(cs, pid);
	symbolizer__forget_process(cs->sym, image);
	if (proc_of(cs, pid) == image)
		u64map__del(cs->cur, pid);
}

const struct foreign_log *callstacks__refused(const struct callstacks *cs)
{
	return symbolizer__refused(cs->sym);
}

/* The PC frame i of ls was written with. */
static uint64_t written_pc(const struct late_stack *ls, uint32_t i)
{
	for (uint32_t j = 0; j < ls->njit; j++)
		if (ls->jit[j].idx == i)
			return ls->jit[j].pc;
	return ls->frames[i].pc;
}

/* The hash of the first n PCs ls was written with (all when n exceeds them). */
static uint64_t written_hash(const struct late_stack *ls, size_t n)
{
	uint64_t h = HASH_BYTES_INIT;

	for (uint32_t i = 0; i < ls->n && i < n; i++) {
		uint64_t pc = written_pc(ls, i);

		h = hash_bytes(h, &pc, sizeof(pc));
	}
	return hash_mix(h);
}

/* Keeps named stack i for callstacks__late_named; 0 or -ENOMEM. */
static int note_written(struct callstacks *cs, size_t i)
{
	const struct late_stack *ls = cs->jit_stacks[i];
	uint64_t *slot;
	bool added;

	slot = u64map__put(cs->jit_written, written_hash(ls, CALLSTACKS_WRITTEN_FRAMES), &added);
	if (!slot)
		return -ENOMEM;
	if (added)	/* another stack of the same hash: the first one's names */
		*slot = i + 1;
	return 0;
}

/* Names ls's unnamed JIT frames in frames (ls->n of them) from its process's perf map as it
 * stands now; last: the recording's end (symbolizer__late_jit). The frames named. */
static uint32_t name_jit_frames(struct callstacks *cs, const struct late_stack *ls,
				struct gt_frame *frames, bool last)
{
	uint32_t named = 0;

	for (uint32_t j = 0; j < ls->njit; j++) {
		struct sym_frame f;

		if (symbolizer__late_jit(cs->sym, ls->pid, ls->jit[j].addr, last, &f) <= 0)
			continue;
		frames[ls->jit[j].idx] = (struct gt_frame){ f.pc, f.func, f.file, f.line };
		named++;
	}
	return named;
}

/* Names the unnamed JIT frames of the kept stacks from their processes' perf maps as they
 * stand now, and defines each stack that gained a name again under its id; where the encoder
 * cannot, keeps it for a copy of the file (callstacks__late_named). */
static void name_late_jit(struct callstacks *cs)
{
	uint64_t t0 = now_ns();
	bool copy = false;

	callstacks__window_done(cs);
	for (size_t i = 0; i < cs->njit_stacks; i++) {
		struct late_stack *ls = cs->jit_stacks[i];
		uint32_t named;
		int err = 0;

		if (!ls || !(named = name_jit_frames(cs, ls, ls->frames, true)))
			continue;
		if (!copy)
			err = gt_tables__restack(cs->w, ls->p, ls->stk, ls->frames, ls->n);
		if (err == -ENOTSUP)
			copy = true;
		if (copy)
			err = note_written(cs, i);
		if (err) {
			cs->st.late_jit_err = err;
			continue;
		}
		cs->st.late_jit_named++;
		cs->st.late_jit_frames += named;
	}
	if (copy && !cs->st.late_jit_err)
		cs->st.late_jit_err = -ENOTSUP;
	cs->st.late_jit_ns = now_ns() - t0;
}

size_t callstacks__name_window(struct callstacks *cs)
{
	size_t named = 0;

	callstacks__window_done(cs);
	if (!cs->njit_stacks ||
	    !(cs->window = calloc(cs->njit_stacks, sizeof(*cs->window))))
		return 0;
	cs->njit_window = cs->njit_stacks;
	/* The kept frames stay as written: a map that names a frame now may be cut short or
	 * refused by the end, and the end names them from the map as it stands then. */
	for (size_t i = 0; i < cs->njit_window; i++) {
		const struct late_stack *ls = cs->jit_stacks[i];
		struct gt_frame *frames;

		if (!ls || !(frames = malloc(ls->n * sizeof(*frames))))
			continue;
		memcpy(frames, ls->frames, ls->n * sizeof(*frames));
		if (!name_jit_frames(cs, ls, frames, false) || note_written(cs, i)) {
			free(frames);
			continue;
		}
		cs->window[i] = frames;
		named++;
	}
	cs->st.late_jit_window += named;
	return named;
}

void callstacks__window_done(struct callstacks *cs)
{
	if (!cs->window)
		return;
	for (size_t i = 0; i < cs->njit_window; i++)
		free(cs->window[i]);
	free(cs->window);
	cs->window = NULL;
	cs->njit_window = 0;
	u64map__clear(cs->jit_written);
}

const struct gt_frame *callstacks__late_named(const struct callstacks *cs, const uint64_t *pcs,
					      size_t n)
{
	const struct late_stack *ls;
	const uint64_t *slot;
	uint64_t h = HASH_BYTES_INIT;

	for (size_t i = 0; i < n; i++)
		h = hash_bytes(h, &pcs[i], sizeof(pcs[i]));
	slot = u64map__get(cs->jit_written, hash_mix(h));
	if (!slot)
		return NULL;
	ls = cs->jit_stacks[*slot - 1];
	if (n > ls->n || (n < ls->n && n < CALLSTACKS_WRITTEN_FRAMES))
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (written_pc(ls, i) != pcs[i])
			return NULL;
	return cs->window ? cs->window[*slot - 1] : ls->frames;
}

void callstacks__finish(struct callstacks *cs)
{
	name_late_jit(cs);
	symbolizer__finish(cs->sym);
}

const struct foreign_log *callstacks__unread(const struct callstacks *cs)
{
	return symbolizer__unread(cs->sym);
}

void callstacks__free(struct callstacks *cs)
{
	if (!cs)
		return;
	symbolizer__free(cs->sym);
	for (int i = 0; i < 4; i++) {
		struct memo *m = i < 2 ? &cs->memo[i] : &cs->shared[i - 2];

		u64map__free(m->by_hash);
		free(m->entries);
		free(m->pool);
		free(m->frames);
	}
	u64map__free(cs->cur);
	u64map__free(cs->slots);
	u64map__free(cs->jit_ids);
	callstacks__window_done(cs);
	u64map__free(cs->jit_written);
	for (size_t i = 0; i < cs->njit_stacks; i++)
		free(cs->jit_stacks[i]);
	free(cs->jit_stacks);
	free(cs->jit_free);
	u64map__free(cs->jit_pids);
	while (cs->stored)
		stored_free(cs, cs->stored);
	free(cs);
}
