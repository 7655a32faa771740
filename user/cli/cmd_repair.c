/* cmd_repair.c - `lxtrace repair FILE [-o OUT]`: makes a trace cut short by kill -9, a crash,
 * power loss or a full disk one that every viewer opens (format/go119/repair.h), and says what it
 * did in one line. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/repair.h"
#include "format/go123/repair.h"
#include "user/cli/cmd.h"
#include "user/cli/file_cmd.h"
#include "user/cli/output_file.h"

#define PREFIX "lxtrace repair: "

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace repair FILE [-o OUT]\n\n"
		"Makes a trace that was cut short (lxtrace killed, a crash, power loss, a full\n"
		"disk) open in every viewer: Go 1.19's `go tool trace` panics on goroutines still\n"
		"running where the file ends. What follows the last whole batch before the first\n"
		"bad byte (a batch torn by power loss), or before the first event Go's parsers\n"
		"would refuse, is dropped; the goroutines, Ps and GC phases the file leaves open\n"
		"are ended at its last time; a log event in the file says what was done. A whole\n"
		"trace is left as it is, so repairing twice changes nothing. Prints one line\n"
		"saying what it did; exit status 1, with the reason, when there is no trace left\n"
		"to repair.\n\n"
		"A go1.23 trace (\"go 1.23 trace\") is cut back to its last whole generation,\n"
		"which Go 1.23 reads as the end: nothing needs closing there.\n\n"
		"  -o, --output OUT  write the repaired trace to OUT (mode 0600) and leave FILE\n"
		"                    as it is; by default FILE is repaired in place\n"
		"  -h, --help        show this help\n");
}

static void print_report(const char *path, const char *out, const struct gt_repair_report *r)
{
	if (!r->appended) {
		printf("%s: a whole trace (%llu events, nothing open): nothing to do%s%s\n", path,
		       (unsigned long long)r->events, out ? "; copied to " : "", out ? out : "");
		return;
	}
	printf("%s%s%s: kept %llu of %llu bytes", path, out ? " -> " : "", out ? out : "",
	       (unsigned long long)r->kept, (unsigned long long)r->size);
	if (r->kept < r->size)
		printf(" (dropped %llu: %s)", (unsigned long long)(r->size - r->kept), r->why);
	printf(", %llu events; stopped %llu running goroutine%s and %llu P%s, ended %llu GC "
	       "phase%s; appended %llu bytes\n", (unsigned long long)r->events,
	       (unsigned long long)r->goroutines, r->goroutines == 1 ? "" : "s",
	       (unsigned long long)r->procs, r->procs == 1 ? "" : "s",
	       (unsigned long long)r->phases, r->phases == 1 ? "" : "s",
	       (unsigned long long)r->appended);
}

/* A go1.23 trace: its whole generations kept (format/go123/repair.h). 0, or 1 after saying why;
 * of is closed either way. */
static int repair_v2(const char *path, int fd, struct output_file *of, const char *out)
{
	struct go123_repair_report rep;
	char err[512];

	if (go123_repair(fd, of ? output_file__fd(of) : -1, &rep, err, sizeof(err))) {
		fprintf(stderr, PREFIX "%s: %s\n", path, err);
		output_file__close(of);
		return 1;
	}
	if (of && file_cmd__finish("repair", of))
		return 1;
	if (rep.kept == rep.size) {
		printf("%s: a whole trace (%llu generations, %llu events): nothing to do%s%s\n",
		       path, (unsigned long long)rep.generations, (unsigned long long)rep.events,
		       out ? "; copied to " : "", out ? out : "");
		return 0;
	}
	printf("%s%s%s: kept %llu of %llu bytes (dropped %llu: %s), %llu whole generations, "
	       "%llu events\n", path, out ? " -> " : "", out ? out : "",
	       (unsigned long long)rep.kept, (unsigned long long)rep.size,
	       (unsigned long long)(rep.size - rep.kept), rep.why,
	       (unsigned long long)rep.generations, (unsigned long long)rep.events);
	return 0;
}

int cmd_repair(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gt_repair_report rep;
	const char *path, *out = NULL;
	struct output_file *of = NULL;
	int c, fd = -1, ret;
	char err[512];

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'o':
			out = optarg;
			break;
		default:
			return file_cmd__bad_option("repair", argv, "o");
		}
	}
	path = file_cmd__one_file("repair", argc, argv);
	if (!path)
		return 2;

	/* Open: FILE for reading (and writing, in place), OUT when given. */
	fd = file_cmd__open("repair", path, out ? O_RDONLY : O_RDWR, false);
	if (fd < 0)
		goto fail;
	if (out && !(of = file_cmd__create("repair", out, fd)))
		goto fail;

	if (file_cmd__is_v2(fd)) {
		ret = repair_v2(path, fd, of, out);
		of = NULL;
		if (ret)
			goto fail;
		close(fd);
		return 0;
	}
	/* Repair; OUT is put in place only whole. */
	ret = gt_repair(fd, of ? output_file__fd(of) : -1, &rep, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PREFIX "%s: %s\n", path, err);
		goto fail;
	}
	ret = of ? file_cmd__finish("repair", of) : 0;
	of = NULL;
	if (ret)
		goto fail;
	if (close(fd)) {
		fprintf(stderr, PREFIX "%s: %s\n", path, strerror(errno));
		return 1;
	}
	print_report(path, out, &rep);
	return 0;
fail:
	output_file__close(of);
	if (fd >= 0)
		close(fd);
	return 1;
}
