/* cmd_report.c - `lxtrace report FILE`: scheduler latency, time off the CPU, syscalls, CPU
 * samples and the recording's loss and repairs, in the terminal (user/report/report.h,
 * docs/report.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/duration.h"
#include "user/cli/cmd.h"
#include "user/cli/file_cmd.h"
#include "user/report/report.h"

#define PREFIX "lxtrace report: "
#define SEE_HELP "(see lxtrace report --help)"

static void usage(FILE *f)
{
	fprintf(f, "usage: lxtrace report FILE [SECTIONS] [-p PID] [--comm NAME] [--from T] [--to T]\n"
		   "                           [--top N] [--hist]\n\n"
		   "Prints what a trace lxtrace recorded says, in 80 columns, reading it once as a\n"
		   "stream (memory follows the threads, not the file's length). Sections (all when\n"
		   "none is given):\n\n"
		   "  --sched             scheduler latency per process and thread: the waits for a\n"
		   "                      CPU after a wakeup and after a preemption, p50/p90/p99/max\n"
		   "                      and when the max was; the worst waits, with the threads\n"
		   "                      that ran on that CPU meanwhile\n"
		   "  --offcpu            time off the CPU by reason (I/O, lock, sleep, pipe or\n"
		   "                      socket, other waits, the run queue) and by stack\n"
		   "  --syscalls          per syscall, the time those that blocked kept their thread\n"
		   "                      off the CPU (count, total, p50/p99/max)\n"
		   "  --cpu               CPU samples (record -F) by function, self and total, and\n"
		   "                      by stack\n"
		   "  --triggers          the recording itself: records lost, events lxtrace\n"
		   "                      invented (repairs), triggers that fired; when and why\n\n"
		   "Filters and layout:\n\n"
		   "  -p, --pid PID       only the threads of process PID\n"
		   "  -c, --comm NAME     only the threads named NAME or running program NAME\n"
		   "  -f, --from T        only what ends at T or later (seconds from the trace's\n"
		   "                      first event, or a number with ns, us, ms, s: as `cut`)\n"
		   "  -t, --to T          only what ends before T\n"
		   "  -n, --top N         rows of each table (default 10)\n"
		   "      --hist          log2 histograms of the latencies, as runqlat prints them\n"
		   "  -h, --help          show this help\n\n"
		   "A wait, a time off the CPU or a syscall counts in the window it ends in, whole.\n"
		   "Percentiles are within 3%%; counts, totals and maxima are exact. docs/report.md\n"
		   "says what each number is and how it compares with perf's.\n");
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end || errno || *out > max ? -1 : 0;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_SCHED = 256, OPT_OFFCPU, OPT_SYSCALLS, OPT_CPU, OPT_TRIGGERS, OPT_HIST };
	static const struct option opts[] = {
		{ "sched", no_argument, NULL, OPT_SCHED },
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "syscalls", no_argument, NULL, OPT_SYSCALLS },
		{ "cpu", no_argument, NULL, OPT_CPU },
		{ "triggers", no_argument, NULL, OPT_TRIGGERS },
		{ "hist", no_argument, NULL, OPT_HIST },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_opts o = { .top = 10, .filter = { .to_ns = UINT64_MAX } };
	unsigned long long v;
	const char *path;
	char err[512];
	int c, fd, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hp:c:f:t:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_SCHED:
			o.sections |= REPORT_SCHED;
			break;
		case OPT_OFFCPU:
			o.sections |= REPORT_OFFCPU;
			break;
		case OPT_SYSCALLS:
			o.sections |= REPORT_SYSCALLS;
			break;
		case OPT_CPU:
			o.sections |= REPORT_CPU;
			break;
		case OPT_TRIGGERS:
			o.sections |= REPORT_TRIGGERS;
			break;
		case OPT_HIST:
			o.hist = true;
			break;
		case 'p':
			if (parse_uint(optarg, UINT32_MAX, &v) || !v) {
				fprintf(stderr, PREFIX "bad pid '%s' " SEE_HELP "\n", optarg);
				return 2;
			}
			o.filter.pid = (uint32_t)v;
			break;
		case 'c':
			o.filter.comm = optarg;
			break;
		case 'n':
			if (parse_uint(optarg, 100000, &v) || !v) {
				fprintf(stderr, PREFIX "bad --top '%s': 1 to 100000 " SEE_HELP "\n",
					optarg);
				return 2;
			}
			o.top = (size_t)v;
			break;
		case 'f':
		case 't':
			if (duration__parse(optarg, strlen(optarg), false,
					    c == 'f' ? &o.filter.from_ns : &o.filter.to_ns)) {
				fprintf(stderr, PREFIX "bad time '%s' for --%s: seconds, or a number "
					"with ns, us, ms or s " SEE_HELP "\n", optarg,
					c == 'f' ? "from" : "to");
				return 2;
			}
			break;
		default:
			return file_cmd__bad_option("report", argv, "pcftn");
		}
	}
	path = file_cmd__one_file("report", argc, argv);
	if (!path)
		return 2;
	if (o.filter.from_ns >= o.filter.to_ns) {
		fprintf(stderr, PREFIX "--from must come before --to " SEE_HELP "\n");
		return 2;
	}
	if (!o.sections)
		o.sections = REPORT_ALL;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		fprintf(stderr, PREFIX "%s: %s\n", path, strerror(errno));
		return 1;
	}
	ret = report__file(fd, path, &o, stdout, err, sizeof(err));
	if (fd)
		close(fd);
	if (ret) {
		fprintf(stderr, PREFIX "%s: %s\n", path, err);
		return 1;
	}
	if (fflush(stdout)) {
		fprintf(stderr, PREFIX "writing the report: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
