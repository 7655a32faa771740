/* capture.c - loads the BPF programs, reads one ring buffer per CPU and merges the rings into
 * one stream in time order.
 *
 * Why per-CPU rings: a BPF ring buffer takes a spinlock on every reserve; one ring shared by
 * all CPUs makes every event of a busy CPU bounce that lock's cache line with the others (a
 * getppid loop on each of two CPUs, every syscall recorded: 6-7x slower with a shared ring, 2x
 * with per-CPU rings; see docs/record.md).
 *
 * Why polling: programs submit with BPF_RB_NO_WAKEUP, because waking the reader on each
 * record costs more than the record itself. The reader wakes every POLL_MS, or earlier when a
 * record takes its ring past half full and forces a wakeup.
 *
 * Ordering: each ring is in time order on its own (save a record written by an interrupt
 * nested in a program run, which the staging insertion puts back in place). The reader copies
 * each ring's records into that CPU's staging queue and delivers, by a k-way merge, those no
 * later than the watermark: the oldest of the rings' "no record older than this can still
 * come", which for a ring is the newest ts read from it, or now - WINDOW_NS for a quiet ring
 * (a quiet CPU writes nothing, so its newest ts says nothing). A record written later than
 * that anyway is delivered late and counted as out of order.
 *
 * Syscall entries (--syscalls=all) come in chunks that each CPU stages in BPF and sends before
 * any other record of its own (lxtrace.h); they are unpacked here into one record each. A CPU
 * whose chunk has waited STALE_NS is made to send it by running flush_cpu there.
 *
 * Losses: a program that finds its ring full counts the record in a per-CPU counter. Each
 * round reads the counters and queues the increase as a loss marker, stamped with the time of
 * the read, into that CPU's stream, so the consumer learns of it in order.
 *
 * Annotations (include/lxtrace/annotate.h) come from a second BPF object, annotate.bpf.c,
 * loaded only when asked for and given the same ring, loss and syscall-stage maps, so its
 * records merge like the others, and the same target constants and `targets` map, so in a target
 * mode it drops the probe hits of untraced threads as the scheduler's programs do. They are larger than a staging slot and rare next to scheduler
 * records (each is a uprobe hit, half a microsecond or more): a slot holds a heap copy of such
 * a record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "user/capture/capture.h"
#include "annotate.skel.h"
#include "lxtrace.skel.h"

#define POLL_MS 4
#define WINDOW_NS (10 * 1000 * 1000ULL)
/* A CPU's staged syscall entries older than this are flushed by the reader: well inside the
 * window, so they still arrive in order. */
#define STALE_NS (2 * 1000 * 1000ULL)
#define STAGE_MIN_SLOTS 4096
#define MAX_LINKS 16
/* Processes traced at once in LX_TARGET_PIDS mode (a build with make -j of a large tree stays
 * well below); the rss throttle's table is an LRU of the same size. */
#define MAX_TARGETS 16384

struct slot {
	union {
		struct lx_rec h;
		struct lx_switch sw;
		struct lx_wakeup wk;
		struct lx_fork fork;
		struct lx_exec exec;
		struct lx_syscall sys;
		struct lx_rss rss;
		struct {
			struct lx_rec h;
			void *copy;	/* malloc'd, owned by the slot */
		} big;		/* a record larger than rec: size > sizeof(rec) */
	} rec;
	uint32_t size;		/* bytes of the record, or 0 for a loss marker */
	uint32_t pad;
	uint64_t lost;		/* a loss marker's count */
};

/* One CPU's records read from its ring and not yet delivered, oldest first: a circular queue
 * whose capacity is a power of two. */
struct stage {
	struct capture *c;
	struct slot *slots;
	size_t cap, head, len;
	uint64_t newest;	/* largest ts read from the ring */
	uint64_t lost_seen;	/* the CPU's loss counter at the last read */
	uint32_t cpu;
	int ring_fd;
};

struct capture {
	struct capture_opts opts;
	struct lxtrace *skel;
	struct annotate *ann;		/* NULL unless opts.annotations */
	struct bpf_link **usdt_links;
	size_t n_usdt_links, cap_usdt_links;
	struct ring_buffer *rb;
	struct bpf_link **links;	/* MAX_LINKS + one sampling event per CPU */
	unsigned nlinks;
	struct stage *stages;
	uint32_t ncpus;
	uint32_t *heap;		/* CPUs with staged records, by their oldest ts */
	size_t heap_len;
	uint64_t *lost_vals;	/* one per possible CPU, for the per-CPU lookup */
	char *stage_vals;	/* the BPF side's staged syscall chunks, one per possible CPU */
	size_t stage_stride;
	uint64_t last_ts;
	struct capture_stats stats;
};

/* tp_btf needs the kernel's BTF to describe the tracepoint (btf_trace_<name>, since 5.5).
 * Not libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACING): libbpf 1.1 recognises support by a
 * verifier message that kernel 6.18 words differently, and answers no. */
static bool have_tp_btf(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool ok;

	if (!vmlinux)
		return false;
	ok = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) > 0;
	btf__free(vmlinux);
	return ok;
}

/* Keeps one program of each tp_btf/raw_tp pair, the sys_enter pair only when asked, and the
 * rss_stat pair only for a target (system-wide, one memory counter would mean nothing). */
static void choose_programs(struct capture *c)
{
	struct lxtrace *s = c->skel;
	const struct {
		struct bpf_program *btf, *raw;
		bool on;
	} pairs[] = {
		{ s->progs.btf_switch, s->progs.raw_switch, true },
		{ s->progs.btf_waking, s->progs.raw_waking, true },
		{ s->progs.btf_wakeup_new, s->progs.raw_wakeup_new, true },
		{ s->progs.btf_fork, s->progs.raw_fork, true },
		{ s->progs.btf_exec, s->progs.raw_exec, true },
		{ s->progs.btf_exit, s->progs.raw_exit, true },
		{ s->progs.btf_sys_enter, s->progs.raw_sys_enter, c->opts.syscalls },
		{ s->progs.btf_rss, s->progs.raw_rss, c->opts.target_mode != LX_TARGET_ALL },
	};
	const struct capture_opts *o = &c->opts;
	bool btf = have_tp_btf();

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		bool on = pairs[i].on;

		bpf_program__set_autoload(pairs[i].btf, on && btf);
		bpf_program__set_autoload(pairs[i].raw, on && !btf);
	}
	bpf_program__set_autoload(s->progs.flush_cpu, c->opts.syscalls);
	bpf_program__set_autoload(s->progs.cpu_sample, o->sample_hz > 0);
	s->rodata->stage_syscalls = o->syscalls;
	s->rodata->stack_kern = o->stack_kern;
	s->rodata->stack_user = o->stack_user;
	s->rodata->sample_idle = o->sample_idle;
	/* Stacks are symbolized against each process's mappings, noted when the reader sees it. */
	s->rodata->wake_on_process = o->sample_hz || o->stack_kern || o->stack_user;
}

static size_t ring_size(size_t want)
{
	size_t sz = sysconf(_SC_PAGESIZE);

	while (sz < want)
		sz <<= 1;
	return sz;
}

static int stage_grow(struct stage *s)
{
	size_t cap = s->cap ? s->cap * 2 : STAGE_MIN_SLOTS;
	struct slot *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->len; i++)
		slots[i] = s->slots[(s->head + i) & (s->cap - 1)];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	s->head = 0;
	return 0;
}

/* A free slot at ts's place in the queue. Records come nearly sorted, so the search from the
 * tail stops at once but for a record that a nested program run wrote ahead of its elder. */
static struct slot *stage_insert(struct stage *s, uint64_t ts)
{
	size_t mask, i;

	if (s->len == s->cap && stage_grow(s))
		return NULL;
	mask = s->cap - 1;
	for (i = s->len; i > 0; i--) {
		struct slot *prev = &s->slots[(s->head + i - 1) & mask];

		if (prev->rec.h.ts <= ts)
			break;
		s->slots[(s->head + i) & mask] = *prev;
	}
	s->len++;
	return &s->slots[(s->head + i) & mask];
}

/* Unpacks a chunk of syscall entries into one LX_REC_SYSCALL each, room for all of them made
 * first. An entry no older than the queue's last record is appended without a search; an older
 * one (a program nested in sys_enter sent its record ahead of the chunk) is put in its place. */
static int stage_syscalls(struct stage *s, const struct lx_syscalls *r, size_t size)
{
	size_t mask;

	if (size < offsetof(struct lx_syscalls, e) || r->n > LX_SYSCALLS_MAX ||
	    size != offsetof(struct lx_syscalls, e) + r->n * sizeof(r->e[0]))
		return -EPROTO;
	while (s->cap - s->len < r->n)
		if (stage_grow(s))
			return -ENOMEM;
	mask = s->cap - 1;
	for (uint32_t i = 0; i < r->n; i++) {
		uint64_t ts = r->h.ts + r->e[i].dt;
		uint32_t nr = r->e[i].tid_nr & ((1u << LX_SYSENT_NR_BITS) - 1);
		struct slot *slot;

		if (!s->len || s->slots[(s->head + s->len - 1) & mask].rec.h.ts <= ts)
			slot = &s->slots[(s->head + s->len++) & mask];
		else
			slot = stage_insert(s, ts);
		slot->rec.sys = (struct lx_syscall){
			.h = { .ts = ts, .tid = r->e[i].tid_nr >> LX_SYSENT_NR_BITS, .cpu = r->h.cpu,
			       .type = LX_REC_SYSCALL },
			.nr = nr == LX_SYSENT_NR_NONE ? -1 : (int32_t)nr,
		};
		slot->size = sizeof(slot->rec.sys);
		if (ts > s->newest)
			s->newest = ts;
	}
	return 0;
}

/* ring_buffer callback: copies one record into its CPU's queue. */
static int on_sample(void *ctx, void *data, size_t size)
{
	struct stage *s = ctx;
	const struct lx_rec *r = data;
	struct slot *slot;
	int err = 0;

	if (size >= sizeof(*r) && r->type == LX_REC_SYSCALLS)
		err = stage_syscalls(s, data, size);
	else if (size < sizeof(*r) || size > UINT32_MAX)
		err = -EPROTO;
	if (err == -EPROTO)
		fprintf(stderr, "lxtrace: capture: ring of CPU %u: malformed record (%zu bytes, type %u)\n",
			s->cpu, size, size >= sizeof(*r) ? r->type : 0);
	if (err || r->type == LX_REC_SYSCALLS)
		return err;
	if (s->c->opts.on_peek)
		s->c->opts.on_peek(s->c->opts.ctx, r, size);
	slot = stage_insert(s, r->ts);
	if (!slot)
		return -ENOMEM;
	if (size > sizeof(slot->rec)) {
		slot->rec.big.copy = malloc(size);
		if (!slot->rec.big.copy) {
			/* A loss marker in its place: capture stops, but not silently. */
			slot->rec.h = *r;
			slot->size = 0;
			slot->lost = 1;
			return -ENOMEM;
		}
		memcpy(slot->rec.big.copy, data, size);
		slot->rec.h = *r;
	} else {
		memcpy(&slot->rec, data, size);
	}
	slot->size = size;
	if (r->ts > s->newest)
		s->newest = r->ts;
	return 0;
}

/* Queues each CPU's new losses as a marker stamped now. */
static int read_losses(struct capture *c, uint64_t now)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.lost), &zero, c->lost_vals))
		return -errno;
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		struct stage *s = &c->stages[cpu];
		uint64_t n = c->lost_vals[cpu] - s->lost_seen;
		struct slot *slot;

		if (!n)
			continue;
		slot = stage_insert(s, now);
		if (!slot)
			return -ENOMEM;
		memset(slot, 0, sizeof(*slot));
		slot->rec.h.ts = now;
		slot->rec.h.cpu = cpu;
		slot->lost = n;
		s->lost_seen = c->lost_vals[cpu];
	}
	return 0;
}

/* Has every CPU whose staged syscall chunk began before `before` send it to its ring, by running
 * the flush program there (an IPI; needed only on a CPU that makes few syscalls and nothing
 * else, since any other record of the CPU sends the chunk first). A torn read of a chunk that
 * changes meanwhile at worst flushes one that did not need it. */
static int flush_stale(struct capture *c, uint64_t before)
{
	int prog = bpf_program__fd(c->skel->progs.flush_cpu);
	uint32_t zero = 0;

	if (!c->opts.syscalls)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stages), &zero, c->stage_vals))
		return -errno;
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		const struct lx_syscalls *r = (const void *)(c->stage_vals + cpu * c->stage_stride);
		LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (r->n && r->h.ts < before && bpf_prog_test_run_opts(prog, &run))
			return -errno;
	}
	return 0;
}

/* Reads every ring and the loss counters; returns the time the read started in *now. With
 * `all`, every staged syscall chunk is sent first (the programs are detached). */
static int collect(struct capture *c, uint64_t *now, bool all)
{
	int err;

	*now = now_ns();
	err = flush_stale(c, all ? UINT64_MAX : *now - STALE_NS);
	if (err) {
		fprintf(stderr, "lxtrace: capture: flushing staged syscalls: %s\n", strerror(-err));
		return err;
	}
	err = read_losses(c, *now);
	if (err) {
		fprintf(stderr, "lxtrace: capture: reading the loss counters: %s\n", strerror(-err));
		return err;
	}
	err = ring_buffer__consume(c->rb);
	if (err < 0) {
		fprintf(stderr, "lxtrace: capture: reading the ring buffers: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

static uint64_t watermark(const struct capture *c, uint64_t now)
{
	uint64_t quiet = now - WINDOW_NS, mark = now;

	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		uint64_t safe = c->stages[cpu].newest > quiet ? c->stages[cpu].newest : quiet;

		if (safe < mark)
			mark = safe;
	}
	return mark;
}

static uint64_t head_ts(const struct capture *c, uint32_t cpu)
{
	const struct stage *s = &c->stages[cpu];

	return s->slots[s->head].rec.h.ts;
}

static void heap_down(struct capture *c, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t tmp;

		if (l < c->heap_len && head_ts(c, c->heap[l]) < head_ts(c, c->heap[m]))
			m = l;
		if (l + 1 < c->heap_len && head_ts(c, c->heap[l + 1]) < head_ts(c, c->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = c->heap[i];
		c->heap[i] = c->heap[m];
		c->heap[m] = tmp;
		i = m;
	}
}

static bool is_big(const struct slot *slot)
{
	return slot->size > sizeof(slot->rec);
}

static int emit(struct capture *c, const struct slot *slot)
{
	const struct lx_rec *h = &slot->rec.h;
	int err;

	if (h->ts < c->last_ts)
		c->stats.out_of_order++;
	else
		c->last_ts = h->ts;
	if (!slot->size) {
		c->stats.lost += slot->lost;
		return c->opts.on_lost(c->opts.ctx, h->cpu, h->ts, slot->lost);
	}
	c->stats.records++;
	if (!is_big(slot))
		return c->opts.on_record(c->opts.ctx, h, slot->size);
	err = c->opts.on_record(c->opts.ctx, slot->rec.big.copy, slot->size);
	free(slot->rec.big.copy);
	return err;
}

/* Delivers, oldest first across CPUs, every staged record no later than upto. */
static int deliver(struct capture *c, uint64_t upto)
{
	c->heap_len = 0;
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++)
		if (c->stages[cpu].len)
			c->heap[c->heap_len++] = cpu;
	for (size_t i = c->heap_len; i-- > 0;)
		heap_down(c, i);
	while (c->heap_len) {
		struct stage *s = &c->stages[c->heap[0]];
		uint64_t limit = upto;
		int err = 0;

		/* The oldest CPU's run of records up to the next CPU's oldest goes out in one
		 * go, with one heap update after it rather than one per record. */
		if (c->heap_len > 1 && head_ts(c, c->heap[1]) < limit)
			limit = head_ts(c, c->heap[1]);
		if (c->heap_len > 2 && head_ts(c, c->heap[2]) < limit)
			limit = head_ts(c, c->heap[2]);
		if (head_ts(c, c->heap[0]) > upto)
			break;
		do {
			err = emit(c, &s->slots[s->head]);
			s->head = (s->head + 1) & (s->cap - 1);
			s->len--;
		} while (!err && s->len && s->slots[s->head].rec.h.ts <= limit);
		if (!s->len)
			c->heap[0] = c->heap[--c->heap_len];
		heap_down(c, 0);
		if (err)
			return err;
	}
	return 0;
}

struct capture *capture__new(const struct capture_opts *opts)
{
	struct capture *c;
	size_t bytes;
	int ncpus, err;

	if (!opts || opts->sz < sizeof(*opts) || !opts->on_record || !opts->on_lost) {
		errno = EINVAL;
		return NULL;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "lxtrace: capture: counting possible CPUs: %s\n", strerror(-ncpus));
		errno = -ncpus;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "lxtrace: capture: out of memory\n");
		return NULL;
	}
	c->opts = *opts;
	c->ncpus = ncpus;
	c->stages = calloc(ncpus, sizeof(*c->stages));
	c->heap = calloc(ncpus, sizeof(*c->heap));
	c->lost_vals = calloc(ncpus, sizeof(*c->lost_vals));
	c->links = calloc(MAX_LINKS + ncpus, sizeof(*c->links));
	if (!c->stages || !c->heap || !c->lost_vals || !c->links) {
		err = -ENOMEM;
		fprintf(stderr, "lxtrace: capture: out of memory\n");
		goto fail;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		c->stages[cpu].c = c;
		c->stages[cpu].cpu = cpu;
		c->stages[cpu].ring_fd = -1;
	}

	c->skel = lxtrace__open();
	if (!c->skel) {
		err = -errno;
		fprintf(stderr, "lxtrace: capture: opening the BPF object: %s\n", strerror(-err));
		goto fail;
	}
	choose_programs(c);
	c->skel->rodata->self_tgid = opts->self_tgid;
	/* A per-CPU map's lookup gives one value per possible CPU, each 8-byte aligned. */
	c->stage_stride = (bpf_map__value_size(c->skel->maps.stages) + 7) & ~(size_t)7;
	c->stage_vals = calloc(ncpus, c->stage_stride);
	if (!c->stage_vals) {
		err = -ENOMEM;
		fprintf(stderr, "lxtrace: capture: out of memory\n");
		goto fail;
	}
	c->skel->rodata->target_mode = opts->target_mode;
	c->skel->rodata->target_cgroup_id = opts->cgroup_id;
	c->skel->rodata->target_cgroup_level = opts->cgroup_level;
	err = bpf_map__set_max_entries(c->skel->maps.targets,
				       opts->target_mode == LX_TARGET_PIDS ? MAX_TARGETS : 1);
	if (!err)
		err = bpf_map__set_max_entries(c->skel->maps.rss_seen,
					       opts->target_mode != LX_TARGET_ALL ? MAX_TARGETS : 1);
	if (err) {
		fprintf(stderr, "lxtrace: capture: sizing the target maps: %s\n", strerror(-err));
		goto fail;
	}
	if (opts->annotations) {
		c->ann = annotate__open();
		if (!c->ann) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: opening the annotation BPF object: %s\n",
				strerror(-err));
			goto fail;
		}
		c->ann->rodata->stage_syscalls = opts->syscalls;
		c->ann->rodata->self_tgid = opts->self_tgid;
		c->ann->rodata->target_mode = opts->target_mode;
		c->ann->rodata->target_cgroup_id = opts->cgroup_id;
		c->ann->rodata->target_cgroup_level = opts->cgroup_level;
	}

	/* The rings exist before load: the outer map is created with CPU 0's ring as the inner
	 * map's template (libbpf 1.1 cannot resize the template it would make itself). */
	bytes = ring_size(opts->ring_bytes);
	c->skel->rodata->wakeup_bytes = bytes / 2;
	if (c->ann)
		c->ann->rodata->wakeup_bytes = bytes / 2;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "lx_ring", 0, 0, bytes, NULL);

		if (fd < 0) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: creating the %zu KiB ring buffer of CPU %d: %s\n",
				bytes >> 10, cpu, strerror(-err));
			goto fail;
		}
		c->stages[cpu].ring_fd = fd;
	}
	err = bpf_map__set_max_entries(c->skel->maps.rings, ncpus);
	if (!err)
		err = bpf_map__set_inner_map_fd(c->skel->maps.rings, c->stages[0].ring_fd);
	if (err) {
		fprintf(stderr, "lxtrace: capture: configuring the ring map: %s\n", strerror(-err));
		goto fail;
	}
	return c;
fail:
	capture__free(c);
	errno = -err;
	return NULL;
}

int capture__load(struct capture *c)
{
	int outer, err;

	err = lxtrace__load(c->skel);
	if (err) {
		fprintf(stderr, "lxtrace: capture: loading the BPF programs: %s (-v shows libbpf's log)\n",
			strerror(-err));
		return err;
	}
	outer = bpf_map__fd(c->skel->maps.rings);
	if (c->ann) {
		/* The same rings, loss counters and syscall stages: its records merge with the
		 * others, each after the older syscall entries of its CPU. The same targets: the
		 * processes the fork and exit programs add and remove are the ones it records. */
		err = bpf_map__reuse_fd(c->ann->maps.rings, outer);
		if (!err)
			err = bpf_map__reuse_fd(c->ann->maps.lost, bpf_map__fd(c->skel->maps.lost));
		if (!err)
			err = bpf_map__reuse_fd(c->ann->maps.stages, bpf_map__fd(c->skel->maps.stages));
		if (!err)
			err = bpf_map__reuse_fd(c->ann->maps.targets, bpf_map__fd(c->skel->maps.targets));
		if (!err)
			err = annotate__load(c->ann);
		if (err) {
			fprintf(stderr, "lxtrace: capture: loading the annotation BPF programs: %s "
				"(-v shows libbpf's log)\n", strerror(-err));
			return err;
		}
	}
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		struct stage *s = &c->stages[cpu];

		if (bpf_map_update_elem(outer, &cpu, &s->ring_fd, BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: installing the ring of CPU %u: %s\n", cpu,
				strerror(-err));
			return err;
		}
		if (!c->rb) {
			c->rb = ring_buffer__new(s->ring_fd, on_sample, s, NULL);
			err = c->rb ? 0 : -errno;
		} else {
			err = ring_buffer__add(c->rb, s->ring_fd, on_sample, s);
		}
		if (err) {
			fprintf(stderr, "lxtrace: capture: mapping the ring of CPU %u: %s\n", cpu,
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* One cpu-clock event per online CPU (the software clock: this machine has no PMU, and it
 * samples the same on any), each running cpu_sample. A CPU that is offline is skipped. */
static int attach_sampling(struct capture *c)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = c->opts.sample_hz,
	};

	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		struct bpf_link *link;
		int fd, err;

		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue;
		if (fd < 0) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: opening the cpu-clock event of CPU %u at %u Hz: %s%s\n",
				cpu, c->opts.sample_hz, strerror(-err), err == -EINVAL ?
				" (above /proc/sys/kernel/perf_event_max_sample_rate?)" : "");
			return err;
		}
		link = bpf_program__attach_perf_event(c->skel->progs.cpu_sample, fd);
		if (!link) {
			err = -errno;
			close(fd);
			fprintf(stderr, "lxtrace: capture: attaching the sampler to CPU %u: %s\n", cpu,
				strerror(-err));
			return err;
		}
		/* The link owns the event's fd from now on. */
		c->links[c->nlinks++] = link;
	}
	return 0;
}

int capture__attach(struct capture *c)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, c->skel->obj) {
		struct bpf_link *link;
		int err;

		/* flush_cpu is run by the reader, never attached; cpu_sample hangs off perf
		 * events, attached last. */
		if (!bpf_program__autoload(prog) || prog == c->skel->progs.flush_cpu ||
		    prog == c->skel->progs.cpu_sample)
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: attaching %s: %s\n",
				bpf_program__section_name(prog), strerror(-err));
			return err;
		}
		if (c->nlinks == MAX_LINKS) {
			bpf_link__destroy(link);
			return -E2BIG;
		}
		c->links[c->nlinks++] = link;
	}
	return c->opts.sample_hz ? attach_sampling(c) : 0;
}

int capture__add_target(struct capture *c, uint32_t tgid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.targets), &tgid, &one, BPF_ANY)) {
		int err = -errno;

		fprintf(stderr, "lxtrace: capture: adding process %u to the targets: %s\n", tgid,
			strerror(-err));
		return err;
	}
	return 0;
}

int capture__drop_target(struct capture *c, uint32_t tgid)
{
	if (bpf_map_delete_elem(bpf_map__fd(c->skel->maps.targets), &tgid) && errno != ENOENT)
		return -errno;
	return 0;
}

bool capture__has_targets(const struct capture *c)
{
	uint32_t key;

	return !bpf_map_get_next_key(bpf_map__fd(c->skel->maps.targets), NULL, &key);
}

static int add_usdt_link(struct capture *c, struct bpf_link *link)
{
	if (grow_array((void **)&c->usdt_links, &c->cap_usdt_links, c->n_usdt_links + 1,
		    sizeof(*c->usdt_links), 16))
		return -ENOMEM;
	c->usdt_links[c->n_usdt_links++] = link;
	return 0;
}

int capture__attach_usdt(struct capture *c, pid_t pid, const char *path)
{
	size_t found = 0;
	int err = 0;

	if (!c->ann) {
		fprintf(stderr, "lxtrace: capture: %s: annotations were not loaded\n", path);
		return -EINVAL;
	}
	const struct {
		const char *probe;
		struct bpf_program *prog;
	} usdt_probes[] = {
		{ "task_begin", c->ann->progs.task_begin },
		{ "task_end", c->ann->progs.task_end },
		{ "region_begin", c->ann->progs.region_begin },
		{ "region_end", c->ann->progs.region_end },
		{ "log", c->ann->progs.user_log },
	};

	/* A program has only the probes of the calls it makes: attach the ones that exist. */
	for (size_t i = 0; i < sizeof(usdt_probes) / sizeof(usdt_probes[0]); i++) {
		struct bpf_link *link;

		link = bpf_program__attach_usdt(usdt_probes[i].prog, pid, path, "lxtrace",
						usdt_probes[i].probe, NULL);
		if (!link) {
			err = -errno;
			if (err == -ENOENT)
				continue;
			fprintf(stderr, "lxtrace: capture: attaching to probe lxtrace:%s of %s: %s\n",
				usdt_probes[i].probe, path, strerror(-err));
			return err;
		}
		err = add_usdt_link(c, link);
		if (err) {
			bpf_link__destroy(link);
			return err;
		}
		found++;
	}
	if (!found) {
		fprintf(stderr, "lxtrace: capture: %s: no lxtrace annotation probes (built with "
			"<lxtrace/annotate.h>?)\n", path);
		return -ENOENT;
	}
	return 0;
}

int capture__poll(struct capture *c)
{
	uint64_t now;
	int err;

	/* Returns early only when a program forced a wakeup; the rings are read below anyway. */
	err = ring_buffer__poll(c->rb, POLL_MS);
	if (err < 0 && err != -EINTR) {
		fprintf(stderr, "lxtrace: capture: waiting for the ring buffers: %s\n", strerror(-err));
		return err;
	}
	err = collect(c, &now, false);
	return err ? err : deliver(c, watermark(c, now));
}

/* Runs the kernel skipped because the program was already running on that CPU. */
static uint64_t count_object_misses(const struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(prog) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

static uint64_t count_misses(const struct capture *c)
{
	return count_object_misses(c->skel->obj) + (c->ann ? count_object_misses(c->ann->obj) : 0);
}

static void detach(struct capture *c)
{
	for (unsigned i = 0; i < c->nlinks; i++)
		bpf_link__destroy(c->links[i]);
	c->nlinks = 0;
	for (size_t i = 0; i < c->n_usdt_links; i++)
		bpf_link__destroy(c->usdt_links[i]);
	c->n_usdt_links = 0;
}

int capture__drain(struct capture *c)
{
	uint64_t now;
	int err;

	c->stats.misses = count_misses(c);
	detach(c);
	err = collect(c, &now, true);
	return err ? err : deliver(c, UINT64_MAX);
}

void capture__stats(const struct capture *c, struct capture_stats *out)
{
	*out = c->stats;
}

void capture__free(struct capture *c)
{
	if (!c)
		return;
	detach(c);
	free(c->usdt_links);
	ring_buffer__free(c->rb);
	annotate__destroy(c->ann);
	lxtrace__destroy(c->skel);
	for (uint32_t cpu = 0; c->stages && cpu < c->ncpus; cpu++) {
		struct stage *s = &c->stages[cpu];

		if (s->ring_fd >= 0)
			close(s->ring_fd);
		for (size_t i = 0; i < s->len; i++) {
			struct slot *slot = &s->slots[(s->head + i) & (s->cap - 1)];

			if (is_big(slot))
				free(slot->rec.big.copy);
		}
		free(s->slots);
	}
	free(c->stages);
	free(c->heap);
	free(c->lost_vals);
	free(c->stage_vals);
	free(c->links);
	free(c);
}
