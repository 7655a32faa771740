/* cmd_record.c - `lxtrace record`: traces the whole machine, some processes and their children,
 * a cgroup, or a command it starts, into a Go execution trace file until a duration ends,
 * SIGINT/SIGTERM/SIGHUP, the command exits or the target processes are gone; then prints a
 * summary.
 *
 * With a command, lxtrace behaves like `perf record -- CMD`: a Ctrl-C on the terminal reaches
 * the command directly (same process group) and lxtrace keeps recording until the command
 * exits, then exits with its status. A signal sent to lxtrace alone (kill) is passed on to the
 * command, which decides when the recording ends. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/libbpf.h>

#include "format/go119/close.h"
#include "format/go123/restack.h"
#include "format/go123/writer.h"
#include "format/go119/writer.h"
#include "lib/autogroup.h"
#include "lib/clock.h"
#include "lib/disk_cache.h"
#include "lib/file_worker.h"
#include "lib/sudo_user.h"
#include "user/capture/capture.h"
#include "user/capture/features.h"
#include "user/capture/shed.h"
#include "user/capture/startstate.h"
#include "user/cli/cmd.h"
#include "user/cli/output_file.h"
#include "user/cli/record_args.h"
#include "user/cli/record_flight.h"
#include "user/cli/record_summary.h"
#include "user/model/model.h"
#include "user/stacks/cfi_loader.h"
#include "user/stacks/python.h"
#include "user/target/launch.h"
#include "user/target/members.h"
#include "user/target/target.h"
#include "user/target/usdt_files.h"

#define PREFIX "lxtrace record: "
#define STATUS_PERIOD_NS 1000000000ULL
/* How often the batches buffered so far go to the file: a recorder killed (SIGKILL, the OOM
 * killer, a crash) leaves a trace that ends at most this long before, as the writer keeps
 * every prefix that ends on a batch boundary valid; a quiet machine fills a batch buffer only
 * after many seconds. */
#define FLUSH_PERIOD_NS 1000000000ULL
/* Every this often the free pages inside glibc's heap go back to the kernel (malloc_trim):
 * blocks freed amid live ones (libdw's of a binary closed, stacks staged during a backlog)
 * stay resident otherwise, 26 of the heap's 100 MB 3.5 minutes into a whole machine under
 * churn. */
#define TRIM_PERIOD_NS 10000000000ULL
/* Under saturation (perf bench sched messaging: 160 tasks on 2 CPUs) a reader with a fair share
 * of a CPU is starved and the rings overflow (27% of the records lost at 4 MiB per CPU, still
 * 18% at 8 MiB); at nice -10 it runs when it wakes, and the same loads lose nothing while the
 * reader takes no more CPU (docs/record.md). */
#define READER_NICE -10

/* The signal that asked to stop, and one sent to lxtrace alone (not by the terminal to the
 * whole foreground process group) that the command should get too. */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t forward_signal;
static bool verbose;


/* Loading tracing programs needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN on older kernels. */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

#define HAS_CAP(c) (data[(c) / 32].effective & (1U << ((c) % 32)))
	if (syscall(SYS_capget, &hdr, data)) {
		fprintf(stderr, PREFIX "reading capabilities: %s\n", strerror(errno));
		return -errno;
	}
	if (HAS_CAP(CAP_SYS_ADMIN) || (HAS_CAP(CAP_BPF) && HAS_CAP(CAP_PERFMON)))
		return 0;
#undef HAS_CAP
	fprintf(stderr, PREFIX "permission denied: loading BPF programs needs root "
		"(CAP_BPF and CAP_PERFMON); try sudo\n");
	return -EPERM;
}

/* What the kernel offers, probed before anything is opened: a kernel lxtrace cannot record on
 * is said in one line. */
static int check_kernel(struct features *f)
{
	enum feature missing;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, PREFIX "/sys/kernel/btf/vmlinux: %s: the kernel has no BTF "
			"(CONFIG_DEBUG_INFO_BTF), which lxtrace's programs need\n", strerror(errno));
		return -ENOENT;
	}
	features__probe(f);
	if (features__enough(f, &missing))
		return 0;
	fprintf(stderr, PREFIX "kernel %s has no %s, which lxtrace's programs need (%s)\n",
		f->release, features__name(missing), features__needs(missing));
	return -ENOTSUP;
}

/* What a recording with these options uses of the kernel (enum feature_use). */
static unsigned feature_uses(const struct record_args *a)
{
	return USE_ALWAYS |
	       (a->sample_hz || a->stacks == STACKS_USER || a->stacks == STACKS_BOTH ?
		USE_USER_STACKS : 0) |
	       (a->npid_lists || a->cgroup || a->command ? USE_TARGET : 0) |
	       (a->n_usdt || a->npid_lists || a->command ? USE_ANNOTATIONS : 0);
}

/* Opened before anything is loaded, so a bad path fails fast (user/cli/output_file.h: no
 * link followed, no file taken over, a second recording refused). A trace shows every process
 * of the machine: the file is 0600, and belongs to the user who ran sudo. A flight recorder,
 * which makes its files beside the path, holds the path instead (output_file__hold), by the
 * same lock. */
static struct output_file *take_output(const char *path,
				       struct output_file *(*how)(const char *, uid_t, gid_t,
								  char *, size_t))
{
	struct output_file *f = NULL;
	char why[PATH_MAX + 256];
	uid_t uid;
	gid_t gid;

	if (sudo_user__ids(&uid, &gid, why, sizeof(why))) {
		fprintf(stderr, PREFIX "%s\n", why);
		return NULL;
	}
	f = how(path, uid, gid, why, sizeof(why));
	if (!f)
		fprintf(stderr, PREFIX "%s\n", why);
	return f;
}

/* The recording's file, and each of a flight recorder's: at its path only once begun (the
 * recording's) or whole (a flight recorder's, output_file__publish). */
static struct output_file *prepare_output(const char *path)
{
	return take_output(path, output_file__prepare);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

/* SI_KERNEL: the terminal's signal to its foreground process group, which a command shares. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	stop_requested = sig;
	if (si->si_code != SI_KERNEL)
		forward_signal = sig;
}

/* Passes a signal sent to lxtrace alone on to the command (none: nothing to pass on). */
static void pass_signal(struct launch *cmd)
{
	if (cmd && forward_signal) {
		launch__signal(cmd, forward_signal);
		forward_signal = 0;
	}
}

/* Waits for the command after the recording, passing on the signals lxtrace gets: a
 * supervisor's SIGTERM to lxtrace alone must still end the command, or both stay. 1 with its
 * status, or -errno. */
static int wait_command(struct launch *cmd, int *status)
{
	for (;;) {
		int rc;

		pass_signal(cmd);
		rc = launch__wait(cmd, false, status);
		if (rc)
			return rc;
		/* A signal cuts the sleep short. */
		usleep(50000);
	}
}

/* No SA_RESTART: the signal must cut the ring buffer wait short. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed terminal or SSH session ends the recording as Ctrl-C does, not by killing it. */
	sigaction(SIGHUP, &sa, NULL);
}

/* Where capture delivers; remembers the model's error apart from capture's own, which capture
 * has already reported. */
struct sink {
	struct model *model;
	struct cfi_loader *cfi;
	bool chosen;			/* chosen processes are recorded, not the whole machine */
	struct capture *cap;
	uint64_t deliver_until;		/* CLOCK_MONOTONIC ns: this round's delivery ends */
	uint64_t stop_at;		/* the recording's end, once it is being finished; else 0 */
	uint64_t progress_at;		/* the next line saying what is left to finish */
	struct shed shed;		/* shedding work while behind */
	unsigned delivered;
	int err;
};

/* The end of a recording waits this long at most for unwind rows that a busy machine has not
 * given the loader the CPU to compile: then the stacks that wait for them end where the rows
 * are missing, marked and counted as those that waited too long (callstacks.h). */
#define STOP_WAIT_NS (1000 * 1000 * 1000ULL)
/* While finishing takes longer than this, a line this often says what is left. */
#define STOP_PROGRESS_NS (1000 * 1000 * 1000ULL)
/* What a recorder still behind at the stop writes for at most: then the records left are
 * counted lost at the end, so that the file is complete within ~3 s of the stop whatever the
 * load (issue 30: 9 s late under bench/load.sh's, 48 s in one run). */
#define STOP_DRAIN_NS (2000 * 1000 * 1000ULL)

/* Finishing the recording: a line a second once it takes more than one. */
static void stop_progress(struct sink *s, uint64_t now)
{
	struct capture_stats cs;

	if (now < s->progress_at)
		return;
	s->progress_at = now + STOP_PROGRESS_NS;
	capture__stats(s->cap, &cs);
	fprintf(stderr, PREFIX "finishing: %.1f s after the stop, %llu records still to write "
		"(those left at %.1f s are counted lost)%s\n",
		(now - s->stop_at) / 1e9, (unsigned long long)cs.staged, STOP_DRAIN_NS / 1e9,
		now - s->stop_at >= STOP_WAIT_NS ? "; stacks no longer wait for unwind rows" : "");
}

/* A round of delivery ends after this long, even with records left (they wait for the next
 * round): the rings are read, and new mappings opened and their unwind rows loaded, while the
 * model is slow, e.g. symbolizing the first stacks of every process at the start. */
#define DELIVER_NS (10 * 1000 * 1000ULL)

/* A record stamped ts is written at now: what the model sheds from here (shed.h). */
static void keep_up(struct sink *s, uint64_t ts, uint64_t now)
{
	shed__update(&s->shed, ts, now);
	model__shed(s->model, s->shed.waits.on, s->shed.symbols.on);
}

static int to_model(void *ctx, const struct lx_rec *r, size_t size)
{
	struct sink *s = ctx;
	uint64_t now;
	int err;

	/* Asks for unwind rows, answered when peeked at: nothing for the trace. */
	if (r->type == LX_REC_CFI_WANT)
		return 0;
	/* -EBUSY: a stack waits for rows the loader is compiling (or for its binary's file); the
	 * record comes again, and every later one waits with it: not once the recorder is behind
	 * (shed.h), nor at the stop after STOP_WAIT_NS. */
	err = model__record(s->model, r, size);
	if (err == -EBUSY) {
		bool wait = true;

		now = now_ns();
		keep_up(s, r->ts, now);
		if (s->shed.waits.on)
			wait = false;
		if (s->stop_at) {
			stop_progress(s, now);
			if (now - s->stop_at >= STOP_WAIT_NS) {
				model__stop_waiting(s->model);
				wait = false;
			}
		}
		if (!wait)
			err = model__record(s->model, r, size);
	}
	if (err == -EBUSY)
		return err;
	s->err = err;
	if (s->err)
		return s->err;
	/* The clock is read every 64 records: a read costs more than many a record. */
	if (!(++s->delivered % 64)) {
		now = now_ns();
		keep_up(s, r->ts, now);
		if (s->stop_at)
			stop_progress(s, now);
		if (now > s->deliver_until)
			return -EAGAIN;
	}
	return 0;
}

static int peek_to_model(void *ctx, const struct lx_rec *r, size_t size)
{
	struct sink *s = ctx;

	/* A stack is waiting for these rows: load them now, while the process runs. */
	if (r->type == LX_REC_CFI_WANT && size >= sizeof(struct lx_cfi_want) && s->cfi)
		cfi_loader__want(s->cfi, (const struct lx_cfi_want *)r);
	/* A new mapping of code: its rows are loaded before a stack needs them; a chosen
	 * process's at once, as its binaries' were before the start (docs/stacks.md, "First sight
	 * under load"): the whole machine maps too many. */
	if (r->type == LX_REC_MMAP && size >= sizeof(struct lx_mmap) && s->cfi)
		cfi_loader__mapped(s->cfi, (const struct lx_mmap *)r, s->chosen);
	if (s->model)
		model__peek(s->model, r, size);
	return 0;
}

static int lost_to_model(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	struct sink *s = ctx;

	s->err = model__lost(s->model, cpu, ts, n);
	return s->err;
}

/* Errors of the model that are the output file's: the writer failed writing it. */
static bool is_write_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG || err == -EIO || err == -EPIPE;
}

/* The writer failed writing the file (a full disk, most often): the file ends on the last
 * batch that reached it. What that batch leaves open is closed there, into the disk reserve
 * the writer kept, with a note counting the events that never reached it; said in one line. */
static void close_after_write_error(const char *path, int err, struct gt_writer *w, int fd,
				    uint32_t nprocs)
{
	struct gt_writer_fstate fs;
	char msg[256];
	int ret;

	gt_writer__file_state(w, NULL, &fs);
	snprintf(msg, sizeof(msg), "lxtrace record: %s: the trace ends here; %llu events not "
		 "written", strerror(-err), (unsigned long long)fs.lost);
	ret = gt_close__seal(w, fd, nprocs, &(struct gt_close_note){
		MODEL_SPARE_GOID, nprocs - 1, "lxtrace (write error)", "lxtrace.lost", msg });
	if (!ret)
		fprintf(stderr, PREFIX "%s: %s; the trace ends there and was closed (%llu events "
			"not written)\n", path, strerror(-err), (unsigned long long)fs.lost);
	else
		fprintf(stderr, PREFIX "%s: %s; closing the trace failed too (%s): run `lxtrace "
			"repair %s` once there is space\n", path, strerror(-err), strerror(-ret), path);
}

struct output {
	const char *path;
	struct gt_writer *writer;	/* NULL for the go1.23 format */
	int fd;
	uint32_t nprocs;
	struct go123_writer *writer2;	/* the go1.23 format's, or NULL */
};

/* The go1.23 writer cut the file back to its last whole generation, if any. */
static void report_v2_write_error(const struct output *o, int err)
{
	struct go123_writer_stats st;

	go123_writer__stats(o->writer2, &st);
	if (st.generations)
		fprintf(stderr, PREFIX "%s: %s; the trace ends on its last whole generation (%llu "
			"of about a second each), which Go 1.23's viewer opens; %llu events not "
			"written\n", o->path, strerror(-err), (unsigned long long)st.generations,
			(unsigned long long)st.lost);
	else
		fprintf(stderr, PREFIX "%s: %s before its first generation was written: the "
			"file holds no trace (%llu events not written)\n", o->path, strerror(-err),
			(unsigned long long)st.lost);
}

static void report_model_error(const struct output *o, const char *step, int err)
{
	if (is_write_error(err) && o->writer)
		close_after_write_error(o->path, err, o->writer, o->fd, o->nprocs);
	else if (is_write_error(err) && o->writer2)
		report_v2_write_error(o, err);
	else if (is_write_error(err))
		fprintf(stderr, PREFIX "%s: %s\n", o->path, strerror(-err));
	else
		fprintf(stderr, PREFIX "model: %s: %s\n", step, strerror(-err));
}

/* The cache of unwind rows across recordings: $LXTRACE_CACHE_DIR, or DISK_CACHE_DEFAULT_DIR
 * when it is not set; none when it is empty or "off", or when the directory is refused
 * (lib/disk_cache.h), which is said: every binary is then compiled, as without a cache. */
static struct disk_cache *open_row_cache(void)
{
	const char *dir = getenv("LXTRACE_CACHE_DIR");
	struct disk_cache *c;

	if (!dir)
		dir = DISK_CACHE_DEFAULT_DIR;
	if (!*dir || !strcmp(dir, "off"))
		return NULL;
	c = disk_cache__open(dir, DISK_CACHE_DEFAULT_MAX);
	if (!c)
		fprintf(stderr, PREFIX "warning: cache %s: %s (recording without it; "
			"LXTRACE_CACHE_DIR=off says so quietly)\n", dir,
			errno == EPERM ? "not a directory only root may enter" :
			errno == ELOOP ? "a symbolic link on its path" : strerror(errno));
	return c;
}

/* The loader of unwind rows, when user stacks are taken, with the cache it reads and fills. */
static int new_cfi_loader(struct capture *cap, struct disk_cache **cache, struct cfi_loader **out)
{
	struct cfi_loader_opts o = { .sz = sizeof(o) };
	int err = capture__unwind_maps(cap, &o.maps);

	*out = NULL;
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	o.cache = *cache = open_row_cache();
	*out = cfi_loader__new(&o);
	if (!*out) {
		err = -errno;
		fprintf(stderr, PREFIX "unwinder: %s\n", strerror(-err));
	}
	return err;
}

struct status {
	uint64_t start, next, last_records, last_ns;
};

/* The live line: only for a person watching a terminal. */
static void show_status(struct status *s, const struct capture *cap, uint64_t now)
{
	struct capture_stats cs;
	double secs;

	if (now < s->next)
		return;
	capture__stats(cap, &cs);
	secs = (now - s->last_ns) / 1e9;
	fprintf(stderr, "\r" PREFIX "%.0f s, %.0f events/s, %llu lost   ", (now - s->start) / 1e9,
		secs > 0 ? (cs.records - s->last_records) / secs : 0.0, (unsigned long long)cs.lost);
	s->last_records = cs.records;
	s->last_ns = now;
	s->next = now + STATUS_PERIOD_NS;
}

/* The target the arguments name, or NULL for the whole machine (*err 0). A command is forked
 * here, held until launch__release, and its process is the target; with cmd NULL (--check)
 * it is not started, and the target holds no process yet. */
static struct target *make_target(const struct record_args *a, struct launch **cmd, int *err)
{
	struct target *t = NULL;

	*err = 0;
	if (a->cgroup) {
		t = target__new_cgroup(a->cgroup);
		*err = t ? 0 : -errno;
		return t;
	}
	if (!a->npid_lists && !a->command)
		return NULL;
	t = target__new_pids();
	if (!t) {
		*err = -ENOMEM;
		fprintf(stderr, PREFIX "out of memory\n");
		return NULL;
	}
	for (int i = 0; i < a->npid_lists && !*err; i++)
		*err = target__add_pids(t, a->pid_lists[i]);
	if (!*err && a->command && cmd) {
		*cmd = launch__new(a->command, a->as_root);
		*err = *cmd ? target__add_pid(t, launch__pid(*cmd)) : -errno;
	}
	if (*err) {
		target__free(t);
		t = NULL;
	}
	return t;
}

/* After attach: a target process that exited before the programs could see it would stay in
 * the map forever. */
static int drop_gone_targets(struct capture *cap, const struct target *t)
{
	for (size_t i = 0; i < target__npids(t); i++) {
		if (target__pid_gone(target__pid(t, i))) {
			int err = capture__drop_target(cap, target__pid(t, i));

			if (err)
				return err;
		}
	}
	return 0;
}

/* The files whose annotation probes to attach: the --usdt paths, and for a target the files
 * that carry probes. A command's program is known before it runs (its libraries are not: they
 * need --usdt); a running process's are whatever it has mapped executable now. */
static struct usdt_files *find_usdt_files(const struct record_args *a, const struct target *t,
					  const struct launch *cmd, int *err)
{
	struct usdt_files *s = usdt_files__new();

	*err = s ? 0 : -ENOMEM;
	if (!s) {
		fprintf(stderr, PREFIX "out of memory\n");
		return NULL;
	}
	for (size_t i = 0; i < a->n_usdt && !*err; i++)
		*err = usdt_files__add(s, a->usdt[i]);
	/* The command's process is in the target, but until released it is a copy of lxtrace:
	 * its program is the file it will exec. */
	if (!*err && cmd) {
		*err = usdt_files__add_annotated(s, launch__path(cmd));
	} else if (!*err && t && target__mode(t) == LX_TARGET_PIDS) {
		for (size_t i = 0; i < target__npids(t) && !*err; i++) {
			*err = usdt_files__add_process(s, target__pid(t, i));
			if (*err == -ESRCH)	/* gone already: drop_gone_targets says so */
				*err = 0;
		}
	}
	if (*err) {
		usdt_files__free(s);
		return NULL;
	}
	return s;
}

/* Attaches to every file of s for every process: the programs drop the hits of threads outside
 * the target (target.bpf.h), so a process the target forks later is covered from its start.
 * Without BPF cookies (before 5.15) libbpf attaches only to a running process whose mappings
 * it reads: to each process -p named that maps the file; with no such process the recording
 * goes on without annotations, said once (and in the summary). */
static int attach_usdt(struct capture *cap, const struct usdt_files *s, const struct target *t,
		       const struct launch *cmd)
{
	bool cookies = capture__features(cap)->have[FEAT_BPF_COOKIE];
	bool pids = t && target__mode(t) == LX_TARGET_PIDS && !cmd;
	int err = 0;

	if (!capture__annotations(cap))
		return 0;	/* refused at load: said then */
	if (!cookies && !pids && usdt_files__count(s)) {
		fprintf(stderr, PREFIX "annotations not recorded: on this kernel (%s) they need a "
			"running process named by -p (%s: %s)\n", capture__features(cap)->release,
			features__name(FEAT_BPF_COOKIE), features__needs(FEAT_BPF_COOKIE));
		return 0;
	}
	for (size_t i = 0; i < usdt_files__count(s) && !err; i++) {
		const char *path = usdt_files__path(s, i);
		size_t attached = 0;

		if (cookies) {
			err = capture__attach_usdt(cap, -1, path);
			attached = !err;
		}
		/* A process that does not map the file has no probes of it. */
		for (size_t k = 0; !cookies && k < target__npids(t); k++)
			attached += capture__attach_usdt(cap, target__pid(t, k), path) == 0;
		if (!cookies && !attached)
			err = -ENOENT;
		if (!err && verbose)
			fprintf(stderr, PREFIX "annotations of %s attached\n", path);
	}
	return err;
}

/* What a recording writes to or records from and that went away meanwhile, said once each:
 * the trace's file unlinked (its directory removed: what is written goes nowhere) and the
 * cgroup recorded (no thread is left in it). */
static void check_vanished(const struct record_args *a, const struct output_file *f,
			   bool *file_gone, bool *cgroup_gone)
{
	struct stat st;

	if (f && !*file_gone && !fstat(output_file__fd(f), &st) && S_ISREG(st.st_mode) &&
	    !st.st_nlink) {
		*file_gone = true;
		fprintf(stderr, PREFIX "warning: %s was removed while recording: the trace goes "
			"nowhere; stop (Ctrl-C) and record again\n", a->output);
	}
	if (a->cgroup && !*cgroup_gone && stat(a->cgroup, &st) && errno == ENOENT) {
		*cgroup_gone = true;
		fprintf(stderr, PREFIX "warning: the cgroup %s was removed: no thread is left to "
			"record\n", a->cgroup);
	}
}

/* --ready-fd: recording has begun. A reader gone (EPIPE) costs the recording nothing: the
 * SIGPIPE, sent to the writing thread, is held and taken back. */
static void say_ready(int fd)
{
	static const char line[] = "ready\n";
	sigset_t pipe_sig, old;
	ssize_t n;
	int err;

	if (fd < 0)
		return;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
	n = write(fd, line, sizeof(line) - 1);
	err = n < 0 ? errno : 0;
	if (err == EPIPE)
		sigtimedwait(&pipe_sig, NULL, &(struct timespec){ 0 });
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (n != (ssize_t)sizeof(line) - 1)
		fprintf(stderr, PREFIX "warning: --ready-fd %d: %s (recording anyway)\n", fd,
			err ? strerror(err) : "short write");
	close(fd);
}

static void announce(const struct record_args *a)
{
	const char *what = a->command ? a->command[0] : a->cgroup ? a->cgroup :
			   a->npid_lists ? "the target processes" : "the machine";
	char to[4200];

	if (a->flight)
		snprintf(to, sizeof(to), "memory, the last %g s, for triggers (files from %s)",
			 a->flight, a->output);
	else
		snprintf(to, sizeof(to), "%s", a->output);
	if (a->duration)
		fprintf(stderr, PREFIX "recording %s to %s for %g s%s\n", what, to, a->duration,
			a->command ? "" : " (Ctrl-C stops)");
	else if (a->command)
		fprintf(stderr, PREFIX "recording %s to %s until it exits\n", what, to);
	else
		fprintf(stderr, PREFIX "recording %s to %s until Ctrl-C\n", what, to);
}

/* Everything one recording holds, taken phase by phase and given back by recording__close. */
struct recording {
	struct record_args args;
	struct autogroup autogroup;	/* the session's nice, raised for the reader */
	struct features feat;
	struct target *target;
	struct launch *cmd;
	struct usdt_files *usdt;
	struct output_file *file, *held;
	struct capture *cap;
	struct gt_writer *writer;	/* --format=go1.19 */
	struct go123_writer *writer2;	/* --format=go1.23 */
	struct model *model;
	struct go123_restack_stats restacked;	/* the go1.23 file copied with JIT names */
	bool restack_tried;
	struct startstate *start_state;	/* the stacks of the threads off the CPU at the start */
	struct record_flight *flight;
	struct sink sink;
	struct disk_cache *row_cache;	/* NULL: none */
	struct python *py;		/* Python processes for the BPF walk; NULL: none */
	struct output out;
	bool stack_kern, stack_user;
	uint64_t start, end;	/* the trace's */
	bool cmd_done, cmd_failed;
	int cmd_status;
};

/* Pre-flight, after the privileges: what would fail later with a worse message, before
 * anything is loaded: the kernel, the target (a command is forked here), the files whose
 * annotation probes to attach. */
static int preflight(struct recording *r)
{
	int err;

	/* The ready descriptor is lxtrace's alone: a command holding it too would keep its reader
	 * from ever seeing the end of file that says the recording did not start. */
	if (r->args.ready_fd >= 0)
		fcntl(r->args.ready_fd, F_SETFD, FD_CLOEXEC);
	err = check_kernel(&r->feat);
	/* Forked now, while this process has no other thread and holds nothing but its standard
	 * streams (lib/file_worker.h). Without it no binary of a process is read. */
	if (!err && (err = file_worker__start()))
		fprintf(stderr, PREFIX "cannot start the file worker: %s\n", strerror(-err));
	if (!err)
		r->target = make_target(&r->args, &r->cmd, &err);
	if (!err)
		r->usdt = find_usdt_files(&r->args, r->target, r->cmd, &err);
	return err;
}

/* The trace's file, or the path a flight recorder holds. */
static int take_file(struct recording *r)
{
	if (r->args.flight)
		r->held = take_output(r->args.output, output_file__hold);
	else
		r->file = prepare_output(r->args.output);
	return r->file || r->held ? 0 : -EIO;
}

/* What the capture is told of a recording, from which it chooses its programs: the same for
 * the recording and for --check, so that the check loads what the recording would. */
static struct capture_opts capture_options(struct recording *r, bool annotations)
{
	const struct record_args *a = &r->args;

	return (struct capture_opts){
		.sz = sizeof(struct capture_opts),
		.ring_bytes = (size_t)(a->buffer_mib * 1024 * 1024),
		.syscalls = a->syscalls == MODEL_SYSCALLS_ALL,
		/* Each call's length, in either format (a go1.19 file marks returns with a log). */
		.sysrets = a->syscalls == MODEL_SYSCALLS_ALL,
		.annotations = annotations,
		.self_tgid = getpid(),
		.helper_tgid = (uint32_t)file_worker__pid(),
		.sample_hz = a->sample_hz,
		.sample_idle = a->sample_idle,
		.stack_kern = r->stack_kern,
		.stack_user = r->stack_user,
		.on_record = to_model,
		.on_peek = peek_to_model,
		.on_lost = lost_to_model,
		.ctx = &r->sink,
		.target_mode = r->target ? target__mode(r->target) : LX_TARGET_ALL,
		.cgroup_id = r->target ? target__cgroup_id(r->target) : 0,
		.cgroup_level = r->target ? target__cgroup_level(r->target) : 0,
		.features = &r->feat,
	};
}

/* The BPF side opened, configured and loaded, the target processes named to the programs,
 * and the loader of unwind rows. */
static int open_capture(struct recording *r)
{
	struct capture_opts o;
	int err;

	/* Root may raise its priority; without CAP_SYS_NICE the recording still works. A command
	 * was forked before this, so it keeps the priority it was started with. */
	if (setpriority(PRIO_PROCESS, 0, READER_NICE) && verbose)
		fprintf(stderr, PREFIX "raising the reader's priority (nice %d): %s\n", READER_NICE,
			strerror(errno));
	/* Where the kernel schedules by session, that nice counts only among the session's own
	 * tasks: the session is raised too (lib/autogroup.h), but not with a command in it, which
	 * would be raised with it. Under bench/load.sh the reader ran 0.3 s in 8 s without, 1.7 s
	 * with (docs/record.md, "The reader's priority"). */
	if (!r->cmd && (err = autogroup__raise(&r->autogroup, NULL, READER_NICE)) && verbose)
		fprintf(stderr, PREFIX "raising the session's priority (nice %d): %s\n", READER_NICE,
			strerror(-err));
	o = capture_options(r, usdt_files__count(r->usdt) > 0);
	r->cap = capture__new(&o);
	if (!r->cap)
		return -errno;
	err = capture__load(r->cap);
	for (size_t i = 0; !err && r->target && i < target__npids(r->target); i++)
		err = capture__add_target(r->cap, target__pid(r->target, i));
	if (!err)
		err = new_cfi_loader(r->cap, &r->row_cache, &r->sink.cfi);
	r->sink.cap = r->cap;
	r->sink.chosen = r->target != NULL;
	return err;
}

/* The writer and the model; they write nothing but the header before the start. */
/* Python frames: where the BPF side walks them, the processes running Python are found for it
 * and their code objects named for the model. */
static int use_python(struct recording *r)
{
	struct python_maps pm;

	if (capture__python_maps(r->cap, &pm.threads_fd, &pm.procs_fd, &pm.layouts_fd))
		return 0;
	r->py = python__new(NULL, &pm);
	if (!r->py) {
		fprintf(stderr, PREFIX "python frames: %s\n", strerror(errno));
		return -errno;
	}
	model__use_python(r->model, r->py);
	return 0;
}

static int open_trace(struct recording *r)
{
	const struct record_args *a = &r->args;
	int ncpus = libbpf_num_possible_cpus(), err;
	char why[PATH_MAX + 256];
	struct gt_writer_opts wo = {
		.sz = sizeof(struct gt_writer_opts),
		.fd = r->file ? output_file__fd(r->file) : -1,
		.nprocs = ncpus + 1,
		.frequency = 1000000000,
		.reserve = gt_close__reserve(ncpus + 1),
	};
	struct model_opts mo;
	uid_t sudo_uid;
	gid_t sudo_gid;

	/* A flight recorder takes the batches instead of the file. */
	if (a->flight) {
		r->flight = record_flight__new(a, ncpus + 1, prepare_output);
		if (!r->flight)
			return -ENOMEM;
		record_flight__writer_opts(r->flight, &wo);
		wo.reserve = 0;
	}
	if (a->format == FORMAT_GO123) {
		struct go123_writer_opts wo2 = { .sz = sizeof(wo2), .fd = wo.fd, .nprocs = wo.nprocs,
					       .frequency = wo.frequency };

		if (r->flight)
			record_flight__writer2_opts(r->flight, &wo2);
		r->writer2 = go123_writer__new(&wo2);
	} else
		r->writer = gt_writer__new(&wo);
	if (!r->writer && !r->writer2) {
		err = -errno;
		fprintf(stderr, PREFIX "%s: starting the trace: %s\n", a->output, strerror(-err));
		return err;
	}
	/* Valid: take_output checked it. */
	sudo_user__ids(&sudo_uid, &sudo_gid, why, sizeof(why));
	mo = (struct model_opts){
		.sz = sizeof(struct model_opts),
		.writer = r->writer,
		.writer2 = r->writer2,
		.ncpus = ncpus,
		.syscalls = a->syscalls,
		.sysrets = a->syscalls == MODEL_SYSCALLS_ALL,
		.proc_root = "/proc",
		.keep = r->target ? target__keep : NULL,
		.keep_ctx = r->target,
		.rss = r->target != NULL,
		.enqueue = true,
		.stacks = a->sample_hz || a->stacks != STACKS_NONE,
		.trusted_uid = sudo_uid,
		.helper_pid = (uint32_t)file_worker__pid(),
	};
	if (r->flight)
		record_flight__model_opts(r->flight, &mo);
	r->model = model__new(&mo);
	r->out = (struct output){ a->output, r->writer, r->file ? output_file__fd(r->file) : -1,
				  ncpus + 1, r->writer2 };
	if (!r->model) {
		err = -errno;
		report_model_error(&r->out, "creating the model", err);
		return err;
	}
	r->sink.model = r->model;
	model__use_rows(r->model, r->sink.cfi);
	return use_python(r);
}

/* --check: the feature table, then what these options would do without. The programs a
 * recording with these options would load are loaded (and verified by this kernel) and let go:
 * a program the probes call fit but the verifier refuses is found here, as the recording would
 * find it, not only at the next recording. A command is not started. 0 when a recording can
 * run here. */
static int print_check(struct recording *r)
{
	const struct record_args *a = &r->args;
	struct capture_opts o;
	char start_why[160] = "";
	int err = check_kernel(&r->feat);

	if (err == -ENOENT)
		return 1;
	if (!err)
		r->target = make_target(a, NULL, &err);
	if (!err) {
		o = capture_options(r, feature_uses(a) & USE_ANNOTATIONS);
		r->cap = capture__new(&o);
		err = r->cap ? capture__load(r->cap) : -errno;
		if (r->cap)
			r->feat = *capture__features(r->cap);
	}
	/* The start's program is loaded too: its refusal is a loss of its own. */
	if (!err && (r->stack_kern || r->stack_user))
		startstate__free(startstate__read(&r->feat, (uint32_t[]){ 0 }, 0, r->stack_kern,
						  r->stack_user, NULL, start_why, sizeof(start_why)));
	features__print_table(&r->feat, stdout);
	printf("\nA recording with these options, here:\n");
	if (err)
		printf("  cannot run\n");
	else if (!features__print_missing(&r->feat, feature_uses(a), "  ", stdout) &&
		 !start_why[0])
		printf("  misses nothing\n");
	if (!err && start_why[0])
		printf("  threads asleep at the start: %s\n", start_why);
	return err ? 1 : 0;
}

static const struct lx_stack *start_stack(void *ctx, uint32_t tid, bool *runnable,
					  size_t *size, const struct lx_pystack **py)
{
	return startstate__stack(ctx, tid, runnable, size, py);
}

/* The Python walk's maps, for the stacks read at the start to have their Python frames:
 * into *py, NULL where the programs walk none. */
static const struct startstate_py *start_python(const struct recording *r,
						 struct startstate_py *py)
{
	int procs_fd;

	return r->py && !capture__python_maps(r->cap, &py->threads_fd, &procs_fd,
					       &py->layouts_fd) ? py : NULL;
}

/* With stacks: the stacks of the threads asleep or waiting for a CPU now, for the init phase
 * to block them at, or show them waiting at (startstate.h). Without them the recording goes
 * on, their blocks naming the syscall alone, said in one line with say. */
static void read_start_state(struct recording *r, bool say)
{
	struct startstate_py py;
	char why[160];
	uint32_t *tids = NULL;
	size_t n = 0;
	int err;

	/* The whole machine's: every thread, read without a scan of /proc. */
	err = r->target ? model__start_threads(r->model, &tids, &n) : 0;
	if (!err && r->target && !n)
		return;
	if (!err) {
		r->start_state = startstate__read(capture__features(r->cap), tids, n, r->stack_kern,
						  r->stack_user, start_python(r, &py), why,
						  sizeof(why));
		err = r->start_state ? 0 : -errno;
	} else {
		snprintf(why, sizeof(why), "%s", strerror(-err));
	}
	free(tids);
	if (why[0] && say)
		fprintf(stderr, PREFIX "threads asleep at the start: %s\n", why);
	model__start_stacks(r->model, r->start_state ? start_stack : NULL, r->start_state);
}

/* Threads of the target first seen now, asleep (a process moved into the cgroup while it
 * sleeps): their stacks read while they sleep, for their wakeup to show them blocked at it
 * (model__late_threads). A failure leaves them shown as before, created at their wakeup. */
static void read_late_state(struct recording *r)
{
	uint32_t *tids = NULL, *in = NULL;
	struct startstate_py py;
	size_t n = 0, nin = 0;
	struct startstate *s;
	char why[160];
	int err;

	err = target__threads(r->target, &in, &nin);
	if (!err)
		err = model__late_threads(r->model, in, nin, &tids, &n);
	free(in);
	if (err || !n) {
		free(tids);
		return;
	}
	/* Their processes, noted by model__late_threads, read if they run Python: the stacks
	 * read next carry their Python frames, as the start's do. */
	python__refresh(r->py, now_ns());
	s = startstate__read(capture__features(r->cap), tids, n, r->stack_kern, r->stack_user,
			     start_python(r, &py), why, sizeof(why));
	free(tids);
	if (s)
		model__late_stacks(r->model, start_stack, s, now_ns());
	startstate__free(s);
}

/* Whether the stacks of the threads off the CPU at the start are read: with stacks. */
static bool start_stacks_wanted(const struct recording *r)
{
	return r->stack_kern || r->stack_user;
}

/* Read ahead, attach, write the initial state, publish the file, release the command. */
static int start_recording(struct recording *r)
{
	const struct record_args *a = &r->args;
	char why[PATH_MAX + 256];
	int err;

	/* Read ahead (kernel symbols, the binaries of the processes alive now) before the
	 * recording, which would otherwise pay for it in its first moments; and the unwind rows
	 * of the target's binaries (not of a command's, which has not exec'ed yet; not of the
	 * whole machine's, 2-3 s of CPU), whose first stacks would need copies until then, in
	 * one wait with those of the stacks of the threads asleep, read now for it (they are read
	 * again once attached, and walked with these rows). */
	if (start_stacks_wanted(r))
		read_start_state(r, true);
	err = model__prepare(r->model, a->sample_hz || r->stack_kern, a->sample_hz || r->stack_user,
			     r->target && !r->cmd);
	model__start_stacks(r->model, NULL, NULL);
	startstate__free(r->start_state);
	r->start_state = NULL;
	if (err) {
		report_model_error(&r->out, "reading ahead for the call stacks", err);
		return err;
	}
	/* Attach. The trace starts just before, so that no record predates it; threads that the
	 * /proc scan of model__start finds were either there at the start or are also seen being
	 * created, which the model reconciles. */
	r->start = now_ns();
	if (r->flight)
		record_flight__started(r->flight, r->start, r->model);
	err = capture__attach(r->cap);
	if (!err)
		err = attach_usdt(r->cap, r->usdt, r->target, r->cmd);
	if (err)
		return err;
	/* The Python processes' threads given to the walk first, for the stacks read at the
	 * start to have their Python frames. */
	python__refresh(r->py, now_ns());
	if (start_stacks_wanted(r))
		read_start_state(r, false);
	err = model__start(r->model, r->start);
	startstate__free(r->start_state);
	r->start_state = NULL;
	if (err) {
		report_model_error(&r->out, "writing the initial state", err);
		return err;
	}
	err = capture__sample(r->cap);
	if (err)
		return err;
	r->sink.shed.from = now_ns();
	if (r->target && target__mode(r->target) == LX_TARGET_PIDS && !r->cmd) {
		err = drop_gone_targets(r->cap, r->target);
		if (err) {
			fprintf(stderr, PREFIX "dropping exited targets: %s\n", strerror(-err));
			return err;
		}
	}
	/* Started: from here the path names the trace, even after kill -9. */
	if (r->file && (err = output_file__publish(r->file, why, sizeof(why))) != 0) {
		fprintf(stderr, PREFIX "%s\n", why);
		return err;
	}
	/* The command runs from here, traced from its first instruction. One that cannot run
	 * leaves the one-line error of launch__release alone on stderr, and a valid, short file. */
	if (r->cmd && launch__release(r->cmd)) {
		r->cmd_failed = true;
		r->cmd_done = launch__wait(r->cmd, true, &r->cmd_status) == 1;
		r->cmd_status = LAUNCH_CANNOT_RUN;
	} else {
		announce(a);
		say_ready(a->ready_fd);
	}
	return 0;
}

/* Polls until the duration ends, a signal asks to stop, the command exits or the target
 * processes are gone. An error is reported where it happened; the model's is in sink.err. */
static int run_recording(struct recording *r)
{
	const struct record_args *a = &r->args;
	struct status status = { .start = r->start, .next = r->start + STATUS_PERIOD_NS,
				 .last_ns = r->start };
	bool tty = isatty(STDERR_FILENO), file_gone = false, cgroup_gone = false;
	uint64_t flushed = r->start, trimmed = r->start;
	int err = 0;

	while (!r->cmd_done) {
		uint64_t now;

		pass_signal(r->cmd);
		if (stop_requested && !r->cmd)
			break;
		r->sink.deliver_until = now_ns() + DELIVER_NS;
		err = capture__poll(r->cap);
		if (err)
			break;
		python__refresh(r->py, now_ns());
		/* Its triggers' files; the last one --max-files allows ends the recording. */
		if (r->flight &&
		    (err = record_flight__poll(r->flight, r->cap, r->writer, r->writer2,
						 now_ns())) != 0) {
			err = err > 0 ? 0 : err;
			break;
		}
		if (r->cmd) {
			err = launch__wait(r->cmd, false, &r->cmd_status);
			r->cmd_done = err == 1;
			if (err < 0)
				break;
			err = 0;
		} else if (r->target && target__mode(r->target) == LX_TARGET_PIDS &&
			   !capture__has_targets(r->cap)) {
			fprintf(stderr, "%s" PREFIX "every target process has exited\n",
				tty ? "\r\033[K" : "");
			break;
		}
		now = now_ns();
		if (!r->flight && now - flushed >= FLUSH_PERIOD_NS) {
			flushed = now;
			r->sink.err = r->writer ? gt_writer__flush(r->writer) :
						  go123_writer__flush(r->writer2);
			if (r->sink.err)
				break;
			check_vanished(a, r->file, &file_gone, &cgroup_gone);
			if (r->target && (r->stack_kern || r->stack_user))
				read_late_state(r);
		}
		if (now - trimmed >= TRIM_PERIOD_NS) {
			trimmed = now;
			malloc_trim(0);
		}
		if (a->duration && now - r->start >= a->duration * 1e9)
			break;
		if (tty)
			show_status(&status, r->cap, now);
	}
	/* The command is gone; processes it started that outlived it are recorded until they are
	 * gone too, or a signal stops the recording. */
	while (!err && r->cmd_done && !stop_requested && capture__has_targets(r->cap)) {
		r->sink.deliver_until = now_ns() + DELIVER_NS;
		err = capture__poll(r->cap);
		if (a->duration && now_ns() - r->start >= a->duration * 1e9)
			break;
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	return err;
}

/* output_file__rewrite's copy: the go1.23 file with the stacks named at the end. */
static int copy_named(void *ctx, int in, int out, char *why, size_t whylen)
{
	struct recording *r = ctx;

	return go123_restack__copy(in, out, model__late_named, r->model, &r->restacked, why, whylen);
}

/* JIT frames named at the stop reach a go1.23 file, whose generations' stack tables are in it
 * for good, by a copy of the file (format/go123/restack.h) put at the path. One that fails leaves
 * the file as written, and says so. */
static void name_jit_in_copy(struct recording *r)
{
	struct model_stats ms;
	struct stat st;
	char why[512];

	model__stats(r->model, &ms);
	/* A device (-o /dev/null) keeps nothing to copy. */
	if (!r->file || !r->writer2 || r->flight || !ms.jit_named || ms.jit_err != -ENOTSUP ||
	    fstat(output_file__fd(r->file), &st) || !S_ISREG(st.st_mode))
		return;
	r->restack_tried = true;
	if (output_file__rewrite(r->file, copy_named, r, why, sizeof(why)))
		fprintf(stderr, PREFIX "warning: the JIT frames named at the end are not in the "
			"file: %s\n", why);
}

/* Everything the rings still hold up to now, then the end of the trace. The trace ends here,
 * not after the programs are detached, which takes long with annotation probes
 * (docs/record.md). run_err: how the run ended (0: as asked). */
static int stop_recording(struct recording *r, int run_err)
{
	char why[PATH_MAX + 256];
	int err = run_err;

	/* A SIGUSR1 the last round did not take: before the end, so within the trace. */
	if (r->flight && !err)
		err = record_flight__take_signals(r->cap);
	r->end = now_ns();
	r->sink.stop_at = r->end;
	r->sink.progress_at = r->end + STOP_PROGRESS_NS;
	if (!err)
		err = capture__drain(r->cap, r->end, r->end + STOP_DRAIN_NS);
	if (r->sink.err) {
		report_model_error(&r->out, "recording", r->sink.err);
		return r->sink.err;
	}
	if (err)
		return err;
	err = model__finish(r->model, r->end);
	if (err) {
		report_model_error(&r->out, "ending the trace", err);
		return err;
	}
	if (r->flight)
		record_flight__finish(r->flight);
	name_jit_in_copy(r);
	/* On the disk before the summary says it is written. */
	if (r->file && !r->flight && (err = output_file__publish(r->file, why, sizeof(why)))) {
		fprintf(stderr, PREFIX "%s\n", why);
		return err;
	}
	return 0;
}

/* The summary (not after a command that could not run: its one line stays alone), then the
 * command's status: one that outlives the recording (--duration, --max-files) still decides
 * it. */
static int end_recording(struct recording *r)
{
	if (!r->cmd_failed) {
		/* A flight recorder writes nothing at -o (it holds the path): its files are named in
		 * its own lines. */
		record_summary__print(&(struct record_summary){
			.sz = sizeof(struct record_summary),
			.path = r->flight ? NULL : r->args.output,
			.secs = (r->end - r->start) / 1e9,
			.model = r->model,
			.writer = r->writer,
			.writer2 = r->writer2,
			.cap = r->cap,
			.cfi = r->sink.cfi,
			.row_cache = r->row_cache,
			.py = r->py,
			.uses = feature_uses(&r->args),
			.verbose = verbose,
			.restacked = r->restack_tried ? &r->restacked : NULL,
			.shed = &r->sink.shed,
			.end = r->end,
		});
		if (r->flight)
			record_flight__summary(r->flight);
	}
	if (r->cmd && !r->cmd_done) {
		int rc = wait_command(r->cmd, &r->cmd_status);

		r->cmd_done = rc == 1;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The recording proper, phase by phase, once the pre-flight passed. An error is reported
 * where it happened. */
static int record(struct recording *r)
{
	int err = take_file(r);

	if (!err)
		err = open_capture(r);
	if (!err)
		err = open_trace(r);
	if (err)
		return err;
	catch_signals();
	if (r->flight)
		record_flight__catch_signals();
	err = start_recording(r);
	if (!err)
		err = stop_recording(r, run_recording(r));
	if (!err)
		err = end_recording(r);
	return err;
}

/* The single cleanup: what the phases took, in reverse. Returns the error of closing the
 * trace's file (a write-back that failed), or 0. */
static int recording__close(struct recording *r)
{
	int err;

	autogroup__restore(&r->autogroup, NULL);
	model__free(r->model);
	python__free(r->py);
	cfi_loader__free(r->sink.cfi);
	disk_cache__free(r->row_cache);
	gt_writer__free(r->writer);
	go123_writer__free(r->writer2);
	record_flight__free(r->flight);
	capture__free(r->cap);
	output_file__close(r->held);
	err = output_file__close(r->file);
	usdt_files__free(r->usdt);
	launch__free(r->cmd);
	target__free(r->target);
	return err;
}

/* Blocks from this size on are mmapped, and unmapped when freed. glibc's own threshold rises to
 * the largest such block freed (up to 32 MiB): after the first large table went (a binary's
 * unwind rows compiled and loaded, a sort's buffer, a queue of records grown), blocks as large
 * came from the heap, whose free pages stay resident, a thread's arena whole (31 of its 31 MiB
 * free in a whole-machine recording). A fixed threshold keeps glibc from moving it. */
#define MMAP_THRESHOLD (256 * 1024)

int cmd_record(int argc, char **argv)
{
	struct recording r = { 0 };
	int parsed, err, close_err, status;

	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	parsed = record_args__parse(argc, argv, &r.args);
	if (parsed) {
		record_args__free(&r.args);
		return parsed == 1 ? 0 : 2;
	}
	verbose = r.args.verbose;
	r.stack_kern = r.args.stacks == STACKS_KERNEL || r.args.stacks == STACKS_BOTH;
	r.stack_user = r.args.stacks == STACKS_USER || r.args.stacks == STACKS_BOTH;
	libbpf_set_print(libbpf_print);
	err = check_privileges();
	if (!err && r.args.check) {
		status = print_check(&r);
	} else if (!err && !(err = preflight(&r))) {
		err = record(&r);
		status = err ? 1 : r.cmd_done ? r.cmd_status : 0;
	} else {
		/* A command that cannot run fails as in a shell. */
		status = r.args.command && !r.cmd ? LAUNCH_CANNOT_RUN : 1;
	}
	close_err = recording__close(&r);
	if (close_err && !err) {
		fprintf(stderr, PREFIX "%s: %s\n", r.args.output, strerror(-close_err));
		status = 1;
	}
	record_args__free(&r.args);
	return status;
}
