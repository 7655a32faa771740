/* record_args.c - `lxtrace record`'s usage text and option parsing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/duration.h"
#include "user/cli/record_args.h"
#include "user/target/target.h"

#define PREFIX "lxtrace record: "
#define DEFAULT_BUFFER_MIB 4
#define MAX_BUFFER_MIB 4096.0
#define DEFAULT_SAMPLE_HZ 99
/* Above this the kernel throttles cpu-clock sampling anyway (perf_event_max_sample_rate). */
#define MAX_SAMPLE_HZ 100000
#define DEFAULT_FLIGHT_SECONDS 10
#define MAX_FLIGHT_SECONDS 3600
#define DEFAULT_FLIGHT_MIB 64
#define MAX_FLIGHT_MIB 65536
#define DEFAULT_MAX_FILES 10
#define MAX_MAX_FILES 100000
#define STR(x) STR_(x)
#define STR_(x) #x

/* Keys of the options that have no short form. */
enum { OPT_SAMPLE_IDLE = 256, OPT_FORMAT, OPT_STACKS, OPT_AS_ROOT, OPT_FLIGHT, OPT_FLIGHT_SIZE,
       OPT_TRIGGER, OPT_AFTER, OPT_MAX_FILES, OPT_MIN_GAP, OPT_CHECK, OPT_READY_FD };

/* The options of `lxtrace record`, the one list: the parser's getopt tables and --help are
 * built from it, and the README shows --help (`make docs`, checked by `make test`). */
struct record_opt {
	const char *name;	/* long name; NULL: the "-- COMMAND" row, which is no option */
	int key;		/* its short letter, or OPT_* when it has none */
	const char *arg;	/* the value as --help names it; NULL: takes none; "[=ARG]": may be
				 * left out */
	const char *help;	/* one line per '\n', wrapped to fit 80 columns */
};

static const struct record_opt targets[] = {
	{ "pid", 'p', "PID[,PID...]",
	  "every thread of these processes (repeatable), and every\n"
	  "process they fork while recording; stops when all are gone" },
	{ "cgroup", 'g', "PATH",
	  "threads in the cgroup v2 directory PATH or below it (e.g.\n"
	  "/sys/fs/cgroup/system.slice/foo.service)" },
	{ NULL, 0, "COMMAND [ARGS...]",
	  "start COMMAND once tracing runs and trace it and its\n"
	  "descendants until they have all exited; lxtrace exits with\n"
	  "its status (128+N when killed by signal N; 127 when it\n"
	  "cannot run). Ctrl-C goes to COMMAND; lxtrace stops when\n"
	  "COMMAND and its descendants are gone (or at Ctrl-C once\n"
	  "COMMAND is), and passes on signals sent to lxtrace alone" },
	{ "as-root", OPT_AS_ROOT, NULL,
	  "run COMMAND as root; by default, under sudo, it runs as the\n"
	  "invoking user (SUDO_UID, SUDO_GID and their groups)" },
};

static const struct record_opt options[] = {
	{ "output", 'o', "FILE",
	  "write the trace to FILE (default: trace.out), mode 0600;\n"
	  "under sudo it is given to the invoking user. FILE is made\n"
	  "anew, never through a symbolic link, never in place of\n"
	  "another user's file or of one a recording is writing" },
	{ "format", OPT_FORMAT, "FORMAT",
	  "go1.19 (default): Go 1.19's format, which every Go's viewer\n"
	  "opens (Go 1.22 and later convert it: a thread row per CPU);\n"
	  "go1.23: the format of Go 1.22 and later, with a thread row\n"
	  "per Linux thread, why each thread blocked, and a syscall it\n"
	  "blocked in until it returned; Go 1.19's viewer cannot open\n"
	  "it. With --flight-recorder, its files are whole generations\n"
	  "of a tenth of the window (50 ms to 1 s)" },
	{ "duration", 'd', "SECONDS",
	  "stop after SECONDS (default: run until interrupted); a\n"
	  "COMMAND keeps running and lxtrace waits for it" },
	{ "buffer-size", 'b', "MIB",
	  "kernel ring buffer per CPU in MiB, rounded up to a power of\n"
	  "two pages; fractions allowed (default: " STR(DEFAULT_BUFFER_MIB) "); raise it\n"
	  "when the summary reports lost records" },
	{ "syscalls", 's', "MODE",
	  "blocking: show the syscall a thread blocked in (default, no\n"
	  "per-syscall cost); all: every syscall entry too (slower; in\n"
	  "go1.23 their returns too: a syscall lasts from entry to return);\n"
	  "none: no syscalls" },
	{ "usdt", 'u', "PATH",
	  "also record the task, region and log annotations\n"
	  "(<lxtrace/annotate.h>) of the program or shared library\n"
	  "PATH, in every process that runs it (with a target: in the\n"
	  "target's); repeatable. With -p, the annotated programs and\n"
	  "libraries the processes have mapped are found by themselves,\n"
	  "with a COMMAND its program" },
	{ "freq", 'F', "HZ",
	  "CPU samples per second and CPU, with kernel and user call\n"
	  "stacks (cpu-clock; default: " STR(DEFAULT_SAMPLE_HZ) "; 0: no sampling)" },
	{ "sample-idle", OPT_SAMPLE_IDLE, NULL,
	  "keep samples of idle CPUs too (dropped by default)" },
	{ "stacks", OPT_STACKS, "MODE",
	  "call stacks on blocking (in a syscall too), preemption,\n"
	  "wakeup and create events: user (default), kernel, both, or\n"
	  "none (the thread's name and syscall only). Syscall entries\n"
	  "(--syscalls=all) name only the syscall and the thread: a\n"
	  "stack would cost each several times what it costs now.\n"
	  "User stacks are unwound from the binaries' CFI, and a stack\n"
	  "unchanged since the thread's last is proven so, not walked\n"
	  "again; kernel stacks cost each switch and wakeup a walk.\n"
	  "CPython 3.10-3.13 programs' user stacks name their Python\n"
	  "functions too (module.qualname, file, line)" },
	{ "check", OPT_CHECK, NULL,
	  "print what this kernel offers lxtrace's programs, load the\n"
	  "programs a recording with the other options given would (its\n"
	  "target's too) and say what they would do without, then exit\n"
	  "(0: it can record) without recording or starting COMMAND" },
	{ "ready-fd", OPT_READY_FD, "FD",
	  "write the line \"ready\" to file descriptor FD once the\n"
	  "programs are attached and recording has begun, then\n"
	  "close it, for scripts to wait on (e.g. 3>FIFO, then\n"
	  "read <FIFO); end of file without it: no recording" },
	{ "verbose", 'v', NULL,
	  "a summary with the internals too (records by kind, call\n"
	  "stacks, unwinding, the file's encoding), and libbpf's\n"
	  "messages" },
	{ "help", 'h', NULL, "show this help" },
};

static const struct record_opt flight[] = {
	{ "flight-recorder", OPT_FLIGHT, "[=SECONDS]",
	  "keep only the last SECONDS in memory (default: "
	  STR(DEFAULT_FLIGHT_SECONDS) "), no file;\n"
	  "each trigger writes them to the next numbered file. -o is\n"
	  "held, not written: a second recording to it is refused" },
	{ "trigger", OPT_TRIGGER, "EXPR",
	  "a trigger (repeatable): sched-latency>DURATION (a thread\n"
	  "waited runnable longer), syscall>DURATION (was longer in a\n"
	  "syscall such as read or fsync, not one that waits by design\n"
	  "such as futex or epoll_wait; syscall:NAME>DURATION for any\n"
	  "one syscall), offcpu>DURATION (was off its CPU longer);\n"
	  ",comm=NAME and ,pid=PID watch only those threads.\n"
	  "DURATION: 200us, 50ms, 1.5s. SIGUSR1 and a traced program's\n"
	  "lxtrace_trigger() are triggers too" },
	{ "flight-size", OPT_FLIGHT_SIZE, "MIB",
	  "memory for those seconds (default: " STR(DEFAULT_FLIGHT_MIB) "); when it is full, the\n"
	  "oldest go first" },
	{ "after", OPT_AFTER, "SECONDS",
	  "record SECONDS more after a trigger before its file, to show\n"
	  "what followed (default: 0; less than the flight recorder's)" },
	{ "max-files", OPT_MAX_FILES, "N",
	  "stop after N files (default: " STR(DEFAULT_MAX_FILES) ")" },
	{ "min-gap", OPT_MIN_GAP, "SECONDS",
	  "no file for a trigger less than SECONDS after one that made\n"
	  "a file (default: the flight recorder's SECONDS)" },
};

#define NTARGETS (sizeof(targets) / sizeof(targets[0]))
#define NOPTIONS (sizeof(options) / sizeof(options[0]))
#define NFLIGHT (sizeof(flight) / sizeof(flight[0]))

/* "  -o, --output FILE       write the trace ...": the option, then its help from column 26,
 * each further line of it indented as far. */
static void print_opt(FILE *f, const struct record_opt *o)
{
	char spec[64];
	const char *line = o->help;

	if (!o->name)
		snprintf(spec, sizeof(spec), "-- %s", o->arg);
	else if (o->key < 256)
		snprintf(spec, sizeof(spec), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	else
		snprintf(spec, sizeof(spec), "    --%s%s%s", o->name,
			 o->arg && o->arg[0] != '[' ? " " : "", o->arg ? o->arg : "");
	/* A spec too long for its column gets a line of its own. */
	if (strlen(spec) > 23)
		fprintf(f, "  %s\n%26s", spec, "");
	else
		fprintf(f, "  %-24s", spec);
	for (;;) {
		size_t len = strcspn(line, "\n");

		fprintf(f, "%.*s\n", (int)len, line);
		if (!line[len])
			break;
		line += len + 1;
		fprintf(f, "%26s", "");
	}
}

static void print_opts(FILE *f, const struct record_opt *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		print_opt(f, &o[i]);
}

static void usage(FILE *f)
{
	fputs("usage: lxtrace record [OPTIONS]                     the whole machine\n"
	      "       lxtrace record [OPTIONS] -p PID[,PID...]     "
	      "those processes and their children\n"
	      "       lxtrace record [OPTIONS] --cgroup PATH       the threads in a cgroup v2\n"
	      "       lxtrace record [OPTIONS] [--as-root] -- COMMAND [ARGS...]\n"
	      "\n"
	      "Records what threads do (runs, blocks, wakeups, forks, execs, exits, syscalls) and\n"
	      "samples of what the CPUs run, with call stacks, into a Go execution trace; open it\n"
	      "with `go tool trace FILE`. Stops after SECONDS, on Ctrl-C\n"
	      "(SIGINT), SIGTERM or SIGHUP (a closed terminal), when the target processes "
	      "have all\n"
	      "exited, or when COMMAND and its descendants have.\n"
	      "Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n"
	      "\n"
	      "Targets (at most one kind; without one, every thread of the machine):\n", f);
	print_opts(f, targets, NTARGETS);
	fputs("With a target, other threads are not recorded: their time on a CPU is shown as\n"
	      "[untraced] (as lxtrace's own is as [lxtrace]), and the heap counter shows the\n"
	      "resident memory (RSS) of the target processes, summed.\n"
	      "\n"
	      "Options (a SECONDS may have a unit: 800ms, 2.5s, 250us):\n", f);
	print_opts(f, options, NOPTIONS);
	fputs("\n"
	      "Flight recorder: the last seconds are kept in memory, and each trigger writes them\n"
	      "to a file of their own numbered from the output (trace.out -> trace-001.out,\n"
	      "trace-002.out, ...; each made as -o says), with the trigger marked where it fired;\n"
	      "recording goes on.\n", f);
	print_opts(f, flight, NFLIGHT);
}

/* getopt_long's tables, from the option list: "+:" (options end at the first non-option,
 * which starts the command; ':' reports a missing value) and each short letter. */
static void getopt_tables(char *shorts, struct option *longs)
{
	const struct record_opt *all[] = { targets, options, flight };
	const size_t counts[] = { NTARGETS, NOPTIONS, NFLIGHT };
	size_t n = 0;

	*shorts++ = '+';
	*shorts++ = ':';
	for (size_t t = 0; t < 3; t++) {
		for (size_t i = 0; i < counts[t]; i++) {
			const struct record_opt *o = &all[t][i];

			if (!o->name)
				continue;
			longs[n++] = (struct option){ o->name, !o->arg ? no_argument :
						      o->arg[0] == '[' ? optional_argument :
						      required_argument, NULL, o->key };
			if (o->key < 256) {
				*shorts++ = (char)o->key;
				if (o->arg)
					*shorts++ = ':';
			}
		}
	}
	*shorts = '\0';
	longs[n] = (struct option){ 0 };
}

/* A number above 0 (a size in MiB). */
static bool parse_positive(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*out) && *out > 0;
}

/* A duration in seconds (lib/duration.h: "2.5", "800ms"), which may be 0 when zero_ok. */
static bool parse_seconds(const char *s, bool zero_ok, double *out)
{
	uint64_t ns;

	if (duration__parse(s, strlen(s), false, &ns) || (!ns && !zero_ok))
		return false;
	*out = ns / 1e9;
	return true;
}

/* The flight recorder's options that only make sense with --flight-recorder, and their checks;
 * 0 or 2 after a one-line error. */
static int check_flight(struct record_args *a, const char *needs_flight)
{
	if (!a->flight) {
		if (needs_flight) {
			fprintf(stderr, PREFIX "--%s needs --flight-recorder (see lxtrace record "
				"--help)\n", needs_flight);
			return 2;
		}
		return 0;
	}
	if (a->after >= a->flight) {
		fprintf(stderr, PREFIX "--after %g: must be shorter than the flight recorder's %g "
			"s, or the file would not hold the trigger\n", a->after, a->flight);
		return 2;
	}
	if (a->min_gap < 0)
		a->min_gap = a->flight;
	return 0;
}

/* --ready-fd: a descriptor this process has open for writing (0, or 2 after a one-line error). */
static int parse_ready_fd(const char *s, int *fd)
{
	char *end;
	long n;
	int fl;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 0 || n > INT_MAX) {
		fprintf(stderr, PREFIX "--ready-fd: '%s' is not a file descriptor number\n", s);
		return 2;
	}
	fl = fcntl((int)n, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
		fprintf(stderr, PREFIX "--ready-fd %ld: %s\n", n, fl < 0 ? "not an open file "
			"descriptor" : "not open for writing");
		return 2;
	}
	*fd = (int)n;
	return 0;
}

/* The index of arg in names (NULL-terminated), the values of option --opt; -1 after a usage
 * error naming them. */
static int pick(const char *opt, const char *arg, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(arg, names[i]))
			return i;
	fprintf(stderr, PREFIX "--%s: '%s' is not one of", opt, arg);
	for (int i = 0; names[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fputc('\n', stderr);
	return -1;
}

/* 0: run; 1: help shown, exit 0; 2: bad usage, reported. */
int record_args__parse(int argc, char **argv, struct record_args *a)
{
	struct option longopts[NTARGETS + NOPTIONS + NFLIGHT + 1];
	char shortopts[2 + 2 * (NTARGETS + NOPTIONS + NFLIGHT) + 1];
	const char *needs_flight = NULL;	/* a flight recorder's option given */
	int opt, kinds;

	*a = (struct record_args){ .output = "trace.out", .buffer_mib = DEFAULT_BUFFER_MIB,
				   .sample_hz = DEFAULT_SAMPLE_HZ, .stacks = STACKS_USER,
				   .flight_mib = DEFAULT_FLIGHT_MIB, .min_gap = -1,
				   .max_files = DEFAULT_MAX_FILES, .ready_fd = -1 };
	a->pid_lists = calloc(argc, sizeof(*a->pid_lists));
	if (!a->pid_lists) {
		fprintf(stderr, PREFIX "out of memory\n");
		return 2;
	}
	getopt_tables(shortopts, longopts);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (!target__pid_list_ok(optarg)) {
				fprintf(stderr, PREFIX "-p: '%s' is not a list of process ids "
					"(PID[,PID...])\n", optarg);
				return 2;
			}
			a->pid_lists[a->npid_lists++] = optarg;
			break;
		case 'g':
			a->cgroup = optarg;
			break;
		case OPT_AS_ROOT:
			a->as_root = true;
			break;
		case 'o':
			/* Every prefix of a trace that ends on a batch boundary is valid, and a
			 * viewer reads the whole file: a pipe holds neither. */
			if (!strcmp(optarg, "-") || !*optarg) {
				fprintf(stderr, PREFIX "--output: '%s' is not a file name (a trace "
					"goes to a regular file, not to standard output)\n",
					optarg);
				return 2;
			}
			a->output = optarg;
			break;
		case 'd':
			if (!parse_seconds(optarg, false, &a->duration)) {
				fprintf(stderr, PREFIX "--duration: '%s' is not a duration above 0 "
					"(seconds, or a number with ns, us, ms or s)\n", optarg);
				return 2;
			}
			break;
		case 'b':
			if (!parse_positive(optarg, &a->buffer_mib) ||
			    a->buffer_mib > MAX_BUFFER_MIB) {
				fprintf(stderr, PREFIX "--buffer-size: '%s' is not a size in MiB "
					"above 0 and up to %g\n", optarg, MAX_BUFFER_MIB);
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
				fprintf(stderr, PREFIX "--syscalls: '%s' is not one of blocking, "
					"all, none\n", optarg);
				return 2;
			}
			break;
		case 'u':
			if (a->n_usdt == MAX_USDT_PATHS) {
				fprintf(stderr, PREFIX "--usdt: at most %d paths\n",
					MAX_USDT_PATHS);
				return 2;
			}
			a->usdt[a->n_usdt++] = optarg;
			break;
		case 'F': {
			char *end;
			unsigned long hz;

			errno = 0;
			hz = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' ||
			    hz > MAX_SAMPLE_HZ) {
				fprintf(stderr, PREFIX "--freq: '%s' is not a frequency in Hz "
					"between 0 and %d\n", optarg, MAX_SAMPLE_HZ);
				return 2;
			}
			a->sample_hz = hz;
			break;
		}
		case OPT_SAMPLE_IDLE:
			a->sample_idle = true;
			break;
		case OPT_FORMAT: {
			static const char *const names[] = { "go1.19", "go1.23", NULL };
			int i = pick("format", optarg, names);

			if (i < 0)
				return 2;
			a->format = (enum record_format)i;
			break;
		}
		case OPT_STACKS: {
			static const char *const names[] = { "none", "user", "kernel", "both",
							     NULL };
			int i = pick("stacks", optarg, names);

			if (i < 0)
				return 2;
			a->stacks = (enum stacks_mode)i;
			break;
		}
		case 'v':
			a->verbose = true;
			break;
		case OPT_CHECK:
			a->check = true;
			break;
		case OPT_READY_FD:
			if (parse_ready_fd(optarg, &a->ready_fd))
				return 2;
			break;
		case OPT_FLIGHT:
			a->flight = DEFAULT_FLIGHT_SECONDS;
			if (optarg && (!parse_seconds(optarg, false, &a->flight) ||
				       a->flight > MAX_FLIGHT_SECONDS)) {
				fprintf(stderr, PREFIX "--flight-recorder: '%s' is not a duration "
					"above 0 and up to %d s\n", optarg, MAX_FLIGHT_SECONDS);
				return 2;
			}
			break;
		case OPT_FLIGHT_SIZE:
			needs_flight = "flight-size";
			if (!parse_positive(optarg, &a->flight_mib) || a->flight_mib < 1 ||
			    a->flight_mib > MAX_FLIGHT_MIB) {
				fprintf(stderr, PREFIX "--flight-size: '%s' is not a size in MiB "
					"between 1 and %d\n", optarg, MAX_FLIGHT_MIB);
				return 2;
			}
			break;
		case OPT_TRIGGER: {
			char why[256];

			needs_flight = "trigger";
			if (a->ntriggers == MAX_TRIGGERS) {
				fprintf(stderr, PREFIX "--trigger: at most %d\n", MAX_TRIGGERS);
				return 2;
			}
			if (trigger__parse(optarg, &a->triggers[a->ntriggers], why, sizeof(why))) {
				fprintf(stderr, PREFIX "--trigger '%s': %s\n", optarg, why);
				return 2;
			}
			a->ntriggers++;
			break;
		}
		case OPT_AFTER:
		case OPT_MIN_GAP: {
			double *v = opt == OPT_AFTER ? &a->after : &a->min_gap;

			needs_flight = opt == OPT_AFTER ? "after" : "min-gap";
			if (!parse_seconds(optarg, true, v) || *v > MAX_FLIGHT_SECONDS) {
				fprintf(stderr, PREFIX "--%s: '%s' is not a duration between 0 and "
					"%d s\n", needs_flight, optarg, MAX_FLIGHT_SECONDS);
				return 2;
			}
			break;
		}
		case OPT_MAX_FILES: {
			char *end;
			unsigned long n;

			needs_flight = "max-files";
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || !n ||
			    n > MAX_MAX_FILES) {
				fprintf(stderr, PREFIX "--max-files: '%s' is not a count between 1 "
					"and %d\n", optarg, MAX_MAX_FILES);
				return 2;
			}
			a->max_files = (unsigned)n;
			break;
		}
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
	if (optind < argc)
		a->command = argv + optind;
	kinds = (a->npid_lists > 0) + (a->cgroup != NULL) + (a->command != NULL);
	if (kinds > 1) {
		fprintf(stderr, PREFIX "-p, --cgroup and a command exclude each other "
			"(see lxtrace record --help)\n");
		return 2;
	}
	if (a->as_root && !a->command) {
		fprintf(stderr, PREFIX "--as-root needs a command (see lxtrace record --help)\n");
		return 2;
	}
	return check_flight(a, needs_flight);
}

void record_args__free(struct record_args *a)
{
	free(a->pid_lists);
	a->pid_lists = NULL;
}
