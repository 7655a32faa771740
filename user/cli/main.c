/* main.c - lxtrace's entry point: dispatches to a subcommand from a table. */
#include <stdio.h>
#include <string.h>

#include "user/cli/cmd.h"
#include "version.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", cmd_record, "record what threads do into a Go execution trace" },
	{ "dump", cmd_dump, "print the events of a trace file, one per line" },
	{ "repair", cmd_repair, "make a trace cut short (crash, kill -9) open in every viewer" },
	{ "cut", cmd_cut, "write a window of a trace as a trace of its own" },
	{ "report", cmd_report,
	  "print scheduler latency, off-CPU time, syscalls, CPU samples of a trace" },
	{ "pprof", cmd_pprof, "write a trace's profile by stack for pprof, or as folded stacks" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace COMMAND [OPTIONS]\n\n"
		"Linux execution tracer writing Go execution traces "
		"(open them with `go tool trace`).\n\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nRun `lxtrace COMMAND --help` for a command's options; `lxtrace --version` "
		   "says which lxtrace this is.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("lxtrace %s\n", LXTRACE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "lxtrace: unknown command '%s' (see lxtrace --help)\n", argv[1]);
	return 2;
}
