/* callstacks.c - raw kernel/user stacks to deduplicated, symbolized, trimmed trace stacks, and
 * the process images they are symbolized against (callstacks.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/varint.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/stacks/callstacks.h"
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
/* An image noted at peek time whose record never reached the model (dropped as malformed) is
 * forgotten after this long. */
#define PENDING_MAX_AGE_NS (10 * 1000000000ull)
/* Key words the memory of distinct stacks holds at most (4 MiB). Its keys name process
 * images, which exit for good, so it is kept in two generations of half that each: lookups
 * try the young one, then the old one, whose hits move to the young one; when the young one
 * is full the old one is emptied and becomes the young one. A stack still in use stays; one
 * not seen for a generation is built again if it comes back, and gets the id it had, since
 * the writer deduplicates stacks by their PCs, one-to-one with frames. */
#define CACHE_WORDS (1u << 19)

/* A noted image waiting for its record's turn. */
struct pending {
	uint64_t ts;
	uint64_t proc;
	uint32_t pid;
};

/* A distinct raw stack: its key words live in the pool at off. */
struct entry {
	size_t off;
	uint32_t len;
	uint64_t stk;
};

/* One generation of the memory of distinct stacks. */
struct memo {
	struct u64map *by_hash;	/* hash of the key words -> entry index */
	struct entry *entries;
	size_t n, entries_cap;
	uint64_t *pool;		/* key words of its entries */
	size_t len, pool_cap;
};

struct callstacks {
	struct gt_writer *w;
	struct idents *ids;
	struct symbolizer *sym;
	struct memo memo[2];		/* memo[young] and the older generation */
	int young;
	struct u64map *cur;		/* pid -> its current image's proc, when not the pid itself */
	struct pending *pending;
	size_t npending, pending_cap;
	uint32_t next_gen;
	uint64_t key[4 + LX_STACK_KERN_MAX + LX_STACK_USER_MAX];
	struct gt_frame frames[GATHER_MAX + 1 + IDENT_FRAMES];
	struct sym_frame sf[GATHER_MAX];
	char sys_func[64], trim_func[48];
	struct callstacks_stats st;
};

struct callstacks *callstacks__new(struct gt_writer *w, struct idents *ids, const char *proc_root)
{
	struct callstacks *cs = calloc(1, sizeof(*cs));
	char kallsyms[4096 + 16];

	if (!cs)
		return NULL;
	cs->w = w;
	cs->ids = ids;
	cs->next_gen = 1;
	if (proc_root)
		snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", proc_root);
	cs->sym = symbolizer__new(&(struct symbolizer_opts){
		.sz = sizeof(struct symbolizer_opts),
		.proc_root = proc_root,
		.kallsyms = proc_root ? kallsyms : NULL,
	});
	cs->memo[0].by_hash = u64map__new();
	cs->memo[1].by_hash = u64map__new();
	cs->cur = u64map__new();
	if (!cs->sym || !cs->memo[0].by_hash || !cs->memo[1].by_hash || !cs->cur) {
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
}

void callstacks__peek(struct callstacks *cs, const struct lx_rec *r, size_t size)
{
	uint32_t pid;
	uint64_t proc;

	if (r->type == LX_REC_FORK && size >= sizeof(struct lx_fork) &&
	    ((const struct lx_fork *)r)->child_pid == r->tid)
		pid = r->tid;
	else if (r->type == LX_REC_EXEC && size >= sizeof(struct lx_exec))
		pid = ((const struct lx_exec *)r)->pid;
	else
		return;
	if (grow_array((void **)&cs->pending, &cs->pending_cap, cs->npending + 1, sizeof(*cs->pending), 16))
		return;	/* noted at its turn instead, if it is still there */
	proc = SYM_PROC(pid, cs->next_gen++);
	/* A process gone already cannot be noted; its stacks will read "[unknown]". */
	if (symbolizer__note_process(cs->sym, proc) == 0)
		cs->st.images++;
	cs->pending[cs->npending++] = (struct pending){ .ts = r->ts, .proc = proc, .pid = pid };
}

void callstacks__image(struct callstacks *cs, uint32_t pid, uint64_t ts)
{
	uint64_t proc = 0, old = proc_of(cs, pid), *slot;
	bool added;
	size_t i, kept = 0;

	for (i = 0; i < cs->npending; i++) {
		struct pending *p = &cs->pending[i];

		if (!proc && p->pid == pid && p->ts == ts) {
			proc = p->proc;
			continue;
		}
		if (p->ts + PENDING_MAX_AGE_NS < ts) {
			symbolizer__forget_process(cs->sym, p->proc);
			continue;
		}
		cs->pending[kept++] = *p;
	}
	cs->npending = kept;
	/* An exec's snapshot was taken before the dynamic loader mapped the libraries: take it
	 * again now that they are there. If the process is gone, the first one stays. */
	if (proc)
		symbolizer__note_process(cs->sym, proc);
	if (!proc) {
		proc = SYM_PROC(pid, cs->next_gen++);
		if (symbolizer__note_process(cs->sym, proc) == 0)
			cs->st.images++;
	}
	/* Every stack of the old image is older than this record and symbolized already. */
	symbolizer__forget_process(cs->sym, old);
	slot = u64map__put(cs->cur, pid, &added);
	if (slot)
		*slot = proc;
	else
		symbolizer__forget_process(cs->sym, proc);	/* the pid's own snapshot serves */
}

/* Frames leaf first into cs->frames: kernel, syscall, user; returns how many or -errno. */
static int gather(struct callstacks *cs, uint64_t proc, int nr, const struct lx_stack *st)
{
	size_t n = 0;
	int err;

	for (unsigned i = 0; i < st->nkern && n < GATHER_MAX; i++) {
		struct sym_frame f;

		if (!st->pc[i])
			continue;
		err = symbolizer__kernel(cs->sym, st->pc[i], i > 0, &f, 1);
		if (err < 0)
			return err;
		cs->frames[n++] = (struct gt_frame){ f.pc, f.func, f.file, f.line };
	}
	if (nr >= 0) {
		err = idents__syscall_frame(cs->ids, nr, cs->sys_func, sizeof(cs->sys_func),
						  &cs->frames[n++]);
		if (err)
			return err;
	}
	for (unsigned i = 0; i < st->nuser && n < GATHER_MAX; i++) {
		uint64_t a = st->pc[st->nkern + i];
		int k;

		/* The frame-pointer walk ends on a null (or garbage) return address at the root;
		 * nothing runs below mmap_min_addr, and the symbolizer has no PC for address 0. */
		if (a < MIN_USER_ADDR)
			continue;
		k = symbolizer__user(cs->sym, proc, a, i > 0, cs->sf, (int)(GATHER_MAX - n));
		if (k < 0)
			return k;
		for (int j = 0; j < k; j++)
			cs->frames[n++] = (struct gt_frame){ cs->sf[j].pc, cs->sf[j].func, cs->sf[j].file,
							     cs->sf[j].line };
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

/* Symbolizes, trims and writes the stack; 0 with errno set on failure. */
static uint64_t build(struct callstacks *cs, uint32_t p, uint32_t ident, uint64_t proc, int nr,
		      const struct lx_stack *st)
{
	struct gt_frame ids[IDENT_FRAMES];
	size_t keep, nid = 1;
	uint64_t stk;
	int n, err = 0;

	if (ident == CALLSTACKS_IDLE)
		err = idents__special_frame(cs->ids, IDENT_SPECIAL_IDLE, &ids[0]);
	else
		nid = idents__frames(cs->ids, ident, ids);
	n = err ? err : gather(cs, proc, nr, st);
	if (n < 0) {
		errno = -n;
		return 0;
	}
	keep = fit(cs->frames, (size_t)n, ids, nid);
	for (;;) {
		size_t len = keep;

		if (keep < (size_t)n) {
			idents__trim_frame((uint64_t)n - keep, cs->trim_func, sizeof(cs->trim_func),
						 &cs->frames[len++]);
		}
		for (size_t i = 0; i < nid; i++)
			cs->frames[len++] = ids[i];
		stk = gt_writer__stack(cs->w, p, cs->frames, len);
		/* The estimate of string ids' sizes was short: keep half as many frames. */
		if (stk || errno != E2BIG || !keep)
			break;
		keep /= 2;
	}
	if (stk && keep < (size_t)n)
		cs->st.trimmed++;
	return stk;
}

/* The entry of key in m, probing from hash h past collisions with other keys; NULL when absent. */
static const struct entry *memo_find(const struct memo *m, const uint64_t *key, size_t nkey,
				     uint64_t h)
{
	for (;; h = hash_mix(h + 1)) {
		const uint64_t *slot = u64map__get(m->by_hash, h);
		const struct entry *e;

		if (!slot)
			return NULL;
		e = &m->entries[*slot];
		if (e->len == nkey && !memcmp(&m->pool[e->off], key, nkey * sizeof(*key)))
			return e;
	}
}

/* Remembers key -> stk in the young generation, starting a new one when it is full. Out of
 * memory it is simply not remembered: built again next time, same id. */
static void memo_put(struct callstacks *cs, const uint64_t *key, size_t nkey, uint64_t h,
		     uint64_t stk)
{
	struct memo *m = &cs->memo[cs->young];
	uint64_t *slot;
	bool added;

	if (m->len + nkey > CACHE_WORDS / 2) {
		cs->young ^= 1;
		m = &cs->memo[cs->young];
		u64map__clear(m->by_hash);
		m->n = m->len = 0;
		cs->st.cache_clears++;
	}
	if (grow_array((void **)&m->entries, &m->entries_cap, m->n + 1, sizeof(*m->entries), 256) ||
	    grow_array((void **)&m->pool, &m->pool_cap, m->len + nkey, sizeof(*m->pool), 4096))
		return;
	while (u64map__get(m->by_hash, h))
		h = hash_mix(h + 1);
	slot = u64map__put(m->by_hash, h, &added);
	if (!slot)
		return;
	memcpy(&m->pool[m->len], key, nkey * sizeof(*key));
	m->entries[m->n] = (struct entry){ .off = m->len, .len = (uint32_t)nkey, .stk = stk };
	m->len += nkey;
	*slot = m->n++;
}

uint64_t callstacks__get(struct callstacks *cs, uint32_t p, uint32_t ident, uint32_t pid, int nr,
			 const struct lx_stack *st)
{
	uint64_t proc = st->nuser ? proc_of(cs, pid) : 0, h = 0x51ed270b27a4e13full, t0, stk;
	size_t nkey = 0, nwords = (size_t)st->nkern + st->nuser;
	const struct entry *e;

	cs->st.lookups++;
	if (nr > 0xfffd)
		nr = -1;
	cs->key[nkey++] = (uint64_t)ident << 32 | (uint64_t)(nr + 1);
	cs->key[nkey++] = proc;
	cs->key[nkey++] = (uint64_t)st->nkern << 16 | st->nuser;
	memcpy(&cs->key[nkey], st->pc, nwords * sizeof(uint64_t));
	nkey += nwords;
	for (size_t i = 0; i < nkey; i++)
		h = hash_mix(h ^ cs->key[i]);
	e = memo_find(&cs->memo[cs->young], cs->key, nkey, h);
	if (e)
		return e->stk;
	e = memo_find(&cs->memo[cs->young ^ 1], cs->key, nkey, h);
	if (e) {
		stk = e->stk;	/* e moves with the young generation's growth: copy first */
		memo_put(cs, cs->key, nkey, h, stk);
		return stk;
	}

	t0 = now_ns();
	stk = build(cs, p, ident, proc, nr, st);
	cs->st.symbolize_ns += now_ns() - t0;
	if (!stk)
		return 0;
	cs->st.distinct++;
	memo_put(cs, cs->key, nkey, h, stk);
	return stk;
}

void callstacks__stats(const struct callstacks *cs, struct callstacks_stats *out)
{
	struct symbolizer_stats ss;

	symbolizer__stats(cs->sym, &ss);
	*out = cs->st;
	out->live_images = ss.processes;
}

void callstacks__exit(struct callstacks *cs, uint32_t pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < cs->npending; i++) {
		if (cs->pending[i].pid == pid)
			symbolizer__forget_process(cs->sym, cs->pending[i].proc);
		else
			cs->pending[kept++] = cs->pending[i];
	}
	cs->npending = kept;
	symbolizer__forget_process(cs->sym, proc_of(cs, pid));
	u64map__del(cs->cur, pid);
}

const struct foreign_log *callstacks__refused(const struct callstacks *cs)
{
	return symbolizer__refused(cs->sym);
}

void callstacks__free(struct callstacks *cs)
{
	if (!cs)
		return;
	symbolizer__free(cs->sym);
	for (int i = 0; i < 2; i++) {
		u64map__free(cs->memo[i].by_hash);
		free(cs->memo[i].entries);
		free(cs->memo[i].pool);
	}
	u64map__free(cs->cur);
	free(cs->pending);
	free(cs);
}
