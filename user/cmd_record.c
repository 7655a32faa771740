/* cmd_record.c - `lxtrace record`: traces the whole machine into a Go execution trace file
 * until a duration ends or SIGINT/SIGTERM, then prints a summary. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/libbpf.h>

#include "format/writer.h"
#include "user/capture.h"
#include "user/cmd.h"
#include "user/model.h"

#define PREFIX "lxtrace record: "
#define DEFAULT_BUFFER_MIB 4.0
#define MAX_BUFFER_MIB 4096.0
#define STATUS_PERIOD_NS 1000000000ULL
/* Under saturation (perf bench sched messaging: 160 tasks on 2 CPUs) a reader with a fair share
 * of a CPU is starved and the rings overflow (27% of the records lost at 4 MiB per CPU, still
 * 18% at 8 MiB); at nice -10 it runs when it wakes, and the same loads lose nothing while the
 * reader takes no more CPU (docs/record.md). */
#define READER_NICE -10

struct record_args {
	const char *output;
	double duration;	/* seconds; 0 = until a signal */
	double buffer_mib;	/* per CPU */
	enum model_syscalls syscalls;
	bool verbose;
};

static volatile sig_atomic_t stop_requested;
static bool verbose;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace record [-o FILE] [-d SECONDS] [--buffer-size MIB] [--syscalls=MODE] [-v]\n"
		"\n"
		"Records what every thread of the machine does (runs, blocks, wakeups, forks, execs,\n"
		"exits, syscalls) into a Go execution trace; open it with `go tool trace FILE`.\n"
		"Stops after SECONDS, or on Ctrl-C (SIGINT) or SIGTERM. Needs root (CAP_BPF and\n"
		"CAP_PERFMON) and a kernel with BTF.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE       write the trace to FILE (default: trace.out), mode 0600;\n"
		"                          under sudo it is given to the invoking user\n"
		"  -d, --duration SECONDS  stop after SECONDS (default: run until interrupted)\n"
		"  -b, --buffer-size MIB   kernel ring buffer per CPU in MiB, rounded up to a power of\n"
		"                          two pages; fractions allowed (default: %g)\n"
		"  -s, --syscalls MODE     blocking: show the syscall a thread blocked in (default, no\n"
		"                          per-syscall cost); all: every syscall entry too (slower);\n"
		"                          none: no syscalls\n"
		"  -v, --verbose           show libbpf's messages\n"
		"  -h, --help              show this help\n",
		DEFAULT_BUFFER_MIB);
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*out) && *out > 0;
}

/* 0: run; 1: help shown, exit 0; 2: bad usage, reported. */
static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "syscalls", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*a = (struct record_args){ .output = "trace.out", .buffer_mib = DEFAULT_BUFFER_MIB };
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":o:d:b:s:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			a->output = optarg;
			break;
		case 'd':
			if (!parse_seconds(optarg, &a->duration)) {
				fprintf(stderr, PREFIX "--duration: '%s' is not a positive number of seconds\n",
					optarg);
				return 2;
			}
			break;
		case 'b':
			if (!parse_seconds(optarg, &a->buffer_mib) || a->buffer_mib > MAX_BUFFER_MIB) {
				fprintf(stderr, PREFIX "--buffer-size: '%s' is not a size in MiB between 0 and %g\n",
					optarg, MAX_BUFFER_MIB);
				return 2;
			}
			break;
		case 's':
			if (!strcmp(optarg, "blocking")) {
				a->syscalls = MODEL_SYSCALLS_BLOCKING;
			} else if (!strcmp(optarg, "all")) {
				a->syscalls = MODEL_SYSCALLS_ALL;
			} else if (!strcmp(optarg, "none")) {
				a->syscalls = MODEL_SYSCALLS_NONE;
			} else {
				fprintf(stderr, PREFIX "--syscalls: '%s' is not one of blocking, all, none\n",
					optarg);
				return 2;
			}
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
		default: {
			const char *arg = argv[optind - 1];
			char shortopt[3] = { '-', (char)optopt, '\0' };

			fprintf(stderr, PREFIX "%s '%s' (see lxtrace record --help)\n",
				opt == ':' ? "missing value for option" : "unknown option",
				strncmp(arg, "--", 2) ? shortopt : arg);
			return 2;
		}
		}
	}
	if (optind < argc) {
		fprintf(stderr, PREFIX "unexpected argument '%s' (see lxtrace record --help)\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

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

static int check_btf(void)
{
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		return 0;
	fprintf(stderr, PREFIX "/sys/kernel/btf/vmlinux: %s: the kernel has no BTF "
		"(CONFIG_DEBUG_INFO_BTF), which lxtrace's programs need\n", strerror(errno));
	return -ENOENT;
}

/* Opened before anything is loaded, so a bad path fails fast. A trace shows every process of
 * the machine: the file is 0600, and belongs to the user who ran sudo. */
static int open_output(const char *path)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	struct stat st;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st))
		goto fail;
	/* Leave devices and pipes (-o /dev/null) alone; an existing file gets our mode too. */
	if (!S_ISREG(st.st_mode))
		return fd;
	if (fchmod(fd, 0600))
		goto fail;
	if (uid && gid && fchown(fd, strtoul(uid, NULL, 10), strtoul(gid, NULL, 10)))
		goto fail;
	return fd;
fail:
	err = -errno;
	fprintf(stderr, PREFIX "%s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return err;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static void on_signal(int sig)
{
	stop_requested = 1;
}

/* No SA_RESTART: the signal must cut the ring buffer wait short. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Where capture delivers; remembers the model's error apart from capture's own, which capture
 * has already reported. */
struct sink {
	struct model *model;
	int err;
};

static int to_model(void *ctx, const struct lx_rec *r, size_t size)
{
	struct sink *s = ctx;

	s->err = model__record(s->model, r, size);
	return s->err;
}

static int lost_to_model(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	struct sink *s = ctx;

	s->err = model__lost(s->model, cpu, ts, n);
	return s->err;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* Errors of the model that are the output file's: the writer failed writing it. */
static bool is_write_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG || err == -EIO || err == -EPIPE;
}

static void report_model_error(const char *path, const char *step, int err)
{
	if (is_write_error(err))
		fprintf(stderr, PREFIX "%s: %s\n", path, strerror(-err));
	else
		fprintf(stderr, PREFIX "model: %s: %s\n", step, strerror(-err));
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

static void print_summary(const char *path, double secs, const struct model *m,
			  const struct gt_writer *w, const struct capture *cap)
{
	struct model_stats ms;
	struct gt_writer_stats ws;
	struct capture_stats cs;

	model__stats(m, &ms);
	gt_writer__stats(w, &ws);
	capture__stats(cap, &cs);
	fprintf(stderr, PREFIX "%s: %.1f s, %llu records (%.0f/s)\n", path, secs,
		(unsigned long long)ms.records, secs > 0 ? ms.records / secs : 0.0);
	fprintf(stderr, "  records lost:  %llu (ring buffer full)\n", (unsigned long long)cs.lost);
	fprintf(stderr, "  by kind:       %llu switches, %llu wakeups, %llu forks, %llu execs, "
		"%llu exits, %llu syscalls\n",
		(unsigned long long)ms.switches, (unsigned long long)ms.wakeups,
		(unsigned long long)ms.forks, (unsigned long long)ms.execs,
		(unsigned long long)ms.exits, (unsigned long long)ms.syscalls);
	fprintf(stderr, "  threads:       %llu\n", (unsigned long long)ms.threads);
	fprintf(stderr, "  written:       %llu bytes, %llu events, %.1f bytes/event\n",
		(unsigned long long)ws.bytes, (unsigned long long)ws.events,
		ws.events ? (double)ws.bytes / ws.events : 0.0);
	fprintf(stderr, "  out of order:  %llu records (delivered late)\n",
		(unsigned long long)cs.out_of_order);
	fprintf(stderr, "  kernel skips:  %llu program runs (recursion)\n",
		(unsigned long long)cs.misses);
	fprintf(stderr, "  repairs:      ");
	for (int i = 0; i < MODEL_REPAIR_COUNT; i++)
		fprintf(stderr, " %s %llu%s", model__repair_name(i),
			(unsigned long long)ms.repairs[i], i + 1 < MODEL_REPAIR_COUNT ? "," : "\n");
}

int cmd_record(int argc, char **argv)
{
	struct record_args args;
	struct capture *cap = NULL;
	struct gt_writer *writer = NULL;
	struct model *model = NULL;
	struct sink sink = { 0 };
	struct status status = { 0 };
	bool tty = isatty(STDERR_FILENO);
	uint64_t start, end;
	int fd = -1, ncpus, err;

	/* Parse, and check what would fail later with a worse message. */
	err = parse_args(argc, argv, &args);
	if (err)
		return err == 1 ? 0 : 2;
	verbose = args.verbose;
	libbpf_set_print(libbpf_print);
	err = check_privileges();
	if (!err)
		err = check_btf();
	if (err)
		return 1;
	fd = open_output(args.output);
	if (fd < 0)
		return 1;
	/* Root may raise its priority; without CAP_SYS_NICE the recording still works. */
	if (setpriority(PRIO_PROCESS, 0, READER_NICE) && verbose)
		fprintf(stderr, PREFIX "raising the reader's priority (nice %d): %s\n", READER_NICE,
			strerror(errno));

	/* Open and configure the BPF side. */
	cap = capture__new(&(struct capture_opts){
		.sz = sizeof(struct capture_opts),
		.ring_bytes = (size_t)(args.buffer_mib * 1024 * 1024),
		.syscalls = args.syscalls == MODEL_SYSCALLS_ALL,
		.self_tgid = getpid(),
		.on_record = to_model,
		.on_lost = lost_to_model,
		.ctx = &sink,
	});
	if (!cap) {
		err = -errno;
		goto cleanup;
	}

	/* Load. */
	err = capture__load(cap);
	if (err)
		goto cleanup;

	/* The writer and the model; they write nothing but the header before the start. */
	ncpus = libbpf_num_possible_cpus();
	writer = gt_writer__new(&(struct gt_writer_opts){
		.sz = sizeof(struct gt_writer_opts),
		.fd = fd,
		.nprocs = ncpus + 1,
		.frequency = 1000000000,
	});
	if (!writer) {
		err = -errno;
		fprintf(stderr, PREFIX "%s: starting the trace: %s\n", args.output, strerror(-err));
		goto cleanup;
	}
	model = model__new(&(struct model_opts){
		.sz = sizeof(struct model_opts),
		.writer = writer,
		.ncpus = ncpus,
		.syscalls = args.syscalls,
		.proc_root = "/proc",
	});
	if (!model) {
		err = -errno;
		report_model_error(args.output, "creating the model", err);
		goto cleanup;
	}
	sink.model = model;
	catch_signals();

	/* Attach. The trace starts just before, so that no record predates it; threads that the
	 * /proc scan of model__start finds were either there at the start or are also seen being
	 * created, which the model reconciles. */
	start = now_ns();
	err = capture__attach(cap);
	if (err)
		goto cleanup;
	err = model__start(model, start);
	if (err) {
		report_model_error(args.output, "writing the initial state", err);
		goto cleanup;
	}
	if (args.duration)
		fprintf(stderr, PREFIX "recording to %s for %g s (Ctrl-C stops)\n", args.output,
			args.duration);
	else
		fprintf(stderr, PREFIX "recording to %s until Ctrl-C\n", args.output);

	/* Poll until the duration ends or a signal asks to stop. */
	status.start = status.last_ns = start;
	status.next = start + STATUS_PERIOD_NS;
	while (!stop_requested) {
		uint64_t now;

		err = capture__poll(cap);
		if (err)
			break;
		now = now_ns();
		if (args.duration && now - start >= args.duration * 1e9)
			break;
		if (tty)
			show_status(&status, cap, now);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");

	/* Finish: everything the rings still hold, then the end of the trace. */
	if (!err)
		err = capture__drain(cap);
	end = now_ns();
	if (sink.err) {
		report_model_error(args.output, "recording", err);
		goto cleanup;
	}
	if (err)
		goto cleanup;
	err = model__finish(model, end);
	if (err) {
		report_model_error(args.output, "ending the trace", err);
		goto cleanup;
	}
	print_summary(args.output, (end - start) / 1e9, model, writer, cap);

cleanup:
	model__free(model);
	gt_writer__free(writer);
	capture__free(cap);
	if (fd >= 0 && close(fd) && !err) {
		err = -errno;
		fprintf(stderr, PREFIX "%s: %s\n", args.output, strerror(-err));
	}
	return err ? 1 : 0;
}
