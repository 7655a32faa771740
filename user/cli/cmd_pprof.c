/* cmd_pprof.c - `lxtrace pprof FILE --cpu|--offcpu|--sched|--syscall -o OUT`: a trace's profile
 * by call stack in pprof's format, or as folded stacks (user/report/profile.h,
 * docs/report.md "Profiles"). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "user/cli/cmd.h"
#include "user/cli/file_cmd.h"
#include "user/cli/filter_args.h"
#include "user/cli/output_file.h"
#include "user/report/folded.h"
#include "user/report/pprof.h"
#include "user/report/profile.h"

#define PREFIX "lxtrace pprof: "
#define SEE_HELP "(see lxtrace pprof --help)"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace pprof FILE --cpu|--offcpu|--sched|--syscall [-o OUT] [--folded]\n"
		"                          [--merge-pids] [-p PID] [--comm NAME] [--from T] "
		"[--to T]\n"
		"\n"
		"Writes a profile of the trace by call stack, each stack ending in its thread's\n"
		"process and program, for pprof (`go tool pprof -top OUT`; a flame graph with\n"
		"`-http=127.0.0.1:8080 OUT`; `-diff_base OLD NEW`) or, with --folded, as folded\n"
		"stacks for flamegraph.pl or speedscope. FILE is either format lxtrace writes\n"
		"(go1.19, go1.23). One profile:\n\n"
		"  --cpu               CPU samples (lxtrace record -F) by the stack sampled\n"
		"  --offcpu            time off the CPU by the stack the thread left it with,\n"
		"                      labelled with the reason (io, lock, sleep, fd-wait, ...)\n"
		"  --sched             waits for a CPU by the stack the thread stopped at,\n"
		"                      labelled after=wakeup or after=preemption\n"
		"  --syscall           syscalls by stack, labelled with the syscall: each\n"
		"                      call's count and length from entry to return (record\n"
		"                      --syscalls=all), apart the times calls blocked and\n"
		"                      their time off the CPU (-sample_index=off-cpu); the\n"
		"                      blocks alone when the file has no entries\n\n"
		"  -o, --output OUT    write it to OUT (mode 0600): gzip'd protobuf, or folded\n"
		"                      text (without -o: on stdout)\n"
		"      --folded        folded stacks, one line each: ROOT;...;LEAF VALUE, VALUE\n"
		"                      in samples (--cpu) or nanoseconds\n"
		"      --merge-pids    leave out each stack's process frame COMM (pid PID): the\n"
		"                      processes of one program (a build's compilers, a\n"
		"                      server's workers) add up under its program frame\n"
		FILTER_ARGS_HELP
		"  -h, --help          show this help\n");
}

int cmd_pprof(int argc, char **argv)
{
	enum { OPT_CPU = 256, OPT_OFFCPU, OPT_SCHED, OPT_SYSCALL, OPT_FOLDED, OPT_MERGE_PIDS };
	static const struct option opts[] = {
		{ "cpu", no_argument, NULL, OPT_CPU },
		{ "offcpu", no_argument, NULL, OPT_OFFCPU },
		{ "sched", no_argument, NULL, OPT_SCHED },
		{ "syscall", no_argument, NULL, OPT_SYSCALL },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "merge-pids", no_argument, NULL, OPT_MERGE_PIDS },
		{ "output", required_argument, NULL, 'o' },
		FILTER_ARGS_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct walk_filter filter = { .to_ns = UINT64_MAX };
	int c, fd = -1, kind = -1, ret, status = 1;
	struct output_file *of = NULL;
	struct profile *p = NULL;
	const char *path, *out = NULL;
	bool folded = false;
	unsigned flags = 0;
	char err[512];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:" FILTER_ARGS_SHORT, opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_CPU:
		case OPT_OFFCPU:
		case OPT_SCHED:
		case OPT_SYSCALL:
			if (kind >= 0 && kind != c - OPT_CPU) {
				fprintf(stderr, PREFIX "one profile at a time: --cpu, --offcpu, "
					"--sched or --syscall " SEE_HELP "\n");
				return 2;
			}
			kind = c - OPT_CPU;
			break;
		case OPT_FOLDED:
			folded = true;
			break;
		case OPT_MERGE_PIDS:
			flags |= PROFILE_MERGE_PIDS;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			ret = filter_args__apply("pprof", c, optarg, &filter);
			if (ret == 1)
				return file_cmd__bad_option("pprof", argv, "opcft");
			if (ret)
				return ret;
			break;
		}
	}
	path = file_cmd__one_file("pprof", argc, argv);
	if (!path)
		return 2;
	if (kind < 0) {
		fprintf(stderr, PREFIX "which profile? --cpu, --offcpu, --sched or --syscall "
			SEE_HELP "\n");
		return 2;
	}
	if (!out && !folded) {
		fprintf(stderr, PREFIX "no output file: give -o OUT " SEE_HELP "\n");
		return 2;
	}
	if (filter_args__check("pprof", &filter))
		return 2;

	fd = file_cmd__open("pprof", path, O_RDONLY, false);
	if (fd < 0)
		return 1;
	if (out && !(of = file_cmd__create("pprof", out, fd)))
		goto done;
	ret = profile__read(fd, (enum profile_kind)kind, &filter, flags, &p, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PREFIX "%s: %s\n", path, err);
		goto done;
	}
	if (folded) {
		FILE *f = of ? fdopen(dup(output_file__fd(of)), "w") : stdout;

		ret = f ? folded__write(p, f) : -errno;
		if (f && f != stdout && fclose(f) && !ret)
			ret = -errno;
		if (ret) {
			fprintf(stderr, PREFIX "writing the folded stacks: %s\n", strerror(-ret));
			goto done;
		}
	} else if (pprof__write(p, output_file__fd(of), err, sizeof(err))) {
		fprintf(stderr, PREFIX "%s\n", err);
		goto done;
	}
	if (of) {
		ret = file_cmd__finish("pprof", of);
		of = NULL;
		if (ret)
			goto done;
	}
	status = 0;
done:
	output_file__close(of);
	profile__free(p);
	close(fd);
	return status;
}
