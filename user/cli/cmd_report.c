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

#include "user/cli/cmd.h"
#include "user/cli/file_cmd.h"
#include "user/cli/filter_args.h"
#include "user/report/report.h"

#define PREFIX "lxtrace report: "
#define SEE_HELP "(see lxtrace report --help)"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace report FILE [SECTIONS] [-p PID] [--comm NAME] [--from T] [--to T]\n"
		"                           [--top N] [--depth N] [--hist] [--json]\n\n"
		"Prints what a trace lxtrace recorded says, in 80 columns, reading it once as a\n"
		"stream (memory follows the threads, not the file's length). Sections (all when\n"
		"none is given):\n\n"
		"  --sched             scheduler latency per process and thread: the waits for a\n"
		"                      CPU after a wakeup and after a preemption, p50/p90/p99/max\n"
		"                      and when the max was; the worst waits, with the threads\n"
		"                      that ran on that CPU meanwhile\n"
		"  --offcpu            time off the CPU by reason (I/O, lock, sleep, pipe or\n"
		"                      socket, other waits, the run queue) and by stack\n"
		"  --syscalls          per syscall, each call from its entry to its return\n"
		"                      (record --syscalls=all; count, total, p50/p99/max), and\n"
		"                      apart the times calls blocked, each off the CPU\n"
		"  --cpu               CPU samples (record -F) by function, self and total, and\n"
		"                      by stack\n"
		"  --triggers          the recording itself: records lost, events lxtrace\n"
		"                      invented (repairs), triggers that fired; when and why\n\n"
		"Filters and layout:\n\n"
		FILTER_ARGS_HELP
		"  -n, --top N         rows of each table (default 10)\n"
		"      --depth N       frames of code shown of each stack (default 8; the\n"
		"                      rest are counted)\n"
		"      --hist          log2 histograms of the latencies, as runqlat prints them,\n"
		"                      each named\n"
		"      --json          one JSON object of the same figures, whole stacks,\n"
		"                      times in ns (its schema: docs/report.md, \"JSON\")\n"
		"  -h, --help          show this help\n\n"
		"A wait, a time off the CPU or a syscall counts in the window it ends in, whole.\n"
		"Percentiles are within 3%%; counts, totals and maxima are exact. FILE - reads\n"
		"stdin; either format lxtrace writes (go1.19, go1.23). docs/report.md says what\n"
		"each number is, what a go1.23 file tells otherwise, and how it compares with\n"
		"perf's.\n");
}

/* optarg as the count of option opt (1 to 100000) in *out: 0, or -1 after saying why. */
static int count_arg(const char *opt, size_t *out)
{
	unsigned long long v;

	if (filter_args__count(optarg, 100000, &v)) {
		fprintf(stderr, PREFIX "bad %s '%s': 1 to 100000 " SEE_HELP "\n", opt, optarg);
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_SCHED = 256, OPT_OFFCPU, OPT_SYSCALLS, OPT_CPU, OPT_TRIGGERS, OPT_HIST,
	       OPT_DEPTH, OPT_JSON };
	static const struct option opts[] = {
		{ "sched", no_argument, NULL, OPT_SCHED },
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "syscalls", no_argument, NULL, OPT_SYSCALLS },
		{ "cpu", no_argument, NULL, OPT_CPU },
		{ "triggers", no_argument, NULL, OPT_TRIGGERS },
		{ "hist", no_argument, NULL, OPT_HIST },
		{ "json", no_argument, NULL, OPT_JSON },
		FILTER_ARGS_OPTIONS,
		{ "top", required_argument, NULL, 'n' },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_opts o = { .top = 10, .filter = { .to_ns = UINT64_MAX } };
	const char *path;
	char err[512];
	int c, fd, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h" FILTER_ARGS_SHORT "n:", opts, NULL)) != -1) {
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
		case OPT_JSON:
			o.json = true;
			break;
		case 'n':
			if (count_arg("--top", &o.top))
				return 2;
			break;
		case OPT_DEPTH:
			if (count_arg("--depth", &o.depth))
				return 2;
			break;
		default:
			ret = filter_args__apply("report", c, optarg, &o.filter);
			if (ret == 1)
				return file_cmd__bad_option("report", argv, "pcftn");
			if (ret)
				return ret;
			break;
		}
	}
	path = file_cmd__one_file("report", argc, argv);
	if (!path)
		return 2;
	if (filter_args__check("report", &o.filter))
		return 2;
	if (!o.sections)
		o.sections = REPORT_ALL;
	fd = file_cmd__open("report", path, O_RDONLY, true);
	if (fd < 0)
		return 1;
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
