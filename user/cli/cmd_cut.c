/* cmd_cut.c - `lxtrace cut FILE --from T --to T -o OUT`: a window of a trace written as a trace
 * of its own, which opens faster and smaller in the viewers (format/go119/cut.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/cut.h"
#include "format/go123/cut.h"
#include "lib/duration.h"
#include "user/cli/cmd.h"
#include "user/cli/file_cmd.h"
#include "user/cli/output_file.h"

#define PREFIX "lxtrace cut: "
#define SEE_HELP "(see lxtrace cut --help)"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace cut FILE [--from T] [--to T] -o OUT\n\n"
		"Writes the events of FILE from T to T (the end excluded) as a trace of its own:\n"
		"the state at the window's start (each thread created, running, runnable, "
		"waiting,\n"
		"in a syscall; open tasks and the regions of running threads) as an init phase,\n"
		"the window's events, then the ends of what is still open. Times count from the\n"
		"trace's first event, as both viewers show them: seconds, or a number with a unit\n"
		"(ns, us, ms, s), e.g. 2.5 or 2500ms.\n\n"
		"A go1.23 trace (\"go 1.23 trace\") is cut by whole generations (about a\n"
		"second each), copied as they are: every one that holds an event of the window,\n"
		"the first one's statuses being the start.\n\n"
		"  -f, --from T        the window's start (default: the trace's start)\n"
		"  -t, --to T          its end (default: the trace's end)\n"
		"  -o, --output OUT    write it to OUT (mode 0600)\n"
		"  -h, --help          show this help\n");
}

/* A go1.23 trace: the generations of the window copied (format/go123/cut.h). 0, or 1 after
 * saying why; of is closed either way. */
static int cut_v2(const char *path, int fd, struct output_file *of, const char *out,
		  uint64_t from_ns, uint64_t to_ns)
{
	struct go123_cut_report rep;
	char err[512];

	if (go123_cut(fd, output_file__fd(of), from_ns, to_ns, &rep, err, sizeof(err))) {
		fprintf(stderr, PREFIX "%s: %s\n", path, err);
		output_file__close(of);
		return 1;
	}
	if (file_cmd__finish("cut", of))
		return 1;
	printf("%s: %s from %.9f s to %.9f s: generations %llu to %llu, %llu events; %llu "
	       "bytes\n", out, path, rep.from_ns / 1e9, rep.to_ns / 1e9,
	       (unsigned long long)rep.first_gen,
	       (unsigned long long)(rep.first_gen + rep.generations - 1),
	       (unsigned long long)rep.events, (unsigned long long)rep.bytes);
	return 0;
}

int cmd_cut(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t from_ns = 0, to_ns = UINT64_MAX;
	struct gt_cut_window win;
	const char *path, *out = NULL;
	struct gt_cut_stats st;
	struct output_file *of = NULL;
	int c, fd = -1, ret;
	char err[512];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hf:t:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'f':
		case 't':
			if (duration__parse(optarg, strlen(optarg), false,
					    c == 'f' ? &from_ns : &to_ns)) {
				fprintf(stderr, PREFIX "bad time '%s' for --%s: seconds, or a number "
					"with ns, us, ms or s " SEE_HELP "\n", optarg,
					c == 'f' ? "from" : "to");
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return file_cmd__bad_option("cut", argv, "fto");
		}
	}
	path = file_cmd__one_file("cut", argc, argv);
	if (!path)
		return 2;
	if (!out) {
		fprintf(stderr, PREFIX "no output file: give -o OUT " SEE_HELP "\n");
		return 2;
	}
	if (from_ns >= to_ns) {
		fprintf(stderr, PREFIX "--from must come before --to " SEE_HELP "\n");
		return 2;
	}

	/* Open. */
	fd = file_cmd__open("cut", path, O_RDONLY, false);
	if (fd < 0)
		goto fail;
	of = file_cmd__create("cut", out, fd);
	if (!of)
		goto fail;

	if (file_cmd__is_v2(fd)) {
		ret = cut_v2(path, fd, of, out, from_ns, to_ns);
		close(fd);
		return ret;
	}
	/* Cut: three passes over FILE; OUT is put in place only whole. */
	ret = gt_cut__file(fd, output_file__fd(of), from_ns, to_ns, &st, &win, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PREFIX "%s: %s\n", path, err);
		goto fail;
	}
	ret = file_cmd__finish("cut", of);
	of = NULL;
	if (ret)
		goto fail;
	close(fd);
	printf("%s: %s from %.9f s to %.9f s: %llu events; at the start %llu threads (%llu "
	       "running, %llu waiting, %llu in syscalls), %llu tasks, %llu regions (%llu left "
	       "out); %llu bytes\n", out, path, win.from_ns / 1e9, win.to_ns / 1e9,
	       (unsigned long long)st.window_events,
	       (unsigned long long)st.goroutines, (unsigned long long)st.running,
	       (unsigned long long)st.waiting, (unsigned long long)st.syscall,
	       (unsigned long long)st.tasks, (unsigned long long)st.regions,
	       (unsigned long long)st.left_out, (unsigned long long)st.bytes);
	return 0;
fail:
	output_file__close(of);
	if (fd >= 0)
		close(fd);
	return 1;
}
