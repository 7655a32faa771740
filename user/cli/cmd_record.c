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

#include "format/close.h"
#include "format/writer.h"
#include "lib/clock.h"
#include "lib/file_worker.h"
#include "lib/foreign_file.h"
#include "lib/sudo_user.h"
#include "user/capture/capture.h"
#include "user/capture/features.h"
#include "user/cli/cmd.h"
#include "user/cli/output_file.h"
#include "user/cli/record_args.h"
#include "user/cli/record_flight.h"
#include "user/model/model.h"
#include "user/stacks/cfi_loader.h"
#include "user/target/launch.h"
#include "user/target/target.h"
#include "user/target/usdt_files.h"

#define PREFIX "lxtrace record: "
#define STATUS_PERIOD_NS 1000000000ULL
/* How often the batches buffered so far go to the file: a recorder killed (SIGKILL, the OOM
 * killer, a crash) leaves a trace that ends at most this long before, as the writer keeps
 * every prefix that ends on a batch boundary valid; a quiet machine fills a batch buffer only
 * after many seconds. */
#define FLUSH_PERIOD_NS 1000000000ULL
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

/* --check: the feature table, then what these options would do without. 0 when a recording
 * can run here. */
static int print_check(const struct record_args *a)
{
	struct features f;
	int err = check_kernel(&f);

	if (err == -ENOENT)
		return 1;
	features__print_table(&f, stdout);
	printf("\nA recording with these options, here:\n");
	if (err)
		printf("  cannot run\n");
	else if (!features__print_missing(&f, feature_uses(a), "  ", stdout))
		printf("  misses nothing\n");
	return err ? 1 : 0;
}

/* Opened before anything is loaded, so a bad path fails fast (user/cli/output_file.h: no
 * link followed, no file taken over, a second recording refused). A trace shows every process
 * of the machine: the file is 0600, and belongs to the user who ran sudo. A flight recorder,
 * which makes its files beside the path, holds the path instead (hold), by the same lock. */
static struct output_file *take_output(const char *path, bool hold)
{
	struct output_file *f = NULL;
	char why[PATH_MAX + 256];
	uid_t uid;
	gid_t gid;

	if (sudo_user__ids(&uid, &gid, why, sizeof(why))) {
		fprintf(stderr, PREFIX "%s\n", why);
		return NULL;
	}
	f = (hold ? output_file__hold : output_file__open)(path, uid, gid, why, sizeof(why));
	if (!f)
		fprintf(stderr, PREFIX "%s\n", why);
	return f;
}

static struct output_file *open_output(const char *path)
{
	return take_output(path, false);
}

/* The recording's own file: at its path only once the recording has started. */
static struct output_file *prepare_output(const char *path)
{
	char why[PATH_MAX + 256];
	struct output_file *f;
	uid_t uid;
	gid_t gid;

	if (sudo_user__ids(&uid, &gid, why, sizeof(why))) {
		fprintf(stderr, PREFIX "%s\n", why);
		return NULL;
	}
	f = output_file__prepare(path, uid, gid, why, sizeof(why));
	if (!f)
		fprintf(stderr, PREFIX "%s\n", why);
	return f;
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
	uint64_t deliver_until;		/* CLOCK_MONOTONIC ns: this round's delivery ends */
	unsigned delivered;
	int err;
};

/* A round of delivery ends after this long, even with records left (they wait for the next
 * round): the rings are read, and new mappings opened and their unwind rows loaded, while the
 * model is slow, e.g. symbolizing the first stacks of every process at the start. */
#define DELIVER_NS (10 * 1000 * 1000ULL)

static int to_model(void *ctx, const struct lx_rec *r, size_t size)
{
	struct sink *s = ctx;

	int err;

	/* Asks for unwind rows, answered when peeked at: nothing for the trace. */
	if (r->type == LX_REC_CFI_WANT)
		return 0;
	/* -EBUSY: a stack waits for rows the loader is compiling; the record comes again. */
	err = model__record(s->model, r, size);
	if (err == -EBUSY)
		return err;
	s->err = err;
	if (s->err)
		return s->err;
	/* The clock is read every 64 records: a read costs more than many a record. */
	if (!(++s->delivered % 64) && now_ns() > s->deliver_until)
		return -EAGAIN;
	return 0;
}

static int peek_to_model(void *ctx, const struct lx_rec *r, size_t size)
{
	struct sink *s = ctx;

	/* A stack is waiting for these rows: load them now, while the process runs. */
	if (r->type == LX_REC_CFI_WANT && size >= sizeof(struct lx_cfi_want) && s->cfi)
		cfi_loader__want(s->cfi, (const struct lx_cfi_want *)r);
	/* A new mapping of code: its rows are loaded before a stack needs them. */
	if (r->type == LX_REC_MMAP && size >= sizeof(struct lx_mmap) && s->cfi)
		cfi_loader__mapped(s->cfi, (const struct lx_mmap *)r);
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
	struct gt_writer *writer;
	int fd;
	uint32_t nprocs;
};

static void report_model_error(const struct output *o, const char *step, int err)
{
	if (is_write_error(err) && o->writer)
		close_after_write_error(o->path, err, o->writer, o->fd, o->nprocs);
	else if (is_write_error(err))
		fprintf(stderr, PREFIX "%s: %s\n", o->path, strerror(-err));
	else
		fprintf(stderr, PREFIX "model: %s: %s\n", step, strerror(-err));
}

/* The loader of unwind rows, when user stacks are taken. */
static int new_cfi_loader(struct capture *cap, struct cfi_loader **out)
{
	struct cfi_loader_opts o = { .sz = sizeof(o) };
	int err = capture__unwind_maps(cap, &o.maps);

	*out = NULL;
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
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

/* The CPU lxtrace's own process used (reading, modelling, symbolizing, loading unwind rows,
 * writing), in seconds. */
static double self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* How the user stacks were taken: walks, proofs from the cache, what stopped walks early; and
 * what the daemon's CPU came to per distinct stack (the rest of its work is per record and
 * small, see docs/record.md). */
static void print_unwind_summary(const struct capture *cap, struct cfi_loader *cfi,
				 uint64_t distinct)
{
	uint64_t u[LX_UNWIND_NSTATS];
	struct cfi_loader_stats ls;
	double cpu = self_cpu_s();

	if (!cfi || capture__unwind_stats(cap, u))
		return;
	cfi_loader__stats(cfi, &ls);
	fprintf(stderr, "  user stacks:   %llu walked, %llu unchanged (cached), %llu truncated, "
		"%llu with frame-pointer steps, %llu frames without rows yet; %llu process tables "
		"built (%llu busy)\n",
		(unsigned long long)u[LX_UNWIND_WALKS], (unsigned long long)u[LX_UNWIND_HITS],
		(unsigned long long)u[LX_UNWIND_TRUNCATED], (unsigned long long)u[LX_UNWIND_FP],
		(unsigned long long)u[LX_UNWIND_NO_TABLE], (unsigned long long)u[LX_UNWIND_SCANS],
		(unsigned long long)u[LX_UNWIND_SCAN_BUSY]);
	fprintf(stderr, "  unwind rows:   %llu binaries (%llu rows), %llu without CFI, %llu retried, "
		"%llu did not fit, %llu too costly, %llu failed, %llu still queued; compiling took "
		"%.3f s\n",
		(unsigned long long)ls.files, (unsigned long long)ls.rows,
		(unsigned long long)ls.files_empty, (unsigned long long)ls.files_retry,
		(unsigned long long)ls.files_full, (unsigned long long)ls.files_costly,
		(unsigned long long)ls.files_failed,
		(unsigned long long)ls.queued, ls.compile_ns / 1e9);
	fprintf(stderr, "  daemon CPU:    %.3f s in all, %.0f us per distinct stack\n", cpu,
		distinct ? cpu * 1e6 / distinct : 0.0);
}

/* How the kernel's reports of mappings were stood in for: the changes of processes' code asked
 * of user space and read from /proc (docs/record.md). */
static void print_maps_summary(const struct capture *cap)
{
	struct capture_maps_stats ms;

	capture__maps_stats(cap, &ms);
	if (ms.asked)
		fprintf(stderr, "  maps read:     %llu changes of processes' code asked for, %llu "
			"reads of /proc/PID/maps (%llu processes gone), %llu mappings reported, %llu "
			"asks lost, %llu tables without room\n",
			(unsigned long long)ms.asked, (unsigned long long)ms.answered,
			(unsigned long long)ms.gone, (unsigned long long)ms.reported,
			(unsigned long long)ms.asks_lost, (unsigned long long)ms.tables_full);
}

/* What was lost and what the model invented in its place, in one line that is there even when
 * nothing was (scripts read its count): records the rings had no room for, program runs the
 * kernel skipped, and each kind of repair that happened (docs/model.md). */
static void print_losses(const struct model_stats *ms, const struct capture_stats *cs)
{
	const char *sep = "; repairs (docs/model.md):";

	fprintf(stderr, "  records lost:  %llu", (unsigned long long)cs->lost);
	if (cs->lost > cs->malformed)
		fprintf(stderr, " (ring buffer full: a larger --buffer-size keeps them)");
	if (cs->malformed)
		fprintf(stderr, "; %llu of them malformed (dropped: a bug, please report it)",
			(unsigned long long)cs->malformed);
	if (cs->misses)
		fprintf(stderr, "; %llu program runs skipped by the kernel (recursion)",
			(unsigned long long)cs->misses);
	for (int i = 0; i < MODEL_REPAIR_COUNT; i++) {
		if (!ms->repairs[i])
			continue;
		fprintf(stderr, "%s %s %llu", sep, model__repair_name(i),
			(unsigned long long)ms->repairs[i]);
		sep = ",";
	}
	fputc('\n', stderr);
}

/* The internals behind -v: records by kind, how stacks were taken and symbolized, what the
 * kernel lacked, what the writer wrote, and records that came late or after the stop. */
static void print_details(const struct model_stats *ms, const struct gt_writer_stats *ws,
			  const struct capture_stats *cs, const struct capture *cap,
			  struct cfi_loader *cfi)
{
	fprintf(stderr, "  by kind:      ");
	for (int i = 0; i < MODEL_KIND_COUNT; i++)
		fprintf(stderr, " %llu %s%s", (unsigned long long)ms->kinds[i], model__kind_name(i),
			i + 1 < MODEL_KIND_COUNT ? "," : "\n");
	if (ms->stack_lookups)
		fprintf(stderr, "  call stacks:   %llu, %llu distinct (%llu trimmed), %llu process images; "
			"symbolizing took %.3f s (%.0f us per distinct stack)\n",
			(unsigned long long)ms->stack_lookups, (unsigned long long)ms->stacks_distinct,
			(unsigned long long)ms->stacks_trimmed, (unsigned long long)ms->images,
			ms->symbolize_ns / 1e9,
			ms->stacks_distinct ? ms->symbolize_ns / 1e3 / ms->stacks_distinct : 0.0);
	if (ms->late_walks)
		fprintf(stderr, "  first sight:   %llu user stacks finished from a copy of the stack "
			"(%llu frames), %llu held for their rows; cut short: %llu at the copy's end, "
			"%llu without rows in time\n", (unsigned long long)ms->late_walks,
			(unsigned long long)ms->late_frames, (unsigned long long)ms->late_held,
			(unsigned long long)ms->late_copy_short, (unsigned long long)ms->late_no_rows);
	if (ms->prepare_ns)
		fprintf(stderr, "  read ahead:    %llu binaries (%llu with DWARF)%s before the start, "
			"in %.3f s\n", (unsigned long long)ms->prepared,
			(unsigned long long)ms->prepared_dwarf, ms->prepared_kernel ? " and kallsyms" : "",
			ms->prepare_ns / 1e9);
	print_unwind_summary(cap, cfi, ms->stacks_distinct);
	print_maps_summary(cap);
	fprintf(stderr, "  kernel:        %s\n", capture__features(cap)->release);
	fprintf(stderr, "  threads:       %llu (%llu under a tid an earlier thread had)\n",
		(unsigned long long)ms->threads, (unsigned long long)ms->tids_reused);
	fprintf(stderr, "  written:       %llu bytes, %llu events, %.1f bytes/event\n",
		(unsigned long long)ws->bytes, (unsigned long long)ws->events,
		ws->events ? (double)ws->bytes / ws->events : 0.0);
	fprintf(stderr, "  definitions:   %llu strings, %llu stacks; forgotten after a while unused "
		"(defined again if met again): %llu strings, %llu stacks\n",
		(unsigned long long)ws->strings, (unsigned long long)ws->stacks,
		(unsigned long long)ws->strings_forgotten, (unsigned long long)ws->stacks_forgotten);
	fprintf(stderr, "  out of order:  %llu records (delivered late)\n",
		(unsigned long long)cs->out_of_order);
	fprintf(stderr, "  after stop:    %llu records (sent while the programs were detached)\n",
		(unsigned long long)cs->after_stop);
	fprintf(stderr, "  moot wakeups:  %llu (of threads not asleep yet: nothing to show)\n",
		(unsigned long long)ms->wakeups_moot);
}

/* path as a shell word, for a command line a person pastes: in single quotes unless it has
 * only characters no shell treats specially. */
static void print_shell_word(const char *path)
{
	if (path[0] && !path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789+,-./:=@_%")]) {
		fputs(path, stderr);
		return;
	}
	fputc('\'', stderr);
	for (const char *c = path; *c; c++)
		if (*c == '\'')
			fputs("'\\''", stderr);
		else
			fputc(*c, stderr);
	fputc('\'', stderr);
}

/* What a person reads after a recording (docs/record.md, "The summary"): what was recorded,
 * what was lost, what this kernel made it do without, files that were not read, and how to
 * open the file; with -v the internals after. path is the file, or NULL for a flight recorder,
 * whose files are named in its own lines. */
static void print_summary(const char *path, double secs, const struct model *m,
			  const struct gt_writer *w, const struct capture *cap,
			  struct cfi_loader *cfi, unsigned uses)
{
	const struct foreign_log *refused;
	struct model_stats ms;
	struct gt_writer_stats ws;
	struct capture_stats cs;

	model__stats(m, &ms);
	gt_writer__stats(w, &ws);
	capture__stats(cap, &cs);
	fprintf(stderr, PREFIX "%s: %.1f s, %llu records (%.0f/s) of %llu threads",
		path ? path : "flight recorder", secs, (unsigned long long)ms.records,
		secs > 0 ? ms.records / secs : 0.0, (unsigned long long)ms.threads);
	if (path && ws.bytes < 1048576)
		fprintf(stderr, ", %.0f KiB", ws.bytes / 1024.0);
	else if (path)
		fprintf(stderr, ", %.1f MiB", ws.bytes / 1048576.0);
	fputc('\n', stderr);
	print_losses(&ms, &cs);
	features__print_missing(capture__features(cap), uses, "  without:      ", stderr);
	refused = model__refused(m);
	if (refused && foreign_log__count(refused)) {
		fprintf(stderr, "  refused files: %llu that other users control (not read, or "
			"only in part):\n",
			(unsigned long long)foreign_log__count(refused));
		foreign_log__print(refused, stderr, "   ");
	}
	if (path) {
		fputs("  open it:       go tool trace ", stderr);
		print_shell_word(path);
		fputs("   (on a server: README.md, \"Viewing on a server\")\n", stderr);
	}
	if (verbose)
		print_details(&ms, &ws, &cs, cap, cfi);
}

/* The target the arguments name, or NULL for the whole machine (*err 0). A command is forked
 * here, held until launch__release, and its process is the target. */
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
	if (!*err && a->command) {
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

int cmd_record(int argc, char **argv)
{
	struct record_args args;
	struct capture *cap = NULL;
	struct gt_writer *writer = NULL;
	struct model *model = NULL;
	struct target *target = NULL;
	struct launch *cmd = NULL;
	struct usdt_files *usdt = NULL;
	struct output_file *file = NULL, *held = NULL;
	struct record_flight *flight = NULL;
	struct gt_writer_opts wo;
	struct model_opts mo;
	uid_t sudo_uid;
	gid_t sudo_gid;
	struct sink sink = { 0 };
	struct status status = { 0 };
	struct features feat;
	char why[PATH_MAX + 256];
	struct output out = { 0 };
	bool tty = isatty(STDERR_FILENO), cmd_done = false, cmd_failed = false;
	bool file_gone = false, cgroup_gone = false;
	bool stack_kern, stack_user;
	uint64_t start, end, flushed;
	int ncpus, err, close_err, cmd_status = 0;

	/* Parse, and check what would fail later with a worse message. */
	err = record_args__parse(argc, argv, &args);
	if (err) {
		record_args__free(&args);
		return err == 1 ? 0 : 2;
	}
	verbose = args.verbose;
	stack_kern = args.stacks == STACKS_KERNEL || args.stacks == STACKS_BOTH;
	stack_user = args.stacks == STACKS_USER || args.stacks == STACKS_BOTH;
	libbpf_set_print(libbpf_print);
	err = check_privileges();
	if (!err && args.check) {
		err = print_check(&args);
		record_args__free(&args);
		return err;
	}
	if (!err)
		err = check_kernel(&feat);
	/* Forked now, while this process has no other thread and holds nothing but its standard
	 * streams (lib/file_worker.h). Without it no binary of a process is read. */
	if (!err && (err = file_worker__start()))
		fprintf(stderr, PREFIX "cannot start the file worker: %s\n", strerror(-err));
	if (!err)
		target = make_target(&args, &cmd, &err);
	if (!err)
		usdt = find_usdt_files(&args, target, cmd, &err);
	if (err) {
		/* A command that cannot run fails as in a shell. */
		err = args.command && !cmd ? LAUNCH_CANNOT_RUN : 1;
		goto out;
	}
	if (args.flight)
		held = take_output(args.output, true);
	else
		file = prepare_output(args.output);
	if (!file && !held) {
		err = -EIO;
		goto cleanup;
	}
	/* Root may raise its priority; without CAP_SYS_NICE the recording still works. A command
	 * was forked before this, so it keeps the priority it was started with. */
	if (setpriority(PRIO_PROCESS, 0, READER_NICE) && verbose)
		fprintf(stderr, PREFIX "raising the reader's priority (nice %d): %s\n", READER_NICE,
			strerror(errno));

	/* Open and configure the BPF side. */
	cap = capture__new(&(struct capture_opts){
		.sz = sizeof(struct capture_opts),
		.ring_bytes = (size_t)(args.buffer_mib * 1024 * 1024),
		.syscalls = args.syscalls == MODEL_SYSCALLS_ALL,
		.annotations = usdt_files__count(usdt) > 0,
		.self_tgid = getpid(),
		.sample_hz = args.sample_hz,
		.sample_idle = args.sample_idle,
		.stack_kern = stack_kern,
		.stack_user = stack_user,
		.on_record = to_model,
		.on_peek = peek_to_model,
		.on_lost = lost_to_model,
		.ctx = &sink,
		.target_mode = target ? target__mode(target) : LX_TARGET_ALL,
		.cgroup_id = target ? target__cgroup_id(target) : 0,
		.cgroup_level = target ? target__cgroup_level(target) : 0,
		.features = &feat,
	});
	if (!cap) {
		err = -errno;
		goto cleanup;
	}

	/* Load, and name the target processes to the programs. */
	err = capture__load(cap);
	for (size_t i = 0; !err && target && i < target__npids(target); i++)
		err = capture__add_target(cap, target__pid(target, i));
	if (!err)
		err = new_cfi_loader(cap, &sink.cfi);
	if (err)
		goto cleanup;

	/* The writer and the model; they write nothing but the header before the start. */
	ncpus = libbpf_num_possible_cpus();
	wo = (struct gt_writer_opts){
		.sz = sizeof(struct gt_writer_opts),
		.fd = file ? output_file__fd(file) : -1,
		.nprocs = ncpus + 1,
		.frequency = 1000000000,
		.reserve = gt_close__reserve(ncpus + 1),
	};
	/* A flight recorder takes the batches instead of the file. */
	if (args.flight) {
		flight = record_flight__new(&args, ncpus + 1, open_output);
		if (!flight) {
			err = -ENOMEM;
			goto cleanup;
		}
		record_flight__writer_opts(flight, &wo);
		wo.reserve = 0;
	}
	writer = gt_writer__new(&wo);
	if (!writer) {
		err = -errno;
		fprintf(stderr, PREFIX "%s: starting the trace: %s\n", args.output, strerror(-err));
		goto cleanup;
	}
	/* Valid: take_output checked it. */
	sudo_user__ids(&sudo_uid, &sudo_gid, why, sizeof(why));
	mo = (struct model_opts){
		.sz = sizeof(struct model_opts),
		.writer = writer,
		.ncpus = ncpus,
		.syscalls = args.syscalls,
		.proc_root = "/proc",
		.keep = target ? target__keep : NULL,
		.keep_ctx = target,
		.rss = target != NULL,
		.stacks = args.sample_hz || args.stacks != STACKS_NONE,
		.trusted_uid = sudo_uid,
	};
	if (flight)
		record_flight__model_opts(flight, &mo);
	model = model__new(&mo);
	out = (struct output){ args.output, writer, file ? output_file__fd(file) : -1, ncpus + 1 };
	if (!model) {
		err = -errno;
		report_model_error(&out, "creating the model", err);
		goto cleanup;
	}
	sink.model = model;
	model__use_rows(model, sink.cfi);
	catch_signals();
	if (flight)
		record_flight__catch_signals();

	/* Read ahead (kernel symbols, the binaries of the processes alive now) before the
	 * recording, which would otherwise pay for it in its first moments. */
	err = model__prepare(model, args.sample_hz || stack_kern, args.sample_hz || stack_user);
	if (err) {
		report_model_error(&out, "reading ahead for the call stacks", err);
		goto cleanup;
	}

	/* Attach. The trace starts just before, so that no record predates it; threads that the
	 * /proc scan of model__start finds were either there at the start or are also seen being
	 * created, which the model reconciles. */
	start = now_ns();
	if (flight)
		record_flight__started(flight, start);
	err = capture__attach(cap);
	if (!err)
		err = attach_usdt(cap, usdt, target, cmd);
	if (err)
		goto cleanup;
	err = model__start(model, start);
	if (err) {
		report_model_error(&out, "writing the initial state", err);
		goto cleanup;
	}
	if (target && target__mode(target) == LX_TARGET_PIDS && !cmd) {
		err = drop_gone_targets(cap, target);
		if (err) {
			fprintf(stderr, PREFIX "dropping exited targets: %s\n", strerror(-err));
			goto cleanup;
		}
	}
	/* Started: from here the path names the trace, even after kill -9. */
	if (file && (err = output_file__publish(file, why, sizeof(why))) != 0) {
		fprintf(stderr, PREFIX "%s\n", why);
		goto cleanup;
	}
	/* The command runs from here, traced from its first instruction. One that cannot run
	 * leaves the one-line error of launch__release alone on stderr, and a valid, short file. */
	if (cmd && launch__release(cmd)) {
		cmd_failed = true;
		cmd_done = launch__wait(cmd, true, &cmd_status) == 1;
		cmd_status = LAUNCH_CANNOT_RUN;
	} else {
		announce(&args);
	}

	/* Poll until the duration ends, a signal asks to stop, the command exits or the target
	 * processes are gone. */
	flushed = start;
	status.start = status.last_ns = start;
	status.next = start + STATUS_PERIOD_NS;
	while (!cmd_done) {
		uint64_t now;

		pass_signal(cmd);
		if (stop_requested && !cmd)
			break;
		sink.deliver_until = now_ns() + DELIVER_NS;
		err = capture__poll(cap);
		if (err)
			break;
		/* Its triggers' files; the last one --max-files allows ends the recording. */
		if (flight && (err = record_flight__poll(flight, cap, writer, now_ns())) != 0) {
			err = err > 0 ? 0 : err;
			break;
		}
		if (cmd) {
			err = launch__wait(cmd, false, &cmd_status);
			cmd_done = err == 1;
			if (err < 0)
				break;
			err = 0;
		} else if (target && target__mode(target) == LX_TARGET_PIDS &&
			   !capture__has_targets(cap)) {
			fprintf(stderr, "%s" PREFIX "every target process has exited\n",
				tty ? "\r\033[K" : "");
			break;
		}
		now = now_ns();
		if (!flight && now - flushed >= FLUSH_PERIOD_NS) {
			flushed = now;
			if ((sink.err = gt_writer__flush(writer)) != 0)
				break;
			check_vanished(&args, file, &file_gone, &cgroup_gone);
		}
		if (args.duration && now - start >= args.duration * 1e9)
			break;
		if (tty)
			show_status(&status, cap, now);
	}
	/* The command is gone; processes it started that outlived it are recorded until they are
	 * gone too, or a signal stops the recording. */
	while (!err && cmd_done && !stop_requested && capture__has_targets(cap)) {
		sink.deliver_until = now_ns() + DELIVER_NS;
		err = capture__poll(cap);
		if (args.duration && now_ns() - start >= args.duration * 1e9)
			break;
	}
	if (tty)
		fprintf(stderr, "\r\033[K");

	/* Finish: everything the rings still hold up to now, then the end of the trace. The
	 * trace ends here, not after the programs are detached, which takes long with
	 * annotation probes (docs/record.md). */
	end = now_ns();
	if (!err)
		err = capture__drain(cap, end);
	if (sink.err) {
		err = sink.err;
		report_model_error(&out, "recording", err);
		goto cleanup;
	}
	if (err)
		goto cleanup;
	err = model__finish(model, end);
	if (err) {
		report_model_error(&out, "ending the trace", err);
		goto cleanup;
	}
	if (flight)
		record_flight__finish(flight);
	/* A flight recorder writes nothing at -o (it holds the path): its files are named in its
	 * own lines. */
	if (!cmd_failed)
		print_summary(flight ? NULL : args.output, (end - start) / 1e9, model, writer, cap,
			      sink.cfi, feature_uses(&args));
	if (flight && !cmd_failed)
		record_flight__summary(flight);

	/* A command that outlives the recording (--duration, --max-files) still decides the exit
	 * status. */
	if (cmd && !cmd_done) {
		int rc = wait_command(cmd, &cmd_status);

		cmd_done = rc == 1;
		if (rc < 0)
			err = rc;
	}

cleanup:
	model__free(model);
	cfi_loader__free(sink.cfi);
	gt_writer__free(writer);
	record_flight__free(flight);
	capture__free(cap);
	output_file__close(held);
	close_err = output_file__close(file);
	if (close_err && !err) {
		err = close_err;
		fprintf(stderr, PREFIX "%s: %s\n", args.output, strerror(-err));
	}
	err = err ? 1 : cmd_done ? cmd_status : 0;
out:
	usdt_files__free(usdt);
	launch__free(cmd);
	target__free(target);
	record_args__free(&args);
	return err;
}
