/* features.c - probes what the running kernel offers lxtrace's programs (features.h).
 *
 * Tracepoints and their arguments are read from the kernel's BTF: each tracepoint has a
 * typedef btf_trace_NAME, a pointer to the prototype its BPF programs see (a context pointer,
 * then the arguments), so an argument added in a later kernel shows as one more parameter.
 * Helpers are probed with libbpf_probe_bpf_helper, on the raw tracepoint type, whose helpers
 * are the tracing ones that tp_btf programs get too. The rest are a kfunc's presence in BTF
 * and one tiny program load (sleepable uprobes).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "user/capture/features.h"

struct row {
	const char *key;	/* its name in LXTRACE_MASK_FEATURES */
	const char *name;
	const char *needs;	/* the kernel version or config */
	const char *without;	/* what lxtrace does then; NULL: nothing loads without it */
	unsigned uses;		/* enum feature_use: the recordings that miss it */
};

static const struct row rows[FEAT_COUNT] = {
	[FEAT_BTF] = { "btf", "kernel BTF", "CONFIG_DEBUG_INFO_BTF", NULL, USE_ALWAYS },
	[FEAT_RINGBUF] = { "ringbuf", "BPF ring buffers", "kernel 5.8+", NULL, USE_ALWAYS },
	[FEAT_MODERN] = { "modern", "typed programs (tp_btf, task pt_regs, task storage)",
			  "kernel 5.15+", "user stacks: frame pointers only, the kernel's walk (code built "
			  "without them shows little more than its leaf)", USE_USER_STACKS },
	[FEAT_VMA_ITER] = { "vma_iter", "VMA iterator kfuncs", "kernel 6.7+",
			    "user stacks: mapping tables read from /proc at each change of a "
			    "process's code, a few ms late (the first stacks after an exec or "
			    "dlopen can stop at the new code)", USE_USER_STACKS },
	[FEAT_MMAP_TP] = { "mmap_tp", "mmap_lock tracepoints", "kernel 5.11+",
			   "symbols: a process's mappings are read from /proc at its exec, and "
			   "again when a stack misses them; user stacks inside an exec, once the "
			   "old image is gone, end at the leaf (marked truncated)", USE_USER_STACKS },
	[FEAT_MM_SEQ] = { "mm_seq", "mm_lock_seq seqcount", "kernel 6.13+",
			  "user stacks: a process's mapping table is rebuilt from all its VMAs "
			  "at each change of its code (a process mapping thousands of pieces of "
			  "code, as a JIT does, runs slower in the kernel)", USE_USER_STACKS },
	[FEAT_SWITCH_STATE] = { "switch_state", "prev_state of sched_switch", "kernel 5.18+",
				"switches: the state is read from the task at the tracepoint, "
				"where a wakeup racing the switch can leave it waking (shown as "
				"an unknown wait)", USE_ALWAYS },
	[FEAT_EXIT_GROUP] = { "exit_group", "group_dead of sched_process_exit", "kernel 6.16+",
			      "exits: a process's end is read from signal->live (of two threads "
			      "exiting at once both can be taken for its last)", USE_ALWAYS },
	[FEAT_RSS_TP] = { "rss_tp", "rss_stat tracepoint", "kernel 5.5+",
			  "memory: no heap counter for the target", USE_TARGET },
	[FEAT_SLEEPABLE_UPROBE] = { "sleepable_uprobe", "sleepable uprobes", "kernel 6.0+",
				    "annotations: a name or message not yet paged in reads empty "
				    "(flagged as unreadable)", USE_ANNOTATIONS },
	[FEAT_BPF_COOKIE] = { "bpf_cookie", "BPF cookies on uprobes", "kernel 5.15+",
			      "annotations: only of the processes -p names, as they run at the "
			      "start (libbpf attaches a file's USDT probes for every process only "
			      "with cookies)", USE_ANNOTATIONS },
	[FEAT_TASK_COPY] = { "task_copy", "another task's memory from a task iterator",
			     "kernel 5.18+", "threads asleep at the start: their kernel stack and "
			     "syscall, no user frames, until they wake", USE_USER_STACKS },
};

const char *features__name(enum feature which)
{
	return which < FEAT_COUNT ? rows[which].name : "?";
}

const char *features__needs(enum feature which)
{
	return which < FEAT_COUNT ? rows[which].needs : "?";
}

/* Whether struct mm_struct has a member mm_lock_seq (inside its anonymous structs) of type
 * seqcount_t. depth: how far anonymous members are followed down. */
static bool seqcount_member(const struct btf *vmlinux, const struct btf_type *t, int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(vmlinux, m->name_off);
		const struct btf_type *mt = btf__type_by_id(vmlinux, m->type);

		if (name && !strcmp(name, "mm_lock_seq"))
			return mt && btf_is_typedef(mt) &&
			       !strcmp(btf__name_by_offset(vmlinux, mt->name_off), "seqcount_t");
		if (depth && mt && (!name || !*name) && (btf_is_struct(mt) || btf_is_union(mt)) &&
		    seqcount_member(vmlinux, mt, depth - 1))
			return true;
	}
	return false;
}

static bool mm_seqcount(const struct btf *vmlinux)
{
	int id = btf__find_by_name_kind(vmlinux, "mm_struct", BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(vmlinux, id) : NULL;

	return t && seqcount_member(vmlinux, t, 3);
}

/* The number of arguments tracepoint name passes its programs, or -1 when the kernel has no
 * such tracepoint. */
static int tp_args(const struct btf *vmlinux, const char *name)
{
	char tname[128];
	const struct btf_type *t;
	int id;

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vmlinux, tname, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(vmlinux, id);
	if (t)
		t = btf__type_by_id(vmlinux, t->type);	/* the pointer */
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(vmlinux, t->type);	/* the prototype */
	if (!t || !btf_is_func_proto(t) || !btf_vlen(t))
		return -1;
	return btf_vlen(t) - 1;	/* the first parameter is the context */
}

static bool helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, id, NULL) == 1;
}

/* Whether the kernel knows helper name: an enumerator of its enum bpf_func_id. (Probing a
 * tracing program's helper needs a function to attach to, which libbpf's probes lack.) */
static bool btf_helper(const struct btf *vmlinux, const char *name)
{
	int id = btf__find_by_name_kind(vmlinux, "bpf_func_id", BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(vmlinux, id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(vmlinux, e->name_off), name))
			return true;
	return false;
}

/* The verifier refuses a sleepable program of a type that cannot sleep; kprobe programs can
 * when attached to uprobes since 6.0. */
static bool sleepable_uprobes(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_SLEEPABLE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* LXTRACE_MASK_FEATURES=key[,key...]: features taken for missing, so that the fallbacks older
 * kernels need run (and are tested) on a newer one (docs/testing.md). Only ever less than
 * the kernel has: a fallback is correct wherever its feature is there too. */
static void mask(struct features *f)
{
	const char *env = getenv("LXTRACE_MASK_FEATURES");

	while (env && *env) {
		size_t len = strcspn(env, ",");

		for (int i = 0; i < FEAT_COUNT; i++)
			if (strlen(rows[i].key) == len && !strncmp(env, rows[i].key, len))
				f->have[i] = false;
		env += len + (env[len] == ',');
	}
}

int features__probe(struct features *f)
{
	static const char *const sched[] = { "sched_switch", "sched_waking", "sched_wakeup",
					     "sched_wakeup_new", "sched_process_fork",
					     "sched_process_exec",
					     "sched_process_exit", "sys_enter", "sys_exit" };
	struct utsname u;
	struct btf *vmlinux;
	bool typed = true;

	memset(f, 0, sizeof(*f));
	f->thread_size = 16384;
	if (!uname(&u))
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	f->have[FEAT_RINGBUF] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	f->have[FEAT_SLEEPABLE_UPROBE] = sleepable_uprobes();
	f->have[FEAT_BPF_COOKIE] =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) == 1;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return -ENOENT;
	f->have[FEAT_BTF] = true;
	/* tp_btf needs each tracepoint described in BTF (5.5+). */
	for (size_t i = 0; i < sizeof(sched) / sizeof(sched[0]); i++)
		typed = typed && tp_args(vmlinux, sched[i]) >= 0;
	f->have[FEAT_MODERN] = typed && helper(BPF_FUNC_get_current_task_btf) &&
			       helper(BPF_FUNC_task_pt_regs) && helper(BPF_FUNC_task_storage_get) &&
			       libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	f->have[FEAT_VMA_ITER] =
		btf__find_by_name_kind(vmlinux, "bpf_iter_task_vma_new", BTF_KIND_FUNC) > 0;
	f->have[FEAT_MMAP_TP] = tp_args(vmlinux, "mmap_lock_released") >= 1;
	f->have[FEAT_SWITCH_STATE] = tp_args(vmlinux, "sched_switch") >= 4;
	f->have[FEAT_EXIT_GROUP] = tp_args(vmlinux, "sched_process_exit") >= 2;
	f->have[FEAT_RSS_TP] = tp_args(vmlinux, "rss_stat") >= 2;
	f->have[FEAT_TASK_COPY] = btf_helper(vmlinux, "BPF_FUNC_copy_from_user_task");
	f->have[FEAT_MM_SEQ] = mm_seqcount(vmlinux) && tp_args(vmlinux, "vm_unmapped_area") >= 2 &&
			       tp_args(vmlinux, "mmap_lock_acquire_returned") >= 3;
	/* KASAN doubles the kernel stack (KASAN_STACK_ORDER). */
	if (btf__find_by_name_kind(vmlinux, "kasan_cache", BTF_KIND_STRUCT) > 0)
		f->thread_size = 32768;
	btf__free(vmlinux);
	mask(f);
	return 0;
}

bool features__enough(const struct features *f, enum feature *missing)
{
	for (int i = 0; i < FEAT_COUNT; i++) {
		if (!rows[i].without && !f->have[i]) {
			if (missing)
				*missing = i;
			return false;
		}
	}
	return true;
}

bool features__cfi_stacks(const struct features *f)
{
	return f->have[FEAT_MODERN] && !f->modern_failed[0];
}

/* Whether lxtrace is without feature i here: not there, or (the modern programs) there but
 * refused at load. Features that matter only in a mode lxtrace is not in are not missed: the
 * mapping tables only for CFI walks, the tracepoint only without the iterator, the seqcount
 * only for tables the iterator builds. */
static bool misses(const struct features *f, int i)
{
	if (i == FEAT_MODERN)
		return !features__cfi_stacks(f);
	if (i == FEAT_VMA_ITER)
		return features__cfi_stacks(f) && !f->have[i];
	if (i == FEAT_MM_SEQ)
		return features__cfi_stacks(f) && f->have[FEAT_VMA_ITER] && !f->have[i];
	if (i == FEAT_MMAP_TP)
		return !f->have[FEAT_VMA_ITER] && !f->have[i];
	return !f->have[i];
}

/* Writes text wrapped at 79 columns, the first line after lead, the others after indent. */
static void wrap(FILE *out, const char *lead, const char *indent, const char *text)
{
	size_t col = strlen(lead);
	bool fresh = strspn(lead, " ") == col;	/* nothing on the line yet but blanks */

	fputs(lead, out);
	while (*text) {
		size_t word = strcspn(text, " ");

		if (!fresh && col + 1 + word > 79) {
			fprintf(out, "\n%s", indent);
			col = strlen(indent);
			fresh = true;
		}
		if (!fresh) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)word, text);
		col += word;
		fresh = false;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

void features__print_table(const struct features *f, FILE *out)
{
	fprintf(out, "kernel %s: what lxtrace's programs get here\n", f->release);
	fprintf(out, "  %-3s %-51s %s\n", "", "feature", "needs");
	for (int i = 0; i < FEAT_COUNT; i++) {
		bool miss = misses(f, i);

		fprintf(out, "  %-3s %-51s %s\n", f->have[i] && !miss ? "yes" : "no", rows[i].name,
			rows[i].needs);
		if (i == FEAT_MODERN && f->modern_failed[0])
			fprintf(out, "        (present, but refused: %s)\n", f->modern_failed);
		if (miss && rows[i].without)
			wrap(out, "        without:", "          ", rows[i].without);
		else if (!f->have[i] && !rows[i].without)
			fprintf(out, "        needed: lxtrace cannot record without it\n");
	}
}

int features__print_missing(const struct features *f, unsigned uses, const char *indent,
			    FILE *out)
{
	int n = 0;

	char text[512], more[80];

	snprintf(more, sizeof(more), "%*s", (int)strlen(indent) + 2, "");
	if ((uses & USE_ANNOTATIONS) && f->annotations_failed[0]) {
		snprintf(text, sizeof(text), "annotations: none, their programs were refused: %s",
			 f->annotations_failed);
		wrap(out, indent, more, text);
		n++;
	}
	for (int i = 0; i < FEAT_COUNT; i++) {
		if (!rows[i].without || !(rows[i].uses & uses) || !misses(f, i))
			continue;
		if (i == FEAT_MODERN && f->modern_failed[0])
			snprintf(text, sizeof(text), "%s; the typed programs were refused: %s",
				 rows[i].without, f->modern_failed);
		else
			snprintf(text, sizeof(text), "%s; %s: %s", rows[i].without, rows[i].name,
				 rows[i].needs);
		wrap(out, indent, more, text);
		n++;
	}
	return n;
}
