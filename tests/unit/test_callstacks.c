/* test_callstacks.c - raw stacks to trace stacks: frame order (kernel, syscall, user, identity),
 * trimming of deep stacks at the root end within Go's limits, deduplication, synthetic PCs, the
 * walks the BPF cache names by slot, truncation marks, interrupt stacks and exact pcs, and Go's
 * top frames. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/reader.h"
#include "format/go119/tables.h"
#include "tests/unit/test_sym_fixture.h"
#include "user/stacks/callstacks.h"

#define NR_GETPPID 110
/* Frames a test stack has at most. */
#define GATHER_TEST_MAX 64

static struct symfix fix;
static char path[64];
static int fd = -1;
static struct gt_writer *w;
static struct gt_tables tabs;
static struct idents *ids;
static struct callstacks *cs;
static struct gt_trace *tr;
static uint32_t ident;
static uint64_t ts = 1000;
static struct {
	struct lx_stack h;
	uint64_t pc[LX_STACK_KERN_MAX + LX_STACK_USER_MAX];
} raw;

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/lxtrace-cstest-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	w = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts), .fd = fd,
						       .nprocs = 1, .frequency = 1000000000 });
	cr_assert_not_null(w);
	gt_tables__writer(&tabs, w);
	ids = idents__new(&tabs);
	cr_assert_not_null(ids);
	cs = callstacks__new(&tabs, ids, NULL, 0);
	cr_assert_not_null(cs);
	symfix__start(&fix, "hot");
	cr_assert_eq(idents__get(ids, (uint32_t)fix.pid, "hot", NULL, &ident), 0);
}

static void teardown(void)
{
	gt_trace__free(tr);
	tr = NULL;
	callstacks__free(cs);
	idents__free(ids);
	gt_writer__free(w);
	symfix__stop(&fix);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

TestSuite(callstacks, .init = setup, .fini = teardown, .timeout = 60);

/* A raw stack of process f of nk kernel addresses and nu user addresses alternating between
 * two return addresses of the fixture (each expands to an inlined chain). */
static const struct lx_stack *make_raw_of(const struct symfix *f, unsigned nk, unsigned nu)
{
	uint64_t a = symfix__addr(f, "probe_ret"), b = symfix__addr(f, "middle_ret");

	raw.h = (struct lx_stack){ .tid = (uint32_t)f->pid, .nkern = nk, .nuser = nu };
	for (unsigned i = 0; i < nk; i++)
		raw.pc[i] = 0xffffffff81000000ull + i * 0x1000;
	for (unsigned i = 0; i < nu; i++)
		raw.pc[nk + i] = i % 2 ? b : a;
	return &raw.h;
}

static const struct lx_stack *make_raw(unsigned nk, unsigned nu)
{
	return make_raw_of(&fix, nk, nu);
}

/* The stack as the file holds it: written with a CPU sample, flushed and decoded. */
static const struct gt_stack *decoded(uint64_t stk)
{
	char why[256];
	const struct gt_event *ev;

	cr_assert_eq(gt_writer__cpu_sample(w, 0, ts++, 0, 0, stk), 0);
	cr_assert_eq(gt_writer__flush(w), 0);
	gt_trace__free(tr);
	cr_assert_eq(gt_trace__load(path, &tr, why, sizeof(why)), 0, "%s", why);
	ev = gt_trace__events(tr);
	for (size_t i = gt_trace__nevents(tr); i-- > 0;)
		if (ev[i].type == GT_EV_CPU_SAMPLE && ev[i].args[3] == stk)
			return ev[i].stack;
	cr_assert_fail("stack %llu not in the file", (unsigned long long)stk);
	return NULL;
}

Test(callstacks, kernel_then_syscall_then_user_then_identity)
{
	uint64_t stk = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, make_raw(3, 2), NULL);
	const struct gt_stack *s;
	const char *name = idents__name(ids, ident);

	cr_assert_neq(stk, 0);
	s = decoded(stk);
	cr_assert_geq(s->n, 3 + 1 + 2 + 2);
	for (int i = 0; i < 3; i++)
		cr_expect_str_eq(s->frames[i].file, "[kernel]", "frame %d", i);
	cr_expect_str_eq(s->frames[3].func, "syscall getppid");
	cr_expect(strstr(s->frames[4].file, "hot.c"), "user frames follow: %s", s->frames[4].file);
	/* The identity: the process, then the program outermost. */
	cr_expect_str_eq(s->frames[s->n - 2].func, name);
	cr_expect_str_eq(s->frames[s->n - 1].func, "hot");
	/* Synthetic frames are out of every real address range. */
	cr_expect_eq(s->frames[3].pc & IDENT_PC_SYNTHETIC, IDENT_PC_SYNTHETIC);
	cr_expect_eq(s->frames[s->n - 1].pc & IDENT_PC_SYNTHETIC, IDENT_PC_SYNTHETIC);
	cr_expect_lt(s->frames[s->n - 1].pc, 1ull << 61);
}

Test(callstacks, syscall_is_the_leaf_without_kernel_frames)
{
	const struct gt_stack *s = decoded(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID,
							   make_raw(0, 2), NULL));

	cr_expect_str_eq(s->frames[0].func, "syscall getppid");
	cr_expect(strstr(s->frames[1].file, "hot.c"), "user frames follow: %s", s->frames[1].file);
}

Test(callstacks, deep_stacks_lose_root_frames_keep_leaf_and_identity)
{
	struct callstacks_stats st;
	const struct gt_stack *s;
	uint64_t stk;

	stk = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID,
			      make_raw(LX_STACK_KERN_MAX, LX_STACK_USER_MAX), NULL);
	cr_assert_neq(stk, 0, "the writer refused the stack: %s", strerror(errno));
	s = decoded(stk);
	cr_expect_leq(s->n, CALLSTACKS_MAX_FRAMES);
	cr_expect_eq(s->frames[0].pc, raw.pc[0], "the leaf is kept");
	cr_expect_str_eq(s->frames[s->n - 1].func, "hot");
	cr_expect_str_eq(s->frames[s->n - 2].func, idents__name(ids, ident));
	cr_expect(!strncmp(s->frames[s->n - 3].func, "[trimmed ", 9), "no trim mark: %s",
		  s->frames[s->n - 3].func);
	callstacks__stats(cs, &st);
	cr_expect_eq(st.trimmed, 1);
}

Test(callstacks, one_symbolization_per_distinct_stack)
{
	struct callstacks_stats st;
	uint64_t a, b, c;

	a = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(2, 2), NULL);
	b = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(2, 2), NULL);
	c = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, make_raw(2, 2), NULL);
	cr_assert(a && b && c);
	cr_expect_eq(a, b);
	cr_expect_neq(a, c, "the syscall is part of the stack");
	callstacks__stats(cs, &st);
	cr_expect_eq(st.lookups, 3);
	cr_expect_eq(st.distinct, 2);
}

Test(callstacks, idle_stacks_end_in_idle)
{
	const struct gt_stack *s = decoded(callstacks__get(cs, 0, CALLSTACKS_IDLE, 0, -1, make_raw(2, 0), NULL));

	cr_expect_eq(s->n, 3);
	cr_expect_str_eq(s->frames[2].func, "[idle]");
}

Test(callstacks, an_exited_process_is_forgotten)
{
	struct callstacks_stats st;
	uint64_t a, b;

	callstacks__note(cs, (uint32_t)fix.pid);
	a = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(0, 2), NULL);
	callstacks__stats(cs, &st);
	cr_expect_eq(st.live_images, 1);
	callstacks__exit(cs, (uint32_t)fix.pid, callstacks__image(cs, (uint32_t)fix.pid));
	callstacks__stats(cs, &st);
	cr_expect_eq(st.live_images, 0, "the image outlived its process");
	/* A record that still comes (late) notes the pid anew; here it is still there. */
	b = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, make_raw(0, 2), NULL);
	cr_expect_neq(b, 0);
	cr_expect_neq(a, 0);
}

/* Distinct stacks of 60 user frames (~63 key words each) until the memory has dropped `gens`
 * generations; hot (if not 0) is looked up again after every stack. Returns how many. */
static unsigned fill_memory(uint64_t gens, uint64_t hot)
{
	struct callstacks_stats st;
	unsigned n = 0;

	do {
		make_raw(1, 60);
		raw.pc[0] = 0xffffffff82000000ull + n++ * 0x10;
		cr_assert_neq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL), 0);
		if (hot)
			cr_assert_eq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(2, 2), NULL), hot);
		callstacks__stats(cs, &st);
	} while (st.cache_clears < gens && n < 100000);
	cr_assert_eq(st.cache_clears, gens, "memory never emptied after %u stacks", n);
	return n;
}

Test(callstacks, the_memory_of_stacks_is_bounded_and_keeps_ids)
{
	struct callstacks_stats before, after;
	uint64_t first, again;

	first = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(2, 2), NULL);
	cr_expect_gt(fill_memory(2, 0), 1000);
	/* Two generations later it is forgotten: built again, with the id it had. */
	callstacks__stats(cs, &before);
	again = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(2, 2), NULL);
	callstacks__stats(cs, &after);
	cr_expect_eq(after.distinct, before.distinct + 1, "not built again");
	cr_expect_eq(again, first, "a stack built again after it was forgotten got a new id");
}

Test(callstacks, a_stack_in_use_stays_in_the_memory)
{
	struct callstacks_stats st;
	uint64_t hot = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(2, 2), NULL);
	unsigned n = fill_memory(3, hot);

	callstacks__stats(cs, &st);
	cr_expect_eq(st.distinct, 1 + n, "a stack in use was built again");
}

/* A walk the BPF cache stored (LX_USTACK_STORE in slot 2) and a later record of the same thread
 * naming that slot (LX_USTACK_HIT, no user frames) give the same trace stack. */
Test(callstacks, cache_hit_repeats_the_stored_walk)
{
	const struct lx_stack *st = make_raw(0, 2);
	uint64_t stored, hit;

	raw.h.uflags = LX_USTACK_STORE;
	raw.h.uslot = 2;
	callstacks__see(cs, st);
	stored = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, st, NULL);
	raw.h = (struct lx_stack){ .tid = (uint32_t)fix.pid, .uflags = LX_USTACK_HIT,
				   .uslot = 2 };
	callstacks__see(cs, &raw.h);
	hit = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL);
	cr_assert_neq(stored, 0);
	cr_expect_eq(hit, stored, "a hit must repeat the stored walk's stack");
}

/* A record of the fixture's thread naming its walk in slot 3. */
static const struct lx_stack *hit_record(void)
{
	raw.h = (struct lx_stack){ .tid = (uint32_t)fix.pid, .uflags = LX_USTACK_HIT,
				   .uslot = 3 };
	return &raw.h;
}

/* Stores a walk of two user frames in slot 3 and returns hit_record(), which the caller may
 * give kernel frames. */
static const struct lx_stack *stored_then_hit(void)
{
	const struct lx_stack *st = make_raw(0, 2);

	raw.h.uflags = LX_USTACK_STORE;
	raw.h.uslot = 3;
	callstacks__see(cs, st);
	cr_assert_neq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, st, NULL), 0);
	return hit_record();
}

/* The answer a hit remembers is for its identity, syscall and kernel frames alone: each other
 * one gets its own stack, and the first comes back the same. */
Test(callstacks, repeated_hits_answer_per_identity_syscall_and_kernel_frames)
{
	const struct lx_stack *hit = stored_then_hit();
	uint64_t a, b, c, d, e;

	a = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, hit, NULL);
	b = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, hit, NULL);
	c = callstacks__get(cs, 0, CALLSTACKS_IDLE, (uint32_t)fix.pid, -1, hit, NULL);
	raw.h.nkern = 1;
	raw.pc[0] = 0xffffffff81000000ull;
	d = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, hit, NULL);
	raw.h.nkern = 0;
	e = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, hit, NULL);
	cr_assert(a && b && c && d);
	cr_expect(a != b && a != c && a != d && b != c && b != d && c != d);
	cr_expect_eq(e, a);
}

/* A hit answers as the memory of stacks would: a stack forgotten with its generation is built
 * again (same id), one that only grew older is not. */
Test(callstacks, repeated_hits_follow_the_memory_of_stacks)
{
	const struct lx_stack *hit = stored_then_hit();
	struct callstacks_stats before, after;
	uint64_t a, b;

	a = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, hit, NULL);
	fill_memory(1, 0);
	callstacks__stats(cs, &before);
	cr_assert_eq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, hit_record(), NULL), a);
	callstacks__stats(cs, &after);
	cr_expect_eq(after.distinct, before.distinct, "an older stack was built again");
	fill_memory(3, 0);
	callstacks__stats(cs, &before);
	b = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, hit_record(), NULL);
	callstacks__stats(cs, &after);
	cr_expect_eq(after.distinct, before.distinct + 1, "a forgotten stack was answered");
	cr_expect_eq(b, a);
}

/* A hit whose stored walk never arrived (its record was lost), or whose thread died, is a
 * truncated stack: never another walk's frames. */
Test(callstacks, hit_without_its_walk_is_truncated)
{
	struct callstacks_stats st;
	const struct gt_stack *s;

	raw.h = (struct lx_stack){ .tid = (uint32_t)fix.pid, .uflags = LX_USTACK_STORE, .uslot = 1,
				   .nuser = 2 };
	raw.pc[0] = symfix__addr(&fix, "probe_ret");
	raw.pc[1] = symfix__addr(&fix, "middle_ret");
	callstacks__see(cs, &raw.h);
	callstacks__see(cs, &raw.h);	/* the same slot again: one walk kept */
	callstacks__stats(cs, &st);
	cr_assert_eq(st.walks, 1);
	callstacks__forget_thread(cs, (uint32_t)fix.pid);
	callstacks__stats(cs, &st);
	cr_assert_eq(st.walks, 0, "a dead thread's walks are not kept");
	raw.h = (struct lx_stack){ .tid = (uint32_t)fix.pid, .uflags = LX_USTACK_HIT, .uslot = 1 };
	s = decoded(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL));
	cr_assert_eq(s->n, 3, "the mark, the process and the program");
	cr_expect_str_eq(s->frames[0].func, "[truncated]");
}

/* A walk that stopped at a frame that cannot be code ends in the mark; a wakeup raised by an
 * interrupt is "[irq]" under its kernel frames, without the thread's user frames. */
Test(callstacks, truncation_mark_and_interrupt_identity)
{
	const struct gt_stack *s;

	make_raw(0, 2);
	raw.h.uflags = LX_USTACK_TRUNCATED;
	s = decoded(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL));
	cr_assert_geq(s->n, 5);
	cr_expect_str_eq(s->frames[s->n - 3].func, "[truncated]", "above the process and program");
	make_raw(2, 0);
	raw.h.uflags = LX_USTACK_IRQ;
	s = decoded(callstacks__get(cs, 0, 0, 0, -1, &raw.h, NULL));
	cr_assert_eq(s->n, 3);
	cr_expect_str_eq(s->frames[0].file, "[kernel]");
	cr_expect_str_eq(s->frames[2].func, "[irq]");
}

/* The leaf, and a frame a signal interrupted, are where the thread was (LX_PC_EXACT), not a
 * return address: resolved at the address itself. */
Test(callstacks, exact_pcs_are_not_return_addresses)
{
	uint64_t a = symfix__addr(&fix, "probe_ret");
	const struct gt_stack *s;

	raw.h = (struct lx_stack){ .tid = (uint32_t)fix.pid, .nuser = 2 };
	raw.pc[0] = a | LX_PC_EXACT;
	raw.pc[1] = a | LX_PC_EXACT;
	s = decoded(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL));
	cr_assert_geq(s->n, 2);
	cr_expect_eq(s->frames[0].pc, a, "an exact pc is looked up as is, not one byte back");
}

/* The stacks of identities are cached in bounded memory (idents.c): one forgotten after
 * hundreds of thousands of others is built again with the same frames, and the id handed out
 * first still reads as those frames. */
Test(callstacks, an_identity_stack_forgotten_comes_back_the_same)
{
	uint64_t first = idents__stack(ids, 0, ident, NR_GETPPID), again;
	const struct gt_stack *s;
	char func[3][64];
	uint32_t other;

	cr_assert_neq(first, 0);
	s = decoded(first);
	cr_assert_eq(s->n, 3);
	for (int i = 0; i < 3; i++)
		snprintf(func[i], sizeof(func[i]), "%s", s->frames[i].func);
	for (uint32_t pid = 1; pid <= 3 * 65536; pid++) {
		cr_assert_eq(idents__get(ids, 1000000 + pid, "churn", NULL, &other), 0);
		cr_assert_neq(idents__stack(ids, 0, other, NR_GETPPID), 0);
	}
	again = idents__stack(ids, 0, ident, NR_GETPPID);
	cr_assert_neq(again, 0);
	for (uint64_t stk = first;; stk = again) {
		s = decoded(stk);
		cr_assert_eq(s->n, 3);
		for (int i = 0; i < 3; i++)
			cr_expect_str_eq(s->frames[i].func, func[i], "stack %llu frame %d",
					 (unsigned long long)stk, i);
		if (stk == again)
			break;
	}
}

/* The address of symbol name in the ELF file at file (.symtab). */
static uint64_t elf_symbol(const char *file, const char *name)
{
	int efd = open(file, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	Elf *elf;

	cr_assert_geq(efd, 0, "%s: %s", file, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(efd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	while (!addr && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !d)
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize && !addr; i++)
			if (gelf_getsym(d, (int)i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), name))
				addr = sym.st_value;
	}
	elf_end(elf);
	close(efd);
	cr_assert_neq(addr, 0, "no symbol %s in %s", name, file);
	return addr;
}

/* A new M's g0 stack begins at runtime.mstart, but its frame pointer is its creator's (clone
 * keeps the registers): the words a walk finds past mstart are the creator's frames. The
 * stack ends at mstart, whole: neither those frames nor a [truncated] mark follow. */
Test(callstacks, go_stacks_end_at_mstart)
{
	static const char *const walk[] = { "runtime.schedule", "runtime.mstart1",
					    "runtime.mstart0", "runtime.mstart.abi0",
					    "runtime.systemstack.abi0", "runtime.mstart1" };
	struct symfix go = { 0 };
	const struct gt_stack *s;
	uint32_t goid;
	char bin[256];

	symfix__path("spin-go1.19", bin, sizeof(bin));
	symfix__start_path(&go, bin);
	cr_assert_eq(idents__get(ids, (uint32_t)go.pid, "spin-go1.19", NULL, &goid), 0);
	raw.h = (struct lx_stack){ .tid = (uint32_t)go.pid, .nuser = 6,
				   .uflags = LX_USTACK_TRUNCATED };
	for (unsigned i = 0; i < raw.h.nuser; i++)
		raw.pc[i] = elf_symbol(bin, walk[i]) + 5;
	s = decoded(callstacks__get(cs, 0, goid, (uint32_t)go.pid, -1, &raw.h, NULL));
	symfix__stop(&go);
	cr_assert_eq(s->n, 4 + 2, "the four frames to mstart and the identity, not %zu frames",
		     (size_t)s->n);
	cr_expect_str_eq(s->frames[3].func, "runtime.mstart.abi0");
}

/* A walk BPF went on with by frame pointers where the ring had no room for its copy of the
 * stack is counted, and where it was cut ends in a mark of its own: another stack than the
 * same frames cut at a frame that is no code. */
Test(callstacks, walk_cut_for_want_of_a_copy_is_marked_and_counted)
{
	struct callstacks_stats st;
	const struct gt_stack *s;
	uint64_t cut, no_room;

	make_raw(0, 2);
	raw.h.uflags = LX_USTACK_TRUNCATED;
	cut = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL);
	raw.h.uslot = LX_USLOT_NO_ROOM;
	no_room = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL);
	cr_assert_neq(no_room, cut);
	s = decoded(no_room);
	cr_assert_geq(s->n, 5);
	cr_expect_str_eq(s->frames[s->n - 3].func, "[truncated: no room for a copy]");
	raw.h.uflags = 0;
	s = decoded(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL));
	cr_expect_str_neq(s->frames[s->n - 3].func, "[truncated: no room for a copy]", "not cut");
	callstacks__stats(cs, &st);
	cr_expect_eq(st.copies_refused, 2);
}

/* Every stack handed out cut short is counted, each time (the summary's "stacks cut:"): a walk
 * cut in BPF, the same one again from the memory of stacks, and a kernel's frame-pointer walk
 * (the compat programs') that went on past the mappings, cut there; a whole one is not. */
Test(callstacks, every_stack_handed_out_cut_is_counted)
{
	struct callstacks_stats st;
	const struct gt_stack *s;

	make_raw(0, 2);
	raw.h.uflags = LX_USTACK_TRUNCATED;
	(void)callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL);
	(void)callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL);
	make_raw(0, 3);
	raw.pc[2] = 0x200000;	/* in no mapping */
	raw.h.uflags = LX_USTACK_FP | LX_USTACK_KWALK;
	s = decoded(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL));
	cr_assert_geq(s->n, 3);
	cr_expect_str_eq(s->frames[s->n - 3].func, "[truncated]");
	make_raw(0, 2);
	(void)callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL);
	callstacks__stats(cs, &st);
	cr_expect_eq(st.cut, 3);
}

/* A stack kept to name its JIT frames at the end (an address in no mapping: JIT code whose
 * perf map may come later) is dropped when its process exits without a perf map, which can no
 * longer come; with one, it stays to be named. */
Test(callstacks, late_jit_stacks_go_with_a_process_that_left_no_map)
{
	struct callstacks_stats st;
	char map[64];
	int mfd;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)fix.pid);
	callstacks__note(cs, (uint32_t)fix.pid);
	make_raw(0, 1);
	raw.pc[0] = 0x100000010ull;
	cr_assert_neq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL), 0);
	callstacks__stats(cs, &st);
	cr_assert_eq(st.late_jit_kept, 1);
	mfd = open(map, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(mfd, 0);
	close(mfd);
	callstacks__exit(cs, (uint32_t)fix.pid, callstacks__image(cs, (uint32_t)fix.pid));
	callstacks__stats(cs, &st);
	cr_expect_eq(st.late_jit_dropped, 0, "a process with a perf map keeps its stacks");
	unlink(map);
	callstacks__note(cs, (uint32_t)fix.pid);
	raw.pc[0] = 0x100000020ull;
	cr_assert_neq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL), 0);
	callstacks__exit(cs, (uint32_t)fix.pid, callstacks__image(cs, (uint32_t)fix.pid));
	callstacks__stats(cs, &st);
	cr_expect_eq(st.late_jit_kept, 2);
	cr_expect_eq(st.late_jit_dropped, 2, "both stacks of the pid dropped once it left no map");
	/* What was dropped makes room: the next stack is kept in its place. */
	callstacks__note(cs, (uint32_t)fix.pid);
	raw.pc[0] = 0x100000030ull;
	cr_assert_neq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, &raw.h, NULL), 0);
	callstacks__stats(cs, &st);
	cr_expect_eq(st.late_jit_kept, 3);
	callstacks__finish(cs);
}

/* While the recorder is behind, a stack not met before is not symbolized: its identity under
 * one frame that says so, counted; one met before keeps its id (a lookup); once caught up,
 * stacks are symbolized again. An interrupt's stack, with no thread's identity, is shed too. */
Test(callstacks, stacks_shed_while_behind_are_marked_and_counted)
{
	uint64_t known = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(0, 2), NULL);
	struct callstacks_stats st;
	const struct gt_stack *s;
	uint64_t shed, again, irq;

	cr_assert_neq(known, 0);
	callstacks__shed(cs, false, true);
	cr_expect_eq(callstacks__get(cs, 0, ident, (uint32_t)fix.pid, -1, make_raw(0, 2), NULL),
		     known, "a stack met before keeps its id");
	shed = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, make_raw(1, 2), NULL);
	cr_assert_neq(shed, 0);
	raw.h.uflags = LX_USTACK_IRQ;
	irq = callstacks__get(cs, 0, 0, 0, -1, &raw.h, NULL);
	cr_assert_neq(irq, 0, "%s", strerror(errno));
	s = decoded(shed);
	cr_assert_eq(s->n, 3);
	cr_expect_str_eq(s->frames[0].func, "[not symbolized: the recorder was behind]");
	cr_expect_str_eq(s->frames[1].func, idents__name(ids, ident));
	cr_expect_str_eq(s->frames[2].func, "hot");
	s = decoded(irq);
	cr_assert_eq(s->n, 2);
	cr_expect_str_eq(s->frames[1].func, "[irq]");
	callstacks__stats(cs, &st);
	cr_expect_eq(st.shed, 2);
	cr_expect_eq(st.distinct, 1, "nothing symbolized while shedding");
	callstacks__shed(cs, false, false);
	again = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, make_raw(1, 2), NULL);
	cr_expect_neq(again, shed);
	cr_expect_str_eq(decoded(again)->frames[0].file, "[kernel]");
	callstacks__stats(cs, &st);
	cr_expect_eq(st.distinct, 2);
}

/* Two processes of one program, loaded at other addresses (ASLR): a stack of the second that
 * runs the code of a stack of the first is not symbolized again but takes the first one's
 * frames, their PCs included (one PC, one frame: the same code), so under the same identity
 * (a process that executed its program again keeps its pid and name) it is the same trace
 * stack, and under its own it differs in its identity frames only. */
Test(callstacks, one_binary_at_two_bases_is_named_once)
{
	struct symfix two = { 0 };
	struct callstacks_stats st;
	uint64_t first, again, own, pcs[GATHER_TEST_MAX];
	const struct gt_stack *s;
	uint32_t ident2;
	size_t n;

	symfix__start(&two, "hot");
	if (symfix__addr(&two, "probe_ret") == symfix__addr(&fix, "probe_ret")) {
		symfix__stop(&two);
		cr_skip_test("ASLR is off: both processes load the program at one address");
	}
	first = callstacks__get(cs, 0, ident, (uint32_t)fix.pid, NR_GETPPID, make_raw(0, 3), NULL);
	cr_assert_neq(first, 0);
	s = decoded(first);
	n = s->n;
	cr_assert_leq(n, GATHER_TEST_MAX);
	for (size_t i = 0; i < n; i++)
		pcs[i] = s->frames[i].pc;
	again = callstacks__get(cs, 0, ident, (uint32_t)two.pid, NR_GETPPID, make_raw_of(&two, 0, 3),
				NULL);
	cr_expect_eq(again, first, "the same code at other addresses is the same trace stack");
	callstacks__stats(cs, &st);
	cr_expect_eq(st.distinct, 2, "each image's stack is looked up");
	cr_expect_eq(st.shared, 1, "the second is named from the first, not symbolized");
	cr_assert_eq(idents__get(ids, (uint32_t)two.pid, "hot", NULL, &ident2), 0);
	own = callstacks__get(cs, 0, ident2, (uint32_t)two.pid, NR_GETPPID, make_raw_of(&two, 0, 3),
			      NULL);
	cr_assert_neq(own, 0);
	cr_expect_neq(own, first);
	s = decoded(own);
	cr_assert_eq(s->n, n);
	for (size_t i = 0; i + 2 < n; i++)
		cr_expect_eq(s->frames[i].pc, pcs[i], "frame %zu", i);
	cr_expect_str_eq(s->frames[n - 2].func, idents__name(ids, ident2));
	/* A stack of code the first did not run so is symbolized. */
	cr_assert_neq(callstacks__get(cs, 0, ident2, (uint32_t)two.pid, NR_GETPPID,
				      make_raw_of(&two, 0, 2), NULL), 0);
	callstacks__stats(cs, &st);
	cr_expect_eq(st.shared, 2);
	cr_expect_eq(st.distinct, 4);
	symfix__stop(&two);
}
