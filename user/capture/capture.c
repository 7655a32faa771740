/* capture.c - loads the BPF programs and reads one ring buffer per CPU into the merge engine
 * (merge.h), which hands the records on in time order.
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
 * Why a ring buffer reader per ring, each read for RING_READ_NS at most a round: libbpf's
 * reader goes on while records keep coming, and at -F 100000 one call read for 11 s, the
 * recording never coming back to its duration (a 1 s recording wrote 23 s). What a ring holds
 * past its round waits for the next; what it has no room for is lost, and counted.
 *
 * Ordering: each round reads every ring into the merge engine and has it deliver what is older
 * than its watermark (merge.h). Syscall entries (--syscalls=all) come in chunks that each CPU
 * stages in BPF and sends before any other record of its own (lxtrace.h); a CPU whose chunk has
 * waited STALE_NS is made to send it by running flush_cpu there.
 *
 * Losses: a program that finds its ring full counts the record in a per-CPU counter. Each
 * round reads the counters and queues the increase as a loss report, stamped with the time of
 * the read, into that CPU's stream, so the consumer learns of it in order.
 *
 * Annotations (include/lxtrace/annotate.h) come from a second BPF object, annotate.bpf.c,
 * loaded only when asked for and given the same ring, loss and syscall-stage maps, so its
 * records merge like the others, and the same target constants and `targets` map, so in a target
 * mode it drops the probe hits of untraced threads as the scheduler's programs do.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "user/capture/capture.h"
#include "user/capture/maps_proc.h"
#include "user/capture/merge.h"
#include "annotate.skel.h"
#include "lxtrace.skel.h"

#define POLL_MS 4
/* The most a round reads one ring for (its records' peeks included: a new mapping's file is
 * opened then), so that every ring is read each round and the round ends. */
#define RING_READ_NS (20 * 1000 * 1000ULL)
/* A CPU's staged syscall entries older than this are flushed by the reader: well inside the
 * merge window, so they still arrive in order. */
#define STALE_NS (2 * 1000 * 1000ULL)
#define MAX_LINKS 24
/* Processes traced at once in LX_TARGET_PIDS mode (a build with make -j of a large tree stays
 * well below); the rss throttle's table is an LRU of the same size. */
#define MAX_TARGETS 16384
/* How long the stop waits for the annotation probe hits under way (a sleepable one may be
 * faulting a page in); past it the probes are detached there and then, which waits for them. */
#define ANN_IDLE_NS (1000 * 1000 * 1000ULL)
/* How long the records after an ask of a process's maps wait for its answer (maps_proc.h),
 * stamped at the ask: a stack taken after the ask is walked with the mappings it found. Past
 * it, a read of /proc that stalls holds nothing up, and its answer comes late. */
#define MAPS_WAIT_NS (250 * 1000 * 1000ULL)

/* One CPU's ring, as the ring buffer callback sees it. */
struct ring {
	struct capture *c;
	uint32_t cpu;
	int fd;
	struct ring_buffer *rb;	/* its reader */
	uint64_t lost_seen;	/* the CPU's loss counter at the last read */
	uint64_t left;		/* records counted, not staged, by a stop out of time (give_up) */
};

struct capture {
	struct capture_opts opts;
	struct features feat;
	bool modern;			/* the modern program of each pair, not the compat one */
	struct lxtrace *skel;
	struct annotate *ann;		/* NULL unless opts.annotations */
	struct bpf_link **usdt_links;
	size_t n_usdt_links, cap_usdt_links;
	pthread_t releaser;		/* detaching usdt_links after the stop */
	bool releasing;			/* releaser runs, or ran and waits to be joined */
	int epfd;			/* the rings' readers, to wait for any */
	uint64_t read_until;		/* CLOCK_MONOTONIC ns: the ring being read stops then */
	unsigned reads;			/* records read this round, for the clock's reads */
	bool read_cut;			/* a ring's read stopped at read_until or a full queue */
	bool counting;			/* the stop is out of time: records read are counted only */
	uint64_t drain_by;		/* CLOCK_MONOTONIC ns: the stop's reads end then (drain) */
	uint64_t unread_left;		/* records the stop counted in the rings, not read whole */
	bool any_unread;		/* some ring's read was cut this round */
	struct bpf_link **links;	/* MAX_LINKS + one sampling event per CPU */
	unsigned nlinks;
	struct ring *rings;
	uint32_t ncpus;
	struct merge *merge;
	uint64_t *lost_vals;	/* one per possible CPU, for the per-CPU lookup */
	char *stage_vals;	/* the BPF side's staged syscall chunks, one per possible CPU */
	size_t stage_stride;
	uint64_t misses;
	uint64_t until;		/* records after this time are not delivered (capture__drain) */
	uint64_t after_stop;	/* how many were not, lost ones included */
	uint64_t lost_after_stop;
	struct lx_cfi_row *rows;	/* the unwind rows' place, reserved once asked for */
	size_t rows_bytes;
	size_t rows_mapped;		/* of them, bytes mapped from the start (map_rows) */
	struct maps_proc *maps;		/* answers for the kernel that cannot list mappings */
	uint64_t delivered;		/* the watermark delivered up to */
	uint64_t unread_since;		/* asks of maps not read since then (maps_watermark) */
};

/* Samples always carry the sampled thread's user stack. */
static bool user_stacks(const struct capture_opts *o)
{
	return o->stack_user || o->sample_hz;
}

/* The unwinder walks user stacks in BPF: it needs the modern programs. */
static bool bpf_walker(const struct capture *c)
{
	return c->modern && user_stacks(&c->opts);
}

/* User space answers for the mappings (maps_proc.h): the kernel has no VMA iterator. */
static bool asks_maps(const struct capture *c)
{
	return user_stacks(&c->opts) && !(c->modern && c->feat.have[FEAT_VMA_ITER]);
}

/* Keeps one program of each modern/compat pair, the sys_enter and sys_exit pairs only when asked, the
 * rss_stat pair only for a target (system-wide, one memory counter would mean nothing), and
 * of the mapping programs those this kernel and these stacks need. */
static void choose_programs(struct capture *c)
{
	struct lxtrace *s = c->skel;
	const struct capture_opts *o = &c->opts;
	const struct features *f = &c->feat;
	const struct {
		struct bpf_program *modern, *compat;
		bool on;
	} pairs[] = {
		{ s->progs.btf_switch, s->progs.raw_switch, true },
		{ s->progs.btf_waking, s->progs.raw_waking, true },
		{ s->progs.btf_wakeup, s->progs.raw_wakeup, true },
		{ s->progs.btf_wakeup_new, s->progs.raw_wakeup_new, true },
		{ s->progs.btf_fork, s->progs.raw_fork, true },
		{ s->progs.btf_exec, s->progs.raw_exec, true },
		{ s->progs.btf_exit, s->progs.raw_exit, true },
		{ s->progs.btf_rename, s->progs.raw_rename, true },
		{ s->progs.btf_sys_enter, s->progs.raw_sys_enter, o->syscalls },
		{ s->progs.btf_sys_exit, s->progs.raw_sys_exit, o->syscalls && o->sysrets },
		{ s->progs.btf_rss, s->progs.raw_rss,
		  o->target_mode != LX_TARGET_ALL && f->have[FEAT_RSS_TP] },
		{ s->progs.btf_maps_ask, s->progs.raw_maps_ask, asks_maps(c) && f->have[FEAT_MMAP_TP] },
		{ s->progs.btf_maps_exec_ask, s->progs.raw_maps_exec_ask,
		  asks_maps(c) && f->have[FEAT_MMAP_TP] },
		{ s->progs.cpu_sample, s->progs.cpu_sample_compat, o->sample_hz > 0 },
	};
	bool walker = bpf_walker(c);

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		bool on = pairs[i].on;

		bpf_program__set_autoload(pairs[i].modern, on && c->modern);
		bpf_program__set_autoload(pairs[i].compat, on && !c->modern);
	}
	bpf_program__set_autoload(s->progs.flush_cpu, o->syscalls);
	/* User stacks are unwound in BPF from each process's mapping table (pmaps.bpf.h), built
	 * there with the VMA iterator or asked of user space. */
	bpf_program__set_autoload(s->progs.maps_unlock, walker && !asks_maps(c) && !f->have[FEAT_MM_SEQ]);
	/* Where the kernel counts write sections, by the range of each change. */
	bpf_program__set_autoload(s->progs.maps_unlock_ranged,
				  walker && !asks_maps(c) && f->have[FEAT_MM_SEQ]);
	bpf_program__set_autoload(s->progs.maps_lock_got, walker && !asks_maps(c) && f->have[FEAT_MM_SEQ]);
	bpf_program__set_autoload(s->progs.maps_unmapped, walker && !asks_maps(c) && f->have[FEAT_MM_SEQ]);
	bpf_program__set_autoload(s->progs.maps_exec, walker && !asks_maps(c));
	bpf_program__set_autoload(s->progs.maps_scan, walker && !asks_maps(c));
	bpf_program__set_autoload(s->progs.maps_scan_ask, walker && asks_maps(c));
	/* Task storage (the walks' cache) is a map type 5.10 does not have. */
	bpf_map__set_autocreate(s->maps.ucaches, c->modern);
	s->rodata->unwind_maps = walker;
	s->rodata->maps_ask = asks_maps(c);
	s->rodata->ranged_maps = f->have[FEAT_MM_SEQ];
	s->rodata->stage_syscalls = o->syscalls;
	s->rodata->stack_kern = o->stack_kern;
	s->rodata->stack_user = o->stack_user;
	s->rodata->sample_idle = o->sample_idle;
	s->rodata->switch_state_arg = f->have[FEAT_SWITCH_STATE];
	s->rodata->exit_group_dead_arg = f->have[FEAT_EXIT_GROUP];
	s->rodata->thread_size = f->thread_size;
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

/* Stages one record of CPU cpu, read from its ring or made by maps_proc, and shows it to the
 * consumer's peek. */
static int accept_record(void *ctx, uint32_t cpu, const void *data, size_t size)
{
	struct capture *c = ctx;
	const struct lx_rec *r = data;
	int err = merge__add(c->merge, cpu, data, size);

	if (!err && c->opts.on_peek && r->type != LX_REC_SYSCALLS)
		c->opts.on_peek(c->opts.ctx, r, size);
	return err;
}

/* ring_buffer callback: hands one record to the merge engine. On a kernel that reports no
 * change of mappings, an exec is also a request for the process's mappings (maps_proc.h). */
static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct ring *rg = ctx;
	struct capture *c = rg->c;
	const struct lx_rec *r = data;
	int err = 0;

	if (c->counting) {
		if (size >= sizeof(*r) && r->ts <= c->until)
			rg->left++;
		else
			c->after_stop++;
		return 0;
	}
	if (c->maps && size >= sizeof(struct lx_exec) && r->type == LX_REC_EXEC &&
	    !c->feat.have[FEAT_MMAP_TP] && maps_proc__exec(c->maps, data))
		err = -ENOMEM;
	if (!err)
		err = accept_record(c, rg->cpu, data, size);
	/* Taken: a negative return stops libbpf's read after this record. The clock is read
	 * every 64 records: a read costs more than many a record. A queue that holds its part
	 * leaves the rest in the ring (merge__full). */
	if (!err && (merge__full(c->merge, rg->cpu) ||
		     (!(++c->reads % 64) && now_ns() > c->read_until))) {
		c->read_cut = true;
		err = -ECANCELED;
	}
	return err;
}

/* Queues each CPU's new losses as a report stamped now. */
static int read_losses(struct capture *c, uint64_t now)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.lost), &zero, c->lost_vals))
		return -errno;
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		struct ring *rg = &c->rings[cpu];
		uint64_t n = c->lost_vals[cpu] - rg->lost_seen;
		int err;

		if (!n)
			continue;
		err = merge__add_lost(c->merge, cpu, now, n);
		if (err)
			return err;
		rg->lost_seen = c->lost_vals[cpu];
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
 * `all`, every staged syscall chunk is sent first (the programs are detached) and a ring is
 * read to its end, unless its queue fills first (any_unread). */
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
	c->any_unread = false;
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		c->read_until = all ? c->drain_by : now_ns() + RING_READ_NS;
		c->read_cut = merge__full(c->merge, cpu);
		err = c->read_cut ? 0 : ring_buffer__consume(c->rings[cpu].rb);
		merge__unread(c->merge, cpu, c->read_cut);
		c->any_unread = c->any_unread || c->read_cut;
		if (err < 0 && !c->read_cut) {
			fprintf(stderr, "lxtrace: capture: reading the ring buffer of CPU %u: %s\n",
				cpu, strerror(-err));
			return err;
		}
	}
	/* The mappings answered since the last round, before any record newer than their asks
	 * is delivered. */
	err = c->maps ? maps_proc__flush(c->maps) : 0;
	if (err)
		fprintf(stderr, "lxtrace: capture: reading processes' mappings: %s\n",
			strerror(-err));
	return err;
}

/* The merge engine's consumers: the caller's, but for what comes after the stop. */
static int deliver_record(void *ctx, const struct lx_rec *r, size_t size)
{
	struct capture *c = ctx;

	if (r->ts > c->until) {
		c->after_stop++;
		return 0;
	}
	return c->opts.on_record(c->opts.ctx, r, size);
}

static int deliver_lost(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	struct capture *c = ctx;

	if (ts > c->until) {
		c->after_stop += n;
		c->lost_after_stop += n;
		return 0;
	}
	return c->opts.on_lost(c->opts.ctx, cpu, ts, n);
}

/* What a CPU's records read from its ring may take in the recorder while the model is behind
 * (merge.h, stage_bytes): as many bytes of slots as this many rings, and as many again of
 * stacks, of which the reader fills half (merge__full) and leaves the rest in the ring, where
 * the kernel bounds it and counts what does not fit; --buffer-size raises both. And at most
 * READ_AHEAD_NS of records however few bytes: what the model needs staged is what arrives
 * while it holds a record for unwind rows (a second at most, callstacks.h) or is slow for a
 * moment; more only moved a backlog from the ring into the heap (at 16 rings and up to 4 s,
 * the queues of a whole-machine recording at load 25-49, behind all along, held 44 MB:
 * docs/bench.md). At 1 ring the first second of a busy Python process attached to kept 3% of
 * its stacks whole (copies of stacks waiting for rows filled the queue, the ring then refused
 * copies: firstsight/attached_busy_python_is_whole_from_the_first_second). */
#define STAGE_RINGS 4
#define READ_AHEAD_NS (1000 * 1000 * 1000ULL)

/* The unwinder's tables: room for the rows of the binaries stacks meet (libc has ~23,000,
 * python3 ~58,000; 8 bytes each), one mapping table per process (4 KiB, allocated as used). */
#define CFI_ROWS (1u << 21)
#define CFI_FILES 8192
#define PROC_TABLES 32768
/* Asks for mappings wait here for their thread: 6,500 of 40 bytes. */
#define MAPS_RING_BYTES (256 * 1024)

/* How far behind the model a CPU's records may fall in time before the reader drops them,
 * samples from half of it (merge_opts.max_behind_ns): at -F 100000 the model took 50 s to
 * write what one second sent, read ahead without bound (1.6 million records staged at the
 * stop), and the stop waited for all of it. 4 s: the first stacks of every process at a busy
 * start take the model a second or two, which it then catches up on. */
#define MAX_BEHIND_NS (4 * 1000 * 1000 * 1000ULL)

/* Sizes every map the choice of programs leaves unused at one entry. */
static int size_maps(struct capture *c)
{
	const struct capture_opts *o = &c->opts;
	struct lxtrace *s = c->skel;
	bool walker = bpf_walker(c);
	int err;

	err = bpf_map__set_max_entries(s->maps.targets,
				       o->target_mode == LX_TARGET_PIDS ? MAX_TARGETS : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.rss_seen,
					       o->target_mode != LX_TARGET_ALL ? MAX_TARGETS : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.cfi_rows, walker ? CFI_ROWS : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.cfi_files, walker ? CFI_FILES : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.proc_maps, walker ? PROC_TABLES : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.pmaps_asked, asks_maps(c) ? PROC_TABLES : 1);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.maps_ring,
					       asks_maps(c) ? MAPS_RING_BYTES : ring_size(1));
	if (!err)
		err = bpf_map__set_max_entries(s->maps.rings, c->ncpus);
	/* The rings exist before load: the outer map is created with CPU 0's ring as the inner
	 * map's template (libbpf 1.1 cannot resize the template it would make itself). */
	if (!err)
		err = bpf_map__set_inner_map_fd(s->maps.rings, c->rings[0].fd);
	return err;
}

/* The annotation probes sleep, to fault a string in, where the kernel lets uprobes sleep. */
static void choose_annotation_programs(struct capture *c)
{
	bool sleep = c->feat.have[FEAT_SLEEPABLE_UPROBE];
	struct bpf_program *prog;

	c->ann->rodata->sleepable = sleep;
	bpf_object__for_each_program(prog, c->ann->obj)
		if (sleep)
			bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_SLEEPABLE);
}

/* Opens the scheduler's object with the modern or the compat programs, configured. */
static int open_object(struct capture *c, bool modern)
{
	const struct capture_opts *o = &c->opts;
	int err;

	lxtrace__destroy(c->skel);
	c->modern = modern;
	c->skel = lxtrace__open();
	if (!c->skel) {
		err = -errno;
		fprintf(stderr, "lxtrace: capture: opening the BPF object: %s\n", strerror(-err));
		return err;
	}
	choose_programs(c);
	c->skel->rodata->self_tgid = o->self_tgid;
	c->skel->rodata->helper_tgid = o->helper_tgid;
	c->skel->rodata->target_mode = o->target_mode;
	c->skel->rodata->target_cgroup_id = o->cgroup_id;
	c->skel->rodata->target_cgroup_level = o->cgroup_level;
	c->skel->rodata->wakeup_bytes = ring_size(o->ring_bytes) / 2;
	err = size_maps(c);
	if (err)
		fprintf(stderr, "lxtrace: capture: sizing the BPF maps: %s\n", strerror(-err));
	return err;
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
	c->until = UINT64_MAX;
	c->drain_by = UINT64_MAX;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0) {
		err = -errno;
		fprintf(stderr, "lxtrace: capture: epoll_create1: %s\n", strerror(-err));
		goto fail;
	}
	if (opts->features)
		c->feat = *opts->features;
	else
		features__probe(&c->feat);
	c->rings = calloc(ncpus, sizeof(*c->rings));
	/* Before anything can fail: capture__free closes each ring's fd, and calloc's 0 is stdin. */
	for (int cpu = 0; c->rings && cpu < ncpus; cpu++) {
		c->rings[cpu].c = c;
		c->rings[cpu].cpu = cpu;
		c->rings[cpu].fd = -1;
	}
	bytes = ring_size(opts->ring_bytes);
	c->merge = merge__new(&(struct merge_opts){
		.sz = sizeof(struct merge_opts),
		.ncpus = (uint32_t)ncpus,
		.max_behind_ns = MAX_BEHIND_NS,
		.on_record = deliver_record,
		.on_lost = deliver_lost,
		.ctx = c,
		.stage_bytes = STAGE_RINGS * bytes,
		.read_ahead_ns = READ_AHEAD_NS,
	});
	c->lost_vals = calloc(ncpus, sizeof(*c->lost_vals));
	c->links = calloc(MAX_LINKS + ncpus, sizeof(*c->links));
	if (!c->rings || !c->merge || !c->lost_vals || !c->links) {
		err = -ENOMEM;
		fprintf(stderr, "lxtrace: capture: out of memory\n");
		goto fail;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "lx_ring", 0, 0, bytes, NULL);

		if (fd < 0) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: creating the %zu KiB ring buffer of CPU %d: %s\n",
				bytes >> 10, cpu, strerror(-err));
			goto fail;
		}
		c->rings[cpu].fd = fd;
	}
	err = open_object(c, features__cfi_stacks(&c->feat));
	if (err)
		goto fail;
	/* A per-CPU map's lookup gives one value per possible CPU, each 8-byte aligned. */
	c->stage_stride = (bpf_map__value_size(c->skel->maps.stages) + 7) & ~(size_t)7;
	c->stage_vals = calloc(ncpus, c->stage_stride);
	if (!c->stage_vals) {
		err = -ENOMEM;
		fprintf(stderr, "lxtrace: capture: out of memory\n");
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
		c->ann->rodata->helper_tgid = opts->helper_tgid;
		c->ann->rodata->target_mode = opts->target_mode;
		c->ann->rodata->target_cgroup_id = opts->cgroup_id;
		c->ann->rodata->target_cgroup_level = opts->cgroup_level;
		c->ann->rodata->wakeup_bytes = bytes / 2;
		choose_annotation_programs(c);
	}
	return c;
fail:
	capture__free(c);
	errno = -err;
	return NULL;
}

/* libbpf names the program it could not load only in its log ("prog 'NAME': failed to load"),
 * and unloads the others after a failure: the load's messages pass through here, on to the
 * printer set before, and the failing program's name is kept. */
static libbpf_print_fn_t outer_print;
static char failed_prog[64];

static int note_failure(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[256];
	const char *at;
	va_list copy;

	va_copy(copy, ap);
	vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	at = strstr(line, "prog '");
	if (at && strstr(at, "': failed to load"))
		sscanf(at, "prog '%63[^']'", failed_prog);
	return outer_print ? outer_print(level, fmt, ap) : 0;
}

/* Loads the scheduler's object; when the modern programs fail on a kernel the probes found fit
 * for them, the compat ones, saying why in the features. */
static int load_object(struct capture *c)
{
	int err;

	snprintf(failed_prog, sizeof(failed_prog), "?");
	outer_print = libbpf_set_print(note_failure);
	err = lxtrace__load(c->skel);
	libbpf_set_print(outer_print);
	if (err && c->modern) {
		snprintf(c->feat.modern_failed, sizeof(c->feat.modern_failed), "%s: %s",
			 failed_prog, strerror(-err));
		fprintf(stderr, "lxtrace: capture: the typed programs failed to load (%s); "
			"loading the compat ones\n", c->feat.modern_failed);
		err = open_object(c, false);
		if (!err)
	err = lxtrace__load(c->skel);
	}
	return err;
}

int capture__load(struct capture *c)
{
	int outer, err;

	err = load_object(c);
	if (err) {
		fprintf(stderr, "lxtrace: capture: loading the BPF programs: %s (-v shows libbpf's log)\n",
			strerror(-err));
		return err;
	}
	if (asks_maps(c)) {
		c->maps = maps_proc__new(&(struct maps_proc_opts){
			.sz = sizeof(struct maps_proc_opts),
			.proc_root = c->opts.proc_root ? c->opts.proc_root : "/proc",
			.ring_fd = c->feat.have[FEAT_MMAP_TP] || bpf_walker(c) ?
				   bpf_map__fd(c->skel->maps.maps_ring) : -1,
			.tables_fd = bpf_walker(c) ? bpf_map__fd(c->skel->maps.proc_maps) : -1,
			.versions = (volatile uint64_t *)c->skel->bss->pmaps_vers,
			.emit = accept_record,
			.ctx = c,
		});
		if (!c->maps) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: starting the thread that reads mappings: "
				"%s\n", strerror(-err));
			return err;
		}
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
		/* Annotations are a feature: a kernel that refuses their programs still records
		 * the scheduler. */
		if (err) {
			fprintf(stderr, "lxtrace: capture: the annotation programs failed to load (%s; "
				"-v shows libbpf's log): recording without annotations\n",
				strerror(-err));
			snprintf(c->feat.annotations_failed, sizeof(c->feat.annotations_failed), "%s",
				 strerror(-err));
			annotate__destroy(c->ann);
			c->ann = NULL;
		}
	}
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++) {
		struct ring *rg = &c->rings[cpu];

		if (bpf_map_update_elem(outer, &cpu, &rg->fd, BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "lxtrace: capture: installing the ring of CPU %u: %s\n", cpu,
				strerror(-err));
			return err;
		}
		rg->rb = ring_buffer__new(rg->fd, on_ring_record, rg, NULL);
		err = rg->rb ? 0 : -errno;
		if (!err && epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(rg->rb),
				      &(struct epoll_event){ .events = EPOLLIN }))
			err = -errno;
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
		link = bpf_program__attach_perf_event(c->modern ? c->skel->progs.cpu_sample :
						      c->skel->progs.cpu_sample_compat, fd);
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

/* Builds the mapping table of every process alive, once maps_unlock keeps them current: a
 * task iterator, read to its end. */
static int scan_processes(struct capture *c)
{
	struct bpf_program *scan = asks_maps(c) ? c->skel->progs.maps_scan_ask :
						  c->skel->progs.maps_scan;
	struct bpf_link *link = bpf_program__attach_iter(scan, NULL);
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	if (!link) {
		err = -errno;
		fprintf(stderr, "lxtrace: capture: attaching the process scan: %s\n", strerror(-err));
		return err;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			err = -errno;
		close(fd);
	}
	bpf_link__destroy(link);
	if (err)
		fprintf(stderr, "lxtrace: capture: scanning the processes' mappings: %s\n",
			strerror(-err));
	return err;
}

int capture__attach(struct capture *c)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, c->skel->obj) {
		struct bpf_link *link;
		int err;

		/* flush_cpu is run by the reader, never attached; cpu_sample hangs off perf
		 * events (capture__sample). */
		if (!bpf_program__autoload(prog) || prog == c->skel->progs.flush_cpu ||
		    prog == c->skel->progs.cpu_sample || prog == c->skel->progs.cpu_sample_compat ||
		    prog == c->skel->progs.maps_scan || prog == c->skel->progs.maps_scan_ask)
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
	return bpf_walker(c) ? scan_processes(c) : 0;
}

int capture__sample(struct capture *c)
{
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
		{ "trigger", c->ann->progs.trigger },
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

int capture__inject(struct capture *c, const struct lx_rec *r, size_t size)
{
	if (size < sizeof(*r) || r->cpu >= c->ncpus)
		return -EINVAL;
	return merge__add(c->merge, r->cpu, r, size);
}

/* mark, held before the oldest ask of maps not answered yet (MAPS_WAIT_NS): under load the
 * thread that reads /proc answers tens of milliseconds after the ask, when the stacks taken
 * since were walked without the new mappings (a short-lived process's every stack cut). */
static uint64_t maps_watermark(struct capture *c, uint64_t mark, uint64_t now)
{
	bool unread;
	uint64_t oldest;

	if (!c->maps)
		return mark;
	oldest = maps_proc__oldest_open(c->maps, &unread);
	if (!unread)
		c->unread_since = 0;
	else if (!c->unread_since)
		c->unread_since = now;
	/* Asks still in the ring, of unknown times: nothing newer goes for now. */
	if (unread && now - c->unread_since < MAPS_WAIT_NS && c->delivered < mark)
		mark = c->delivered;
	if (oldest <= mark && now - oldest < MAPS_WAIT_NS)
		mark = oldest - 1;
	return mark;
}

int capture__poll(struct capture *c)
{
	uint64_t now;
	int err;

	struct epoll_event ev;

	/* Returns early only when a program forced a wakeup; the rings are read below anyway. */
	err = epoll_wait(c->epfd, &ev, 1, POLL_MS) < 0 ? -errno : 0;
	if (err < 0 && err != -EINTR) {
		fprintf(stderr, "lxtrace: capture: waiting for the ring buffers: %s\n", strerror(-err));
		return err;
	}
	err = collect(c, &now, false);
	if (!err) {
		uint64_t mark = maps_watermark(c, merge__watermark(c->merge, now), now);

		if (mark > c->delivered)
			c->delivered = mark;
		err = merge__deliver(c->merge, mark);
	}
	/* A held record waits for work of another thread (unwind rows), and a ring left unread
	 * keeps epoll from waiting: not a spin. */
	if (err == -EBUSY && c->any_unread)
		usleep(1000);
	return err == -EAGAIN || err == -EBUSY ? 0 : err;
}

/* Runs the kernel skipped because the program was already running on that CPU. */
static uint64_t count_object_misses(const struct bpf_object *obj,
				    const struct bpf_program *const *skip, size_t nskip)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		bool skipped = false;

		for (size_t i = 0; i < nskip; i++)
			skipped = skipped || prog == skip[i];
		memset(&info, 0, sizeof(info));
		if (!skipped && bpf_program__fd(prog) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

static uint64_t count_misses(const struct capture *c)
{
	/* The VMA walks of the mmap lock's programs take and release the lock they trace: those
	 * runs are skipped by design. */
	const struct bpf_program *walkers[] = { c->skel->progs.maps_unlock,
						c->skel->progs.maps_lock_got };

	return count_object_misses(c->skel->obj, walkers, 2) +
	       (c->ann ? count_object_misses(c->ann->obj, NULL, 0) : 0);
}

static void detach_links(struct capture *c)
{
	for (unsigned i = 0; i < c->nlinks; i++)
		bpf_link__destroy(c->links[i]);
	c->nlinks = 0;
}

/* Each uprobe's removal waits for RCU grace periods, under a mutex the kernel's perf events
 * share: ~0.1 s each, one after another (docs/record.md). */
static void detach_usdt(struct capture *c)
{
	for (size_t i = 0; i < c->n_usdt_links; i++)
		bpf_link__destroy(c->usdt_links[i]);
	c->n_usdt_links = 0;
}

static void *release_usdt(void *ctx)
{
	detach_usdt(ctx);
	return NULL;
}

static void detach(struct capture *c)
{
	if (c->releasing)
		pthread_join(c->releaser, NULL);
	c->releasing = false;
	detach_links(c);
	detach_usdt(c);
}

/* No annotation probe hit is under way on any CPU (annotate.bpf.c, "The stop"). */
static bool annotations_idle(struct capture *c, __s64 *running)
{
	__u32 zero = 0;
	__s64 n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(c->ann->maps.running), &zero, running))
		return false;
	for (uint32_t cpu = 0; cpu < c->ncpus; cpu++)
		n += running[cpu];
	return n == 0;
}

/* The annotation probes write nothing more, and what they wrote is in the rings; they are
 * detached by a thread of their own meanwhile, which capture__free waits for. When that cannot
 * be seen, they are detached here, which waits for the hits under way. */
static void stop_annotations(struct capture *c)
{
	__s64 *running = calloc(c->ncpus, sizeof(*running));
	uint64_t deadline = now_ns() + ANN_IDLE_NS;
	bool idle = false;

	if (!c->n_usdt_links || !running) {
		free(running);
		detach_usdt(c);
		return;
	}
	c->ann->bss->stopped = true;
	/* Before the counts are read: a hit that has not raised its count sees the flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (!(idle = annotations_idle(c, running)) && now_ns() < deadline)
		usleep(100);
	free(running);
	if (idle)
		c->releasing = !pthread_create(&c->releaser, NULL, release_usdt, c);
	if (!c->releasing)
		detach_usdt(c);
}

/* The stop is out of time: what the rings still hold is read without staging it, each record
 * counted, and with what is staged becomes one loss report a CPU at until (merge__abandon);
 * records after until are not lost but after the stop. */
static int give_up(struct capture *c, uint64_t until)
{
	int err = 0;

	c->counting = true;
	c->read_until = UINT64_MAX;
	for (uint32_t cpu = 0; cpu < c->ncpus && !err; cpu++) {
		struct ring *rg = &c->rings[cpu];

		rg->left = 0;
		err = ring_buffer__consume(rg->rb);
		err = err < 0 ? err : 0;
		c->unread_left += rg->left;
		if (!err && rg->left)
			err = merge__add_lost(c->merge, cpu, until, rg->left);
	}
	c->counting = false;
	if (!err)
		c->after_stop += merge__abandon(c->merge, until, &err);
	return err;
}

int capture__drain(struct capture *c, uint64_t until, uint64_t deadline)
{
	uint64_t now;
	int err;

	c->misses = count_misses(c);
	/* What the programs send from here is after the stop. */
	c->until = until;
	stop_annotations(c);
	detach_links(c);
	/* Until every ring is read to its end and delivered: a ring whose queue filled holds the
	 * watermark at its newest record read, as in a round of the run, and is read again once
	 * what could be delivered was; a ring too full to read by the deadline (-F 100000) is left
	 * for give_up to count. */
	c->drain_by = deadline;
	err = collect(c, &now, true);
	while (!err) {
		/* Out of time: what is left is counted, in one loss report a CPU, not written. */
		if (now_ns() >= deadline) {
			err = give_up(c, until);
			deadline = UINT64_MAX;
			c->drain_by = UINT64_MAX;
			c->any_unread = false;
			if (err)
				break;
		}
		err = merge__deliver(c->merge, c->any_unread ? merge__watermark(c->merge, UINT64_MAX)
							     : UINT64_MAX);
		/* A held record waits for work of another thread (unwind rows): not a spin. */
		if (err == -EBUSY)
			usleep(1000);
		else if (!err && c->any_unread)
			err = collect(c, &now, true);
		else if (err != -EAGAIN)
			break;
		err = err == -EBUSY || err == -EAGAIN ? 0 : err;
	}
	return err;
}

void capture__stats(const struct capture *c, struct capture_stats *out)
{
	struct merge_stats ms;

	merge__stats(c->merge, &ms);
	*out = (struct capture_stats){
		.records = ms.records - (c->after_stop - c->lost_after_stop),
		.lost = ms.lost - c->lost_after_stop,
		.out_of_order = ms.out_of_order,
		.misses = c->misses,
		.malformed = ms.malformed,
		.dropped = ms.dropped,
		.after_stop = c->after_stop,
		.staged = ms.staged,
		.dropped_samples = ms.dropped_samples,
		.abandoned = ms.abandoned + c->unread_left,
		.staged_peak = ms.peak_bytes,
	};
}

/* The kernel puts every page of the rows map in a mapping of it when it is made (BPF arrays
 * are mapped whole at mmap), so a mapping of all of it counted 16 MiB in the recorder's RSS
 * from the start, whatever the rows took: the array is mapped in steps of this much as rows
 * are appended, into a place reserved for all of it. */
#define ROWS_STEP_BYTES (1u << 20)

/* map_rows of lx_unwind_maps: maps the rows up to n, in steps, after those mapped already. */
static int map_rows(void *ctx, uint32_t n)
{
	struct capture *c = ctx;
	size_t want = (size_t)n * sizeof(struct lx_cfi_row), end;
	void *at;

	if (want <= c->rows_mapped)
		return 0;
	if (want > c->rows_bytes)
		return -EFBIG;
	end = (want + ROWS_STEP_BYTES - 1) / ROWS_STEP_BYTES * ROWS_STEP_BYTES;
	if (end > c->rows_bytes)
		end = c->rows_bytes;
	at = mmap((char *)c->rows + c->rows_mapped, end - c->rows_mapped, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED, bpf_map__fd(c->skel->maps.cfi_rows), (off_t)c->rows_mapped);
	if (at == MAP_FAILED)
		return -errno;
	c->rows_mapped = end;
	return 0;
}

int capture__unwind_maps(struct capture *c, struct lx_unwind_maps *out)
{
	size_t bytes = (size_t)bpf_map__max_entries(c->skel->maps.cfi_rows) * sizeof(struct lx_cfi_row);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *rows;

	if (!bpf_walker(c))
		return -ENOENT;
	if (!c->rows) {
		/* Reserved, not mapped: map_rows maps the map's pages in place. */
		bytes = (bytes + page - 1) / page * page;
		rows = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			    -1, 0);
		if (rows == MAP_FAILED) {
			int err = -errno;

			fprintf(stderr, "lxtrace: capture: mapping the unwind rows: %s\n", strerror(-err));
			return err;
		}
		c->rows = rows;
		c->rows_bytes = bytes;
	}
	out->rows = c->rows;
	out->rows_max = bpf_map__max_entries(c->skel->maps.cfi_rows);
	out->map_rows = map_rows;
	out->map_ctx = c;
	out->files_fd = bpf_map__fd(c->skel->maps.cfi_files);
	out->wanted_fd = bpf_map__fd(c->skel->maps.cfi_wanted);
	out->gen = (volatile __u64 *)&c->skel->bss->cfi_gen;
	return 0;
}

const struct features *capture__features(const struct capture *c)
{
	return &c->feat;
}

bool capture__annotations(const struct capture *c)
{
	return c->ann != NULL;
}

void capture__maps_stats(const struct capture *c, struct capture_maps_stats *out)
{
	struct maps_proc_stats st = { 0 };
	uint64_t u[LX_UNWIND_NSTATS] = { 0 };

	if (c->maps) {
		maps_proc__stats(c->maps, &st);
		capture__unwind_stats(c, u);
	}
	*out = (struct capture_maps_stats){ st.asked, st.answered, st.gone, st.reported,
					    st.tables_full, u[LX_UNWIND_ASKS_LOST] };
}

/* Counters of a per-CPU array map of n entries, each summed over the CPUs into out. */
static int sum_percpu(const struct capture *c, int fd, uint32_t n, uint64_t *out)
{
	uint64_t *vals = calloc(c->ncpus, sizeof(*vals));
	int err = 0;

	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals)) {
			err = -errno;
			break;
		}
		for (uint32_t cpu = 0; cpu < c->ncpus; cpu++)
			out[k] += vals[cpu];
	}
	free(vals);
	return err;
}

int capture__unwind_stats(const struct capture *c, uint64_t out[LX_UNWIND_NSTATS])
{
	return sum_percpu(c, bpf_map__fd(c->skel->maps.unwind_stats), LX_UNWIND_NSTATS, out);
}

int capture__python_maps(struct capture *c, int *threads_fd, int *procs_fd, int *layouts_fd)
{
	if (!bpf_walker(c))
		return -ENOENT;
	*threads_fd = bpf_map__fd(c->skel->maps.py_threads);
	*procs_fd = bpf_map__fd(c->skel->maps.py_procs);
	*layouts_fd = bpf_map__fd(c->skel->maps.py_layouts);
	return 0;
}

int capture__python_stats(const struct capture *c, uint64_t out[LX_PY_NSTATS])
{
	if (!bpf_walker(c))
		return -ENOENT;
	return sum_percpu(c, bpf_map__fd(c->skel->maps.py_stats), LX_PY_NSTATS, out);
}

void capture__free(struct capture *c)
{
	if (!c)
		return;
	detach(c);
	free(c->usdt_links);
	for (uint32_t cpu = 0; c->rings && cpu < c->ncpus; cpu++)
		ring_buffer__free(c->rings[cpu].rb);
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->rows)
		munmap(c->rows, c->rows_bytes);
	annotate__destroy(c->ann);
	lxtrace__destroy(c->skel);
	maps_proc__free(c->maps);
	for (uint32_t cpu = 0; c->rings && cpu < c->ncpus; cpu++)
		if (c->rings[cpu].fd >= 0)
			close(c->rings[cpu].fd);
	free(c->rings);
	merge__free(c->merge);
	free(c->lost_vals);
	free(c->stage_vals);
	free(c->links);
	free(c);
}
