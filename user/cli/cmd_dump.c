/* cmd_dump.c - `lxtrace dump FILE`: prints a trace's events one per line, like `go tool trace -d`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "format/dump.h"
#include "format/reader.h"
#include "user/cli/cmd.h"

#define SEE_HELP "(see lxtrace dump --help)"

static void usage(FILE *f)
{
	fprintf(f, "usage: lxtrace dump FILE\n\n"
		   "Prints the events of a Go execution trace written by lxtrace, sorted by time, one\n"
		   "per line: TIME(ns since the first event) p=P g=G EVENT ARGS, followed by the\n"
		   "event's stack frames, indented.\n\n"
		   "  -h, --help  show this help\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gt_trace *t = NULL;
	char err[256];
	int c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		default: {
			const char *arg = argv[optind - 1];
			char shortopt[3] = { '-', (char)optopt, '\0' };

			fprintf(stderr, "lxtrace dump: unknown option '%s' " SEE_HELP "\n",
				strncmp(arg, "--", 2) ? shortopt : arg);
			return 2;
		}
		}
	}
	if (optind == argc) {
		fprintf(stderr, "lxtrace dump: no trace file given " SEE_HELP "\n");
		return 2;
	}
	if (optind < argc - 1) {
		fprintf(stderr, "lxtrace dump: unexpected argument '%s' " SEE_HELP "\n", argv[optind + 1]);
		return 2;
	}
	/* Parse: the whole file is decoded and checked before anything is printed. */
	ret = gt_trace__load(argv[optind], &t, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "lxtrace dump: %s: %s\n", argv[optind], err);
		return 1;
	}
	/* Print. */
	ret = gt_dump__trace(stdout, t);
	if (!ret && fflush(stdout))
		ret = -1;
	gt_trace__free(t);
	if (ret) {
		fprintf(stderr, "lxtrace dump: writing to stdout failed\n");
		return 1;
	}
	return 0;
}
