/* idents.c - identities and programs, their PCs and the cached stack ids built from them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lxtrace.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64cache.h"
#include "lib/u64map.h"
#include "user/proc/syscalls.h"
#include "user/stacks/idents.h"
#include "user/stacks/pcclaims.h"

/* Stack ids cached per (identity, syscall) in a generation: 1-2 MiB of them. Identities come
 * and go with processes; a stack forgotten is built again from the same frames. */
#define STACK_CACHE_KEYS (1u << 16)

/* PC claims a generation holds (pcclaims.h). */
#define PC_CLAIMS (1u << 16)

/* Longest func: 15 comm bytes, a guard prefix, " (pid 4294967295)". */
#define FUNC_LEN 48

/* A program: the name its threads are grouped by. One PC per name, and the stack of that frame
 * alone, every goroutine's creation stack. */
struct prog {
	uint64_t pc;
	uint64_t create_stk;	/* 0 until first asked for */
	char name[LX_COMM_LEN];
	char func[FUNC_LEN];
};

struct ident {
	uint64_t pc;
	uint64_t key;		/* in by_key */
	uint32_t id;		/* as callers name it: never given twice */
	uint32_t refs;		/* threads naming it (idents__hold) */
	uint32_t pid;
	uint32_t prog;		/* index into progs */
	char comm[LX_COMM_LEN];
	char func[FUNC_LEN];
	char file[24];
};

struct idents {
	const struct gt_tables *w;	/* where stacks get their ids */
	struct ident *idents;		/* the live ones, in no order */
	uint32_t nidents;
	size_t cap;
	struct u64map *slot_of;		/* id -> index in idents */
	uint32_t next_id;
	uint32_t *unheld;		/* ids whose last hold went: freed by idents__collect */
	size_t nunheld, unheld_cap;
	struct prog *progs;
	uint32_t nprogs;
	size_t cap_progs;
	uint32_t unknown_prog;		/* 1 + index of "[unknown thread]", 0 until made */
	struct u64map *by_key;	/* hash of (pid, comm, program, salt) -> ident id */
	struct u64map *by_prog;	/* hash of (program, salt) -> prog */
	struct pcclaims *pcs;		/* the PCs handed out, to keep them distinct */
	struct u64cache *stacks;	/* (ident + 1) << 16 | (nr + 2) -> stack id */
	struct u64map *sys_pcs;	/* nr + 2 -> PC of the frame "syscall NAME" */
	uint64_t special[IDENT_SPECIAL_COUNT];
	uint64_t special_pc[IDENT_SPECIAL_COUNT];
};

static const char *const special_func[IDENT_SPECIAL_COUNT] = {
	[IDENT_SPECIAL_IRQ] = "[irq]",
	[IDENT_SPECIAL_LXTRACE] = "lxtrace",
	[IDENT_SPECIAL_REPAIR] = "[lxtrace repair]",
	[IDENT_SPECIAL_IDLE] = "[idle]",
	[IDENT_SPECIAL_TRUNCATED] = "[truncated]",
	[IDENT_SPECIAL_NO_ROOM] = "[truncated: no room for a copy]",
	[IDENT_SPECIAL_SHED] = "[not symbolized: the recorder was behind]",
	[IDENT_SPECIAL_PY_DEEP] = "[truncated: Python frames]",
};

/* A PC for a new func string: a hash of it (so the same name keeps its PC across files), moved
 * when another string holds it or may have held it (pcclaims.h: the claims are bounded, as
 * identities come and go with processes). IDENT_PC_SYNTHETIC keeps it clear of every real
 * address and of the symbolizer's PCs; a moved one has IDENT_PC_REMAPPED too. Always odd:
 * even PCs in the range are idents__trim_frame's. */
static int new_pc(struct idents *s, const char *func, uint64_t *out)
{
	uint64_t h = hash_bytes(HASH_BYTES_INIT, func, strlen(func));

	*out = pcclaims__claim(s->pcs, IDENT_PC_SYNTHETIC | (h >> 24) | 1, h | 1);
	return *out ? 0 : -ENOMEM;
}

struct idents *idents__new(const struct gt_tables *w)
{
	struct idents *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->w = w;
	s->next_id = 1;
	s->slot_of = u64map__new();
	s->by_key = u64map__new();
	s->by_prog = u64map__new();
	s->pcs = pcclaims__new(PC_CLAIMS, IDENT_PC_SYNTHETIC | IDENT_PC_REMAPPED | 1,
			       (IDENT_PC_REMAPPED - 1) & ~1ull);
	s->stacks = u64cache__new(STACK_CACHE_KEYS);
	s->sys_pcs = u64map__new();
	if (!s->slot_of || !s->by_key || !s->by_prog || !s->pcs || !s->stacks || !s->sys_pcs) {
		idents__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Files the entry *out, just added as the last of *count, under key in map; takes it back
 * when the map cannot grow. */
static int index_put(struct u64map *map, uint64_t key, const uint32_t *out, uint32_t *count)
{
	bool added;
	uint64_t *slot = u64map__put(map, key, &added);

	if (!slot) {
		--*count;
		return -ENOMEM;
	}
	*slot = *out;
	return 0;
}

/* A program called name (NUL-padded to LX_COMM_LEN) whose frame shows func. */
static int add_prog(struct idents *s, const char *name, const char *func, uint32_t *out)
{
	struct prog *pr;
	int err;

	if (grow_array((void **)&s->progs, &s->cap_progs, (size_t)s->nprogs + 1, sizeof(*s->progs),
		       64))
		return -ENOMEM;
	pr = &s->progs[s->nprogs];
	memset(pr, 0, sizeof(*pr));
	memcpy(pr->name, name, LX_COMM_LEN);
	snprintf(pr->func, sizeof(pr->func), "%s", func);
	err = new_pc(s, pr->func, &pr->pc);
	if (err)
		return err;
	*out = s->nprogs++;
	return 0;
}

/* The program of unknown threads, whose frame is "[unknown thread]" (and name ""). */
static int unknown_prog(struct idents *s, uint32_t *out)
{
	/* add_prog copies LX_COMM_LEN bytes of the name: a padded empty one, not "". */
	static const char no_name[LX_COMM_LEN];
	int err;

	if (!s->unknown_prog) {
		err = add_prog(s, no_name, "[unknown thread]", out);
		if (err)
			return err;
		s->unknown_prog = *out + 1;
	}
	*out = s->unknown_prog - 1;
	return 0;
}

/* The program called name (NUL-padded to LX_COMM_LEN), added when new. */
static int get_prog(struct idents *s, const char *name, uint32_t *out)
{
	uint64_t h = hash_bytes(HASH_BYTES_INIT, name, LX_COMM_LEN);
	char func[FUNC_LEN];

	snprintf(func, sizeof(func), "%s%s", idents__guard(name), name[0] ? name : "?");

	for (;; h = hash_bytes(h, "salt", 4)) {
		uint64_t key = h | 1, *slot;
		int err;

		slot = u64map__get(s->by_prog, key);
		if (slot) {
			if (!memcmp(s->progs[*slot].name, name, LX_COMM_LEN)) {
				*out = (uint32_t)*slot;
				return 0;
			}
			continue;
		}
		err = add_prog(s, name, func, out);
		return err ? err : index_put(s->by_prog, key, out, &s->nprogs);
	}
}

/* Identity ident is held by nobody: it goes at the next idents__collect, unless held again by
 * then. Out of memory it is kept: the table holds more, never less. */
static void unheld(struct idents *s, uint32_t ident)
{
	if (!grow_array((void **)&s->unheld, &s->unheld_cap, s->nunheld + 1, sizeof(*s->unheld),
			16))
		s->unheld[s->nunheld++] = ident;
}

/* The live identity of id; NULL when there is none. */
static struct ident *ident_of(const struct idents *s, uint32_t id)
{
	const uint64_t *slot = u64map__get(s->slot_of, id);

	return slot ? &s->idents[*slot] : NULL;
}

/* A new identity filed under key; its id into *out. */
static int add_ident(struct idents *s, uint64_t key, uint32_t pid, const char *comm, uint32_t prog,
		     uint32_t *out)
{
	struct ident *id;
	uint64_t *slot, *kslot;
	bool added;
	int err;

	if (grow_array((void **)&s->idents, &s->cap, (size_t)s->nidents + 1, sizeof(*s->idents),
		       64))
		return -ENOMEM;
	id = &s->idents[s->nidents];
	memset(id, 0, sizeof(*id));
	id->key = key;
	id->pid = pid;
	id->prog = prog;
	memcpy(id->comm, comm, LX_COMM_LEN);
	if (!pid) {
		snprintf(id->func, sizeof(id->func), "[unknown thread]");
		snprintf(id->file, sizeof(id->file), "unknown");
	} else {
		snprintf(id->func, sizeof(id->func), "%s%s (pid %u)", idents__guard(comm),
			 comm[0] ? comm : "?", pid);
		snprintf(id->file, sizeof(id->file), "pid %u", pid);
	}
	err = new_pc(s, id->func, &id->pc);
	if (err)
		return err;
	/* Ids are not given twice (0 is none), so what callers keyed by an id that went (cached
	 * stacks, the memory of raw stacks) never names a newer identity. */
	if (!s->next_id)
		s->next_id = 1;
	id->id = s->next_id++;
	slot = u64map__put(s->slot_of, id->id, &added);
	if (!slot)
		return -ENOMEM;
	kslot = u64map__put(s->by_key, key, &added);
	if (!kslot) {
		u64map__del(s->slot_of, id->id);
		return -ENOMEM;
	}
	*slot = s->nidents++;
	*kslot = id->id;
	*out = id->id;
	/* Held by nobody yet: a caller that keeps it holds it, else it goes after the record. */
	unheld(s, id->id);
	return 0;
}

int idents__get(struct idents *s, uint32_t pid, const char *comm_in, const char *prog_in,
		uint32_t *out)
{
	char comm[LX_COMM_LEN] = "", name[LX_COMM_LEN] = "";
	uint32_t prog;
	uint64_t h;
	int err;

	if (pid) {
		strncpy(comm, comm_in, LX_COMM_LEN - 1);
		strncpy(name, prog_in && prog_in[0] ? prog_in : comm_in, LX_COMM_LEN - 1);
	}
	err = pid ? get_prog(s, name, &prog) : unknown_prog(s, &prog);
	if (err)
		return err;
	h = hash_bytes(hash_bytes(HASH_BYTES_INIT, &pid, sizeof(pid)), comm, sizeof(comm));
	h = hash_bytes(h, &prog, sizeof(prog));
	/* Key by a 64-bit hash; on the (rare) collision with another identity, rehash. */
	for (;; h = hash_bytes(h, "salt", 4)) {
		uint64_t key = h | 1, *slot;

		slot = u64map__get(s->by_key, key);
		if (slot) {
			const struct ident *id = ident_of(s, (uint32_t)*slot);

			if (id->pid == pid && id->prog == prog &&
			    !memcmp(id->comm, comm, sizeof(comm))) {
				*out = id->id;
				return 0;
			}
			continue;
		}
		return add_ident(s, key, pid, comm, prog, out);
	}
}

void idents__hold(struct idents *s, uint32_t ident)
{
	ident_of(s, ident)->refs++;
}

void idents__drop(struct idents *s, uint32_t ident)
{
	if (!--ident_of(s, ident)->refs)
		unheld(s, ident);
}

void idents__collect(struct idents *s)
{
	for (size_t i = 0; i < s->nunheld; i++) {
		struct ident *id = ident_of(s, s->unheld[i]);
		uint32_t slot;

		/* Held again since, or listed twice. */
		if (!id || id->refs)
			continue;
		slot = (uint32_t)(id - s->idents);
		u64map__del(s->by_key, id->key);
		u64map__del(s->slot_of, id->id);
		if (slot != --s->nidents) {
			s->idents[slot] = s->idents[s->nidents];
			*u64map__get(s->slot_of, s->idents[slot].id) = slot;
		}
	}
	s->nunheld = 0;
}

size_t idents__count(const struct idents *s)
{
	return s->nidents;
}

const char *idents__prog(const struct idents *s, uint32_t ident)
{
	return s->progs[ident_of(s, ident)->prog].name;
}

const char *idents__name(const struct idents *s, uint32_t ident)
{
	return ident_of(s, ident)->func;
}

uint32_t idents__pid(const struct idents *s, uint32_t ident)
{
	return ident_of(s, ident)->pid;
}

const char *idents__comm(const struct idents *s, uint32_t ident)
{
	return ident_of(s, ident)->comm;
}

size_t idents__frames(const struct idents *s, uint32_t ident, struct gt_frame f[IDENT_FRAMES])
{
	const struct ident *id = ident_of(s, ident);
	const struct prog *pr = &s->progs[id->prog];
	size_t n = 0;

	/* An unknown thread has no process: its program frame says all there is. */
	if (id->pid)
		f[n++] = (struct gt_frame){ .pc = id->pc, .func = id->func, .file = id->file };
	f[n++] = (struct gt_frame){ .pc = pr->pc, .func = pr->func, .file = "program" };
	return n;
}

int idents__special_frame(struct idents *s, enum ident_special k, struct gt_frame *f)
{
	int err;

	if (!s->special_pc[k]) {
		err = new_pc(s, special_func[k], &s->special_pc[k]);
		if (err)
			return err;
	}
	*f = (struct gt_frame){ .pc = s->special_pc[k], .func = special_func[k],
				.file = "lxtrace" };
	return 0;
}

void idents__trim_frame(uint64_t n, char *func, size_t len, struct gt_frame *f)
{
	snprintf(func, len, "[trimmed %llu frames]", (unsigned long long)n);
	*f = (struct gt_frame){ .pc = IDENT_PC_SYNTHETIC | (n & 0xffffffffull) << 1, .func = func,
				.file = "lxtrace" };
}

int idents__syscall_frame(struct idents *s, int nr, char *func, size_t len,
				struct gt_frame *f)
{
	const char *name = syscalls__name(nr);
	uint64_t key = (uint64_t)(nr + 2), *slot;
	bool added;
	int err;

	if (name)
		snprintf(func, len, "syscall %s", name);
	else
		snprintf(func, len, "syscall %d", nr);
	slot = u64map__get(s->sys_pcs, key);
	if (!slot) {
		uint64_t pc;

		err = new_pc(s, func, &pc);
		if (err)
			return err;
		slot = u64map__put(s->sys_pcs, key, &added);
		if (!slot)
			return -ENOMEM;
		*slot = pc;
	}
	*f = (struct gt_frame){ .pc = *slot, .func = func, .file = "kernel", .line = (uint64_t)nr };
	return 0;
}

uint64_t idents__stack(struct idents *s, uint32_t p, uint32_t ident, int nr)
{
	uint64_t key, stk;
	struct gt_frame frames[1 + IDENT_FRAMES];
	char func[64];
	size_t n = 0;
	int err;

	if (nr < 0 || nr > 0xfffd)
		nr = -1;
	key = ((uint64_t)ident + 1) << 16 | (uint64_t)(nr + 2);
	/* Asked for again when not in the writer's current generation (format/dedup.h). */
	if (u64cache__get(s->stacks, key, &stk) && gt_tables__current(s->w, true, stk))
		return stk;

	if (nr >= 0) {
		err = idents__syscall_frame(s, nr, func, sizeof(func), &frames[n++]);
		if (err) {
			errno = -err;
			return 0;
		}
	}
	n += idents__frames(s, ident, &frames[n]);
	stk = gt_tables__stack(s->w, p, frames, n);
	if (!stk)
		return 0;
	if (u64cache__put(s->stacks, key, stk)) {
		errno = ENOMEM;
		return 0;
	}
	return stk;
}

uint64_t idents__create_stack(struct idents *s, uint32_t p, uint32_t ident)
{
	struct prog *pr = &s->progs[ident_of(s, ident)->prog];
	struct gt_frame f = { .pc = pr->pc, .func = pr->func, .file = "program" };

	if (!pr->create_stk || !gt_tables__current(s->w, true, pr->create_stk))
		pr->create_stk = gt_tables__stack(s->w, p, &f, 1);
	return pr->create_stk;
}

uint64_t idents__special(struct idents *s, uint32_t p, enum ident_special k)
{
	struct gt_frame f;
	int err;

	if (s->special[k] && gt_tables__current(s->w, true, s->special[k]))
		return s->special[k];
	err = idents__special_frame(s, k, &f);
	if (err) {
		errno = -err;
		return 0;
	}
	s->special[k] = gt_tables__stack(s->w, p, &f, 1);
	return s->special[k];
}

void idents__free(struct idents *s)
{
	if (!s)
		return;
	free(s->idents);
	free(s->unheld);
	u64map__free(s->slot_of);
	free(s->progs);
	u64map__free(s->by_key);
	u64map__free(s->by_prog);
	pcclaims__free(s->pcs);
	u64cache__free(s->stacks);
	u64map__free(s->sys_pcs);
	free(s);
}
