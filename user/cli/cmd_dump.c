/* cmd_dump.c - `lxtrace dump FILE`: prints a trace's events one per line, like `go tool trace -d`,
 * streaming: memory does not grow with the file (format/go119/reader.h), but for a trace Go's
 * runtime wrote, read whole to be put in order (format/go119/order.h); what Go's parsers refuse
 * is refused, goroutine states and their order included (format/go119/state.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/dump.h"
#include "format/go119/order.h"
#include "format/go119/reader.h"
#include "format/go119/state.h"
#include "format/go123/print.h"
#include "format/go123/reader.h"
#include "user/cli/cmd.h"
#include "user/cli/file_cmd.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lxtrace dump FILE\n\n"
		"Prints the events of a Go execution trace, one per line: TIME p=P g=G EVENT "
		"ARGS,\n"
		"followed by the event's stack frames, indented. TIME is in ns since the trace's\n"
		"first event, as the viewers count it. Events come in file order: batch by batch,\n"
		"each P's events in time order (sort by TIME to merge the Ps). A trace Go's\n"
		"runtime wrote (runtime/trace of Go 1.19) is read whole and printed in the\n"
		"order Go 1.19's parser puts it, its ...Local events as their plain kind.\n\n"
		"A go1.23 trace (\"go 1.23 trace\", told by its header) prints as TIME gen=N m=M\n"
		"EVENT ARGS: batch by batch, each M's events in time order, then the generation's\n"
		"CPU samples; strings resolved, stacks by id with their frames. Its generations\n"
		"are checked whole before any of their events is printed.\n\n"
		"The file is read as a stream, in constant memory; a file that can be read twice\n"
		"is checked whole before anything is printed, and a stack whose JIT frames the\n"
		"recorder named at its end is shown named for every event, as the viewers do.\n"
		"A malformed file, or one Go's parsers refuse (goroutine states, their order\n"
		"across Ps), is refused at its first bad record, with the byte offset (exit\n"
		"status 1). FILE - reads stdin.\n\n"
		"  -h, --help  show this help\n");
}

/* Whether fd's header has been read (from a stream that cannot be read twice). */
static bool header_read;

/* A reader of fd into dictionary d (a new one of the reader's own when NULL) and a state
 * tracker to check its events; 0, or 1 with the reason in err. */
static int open_checked(int fd, struct gt_dict *d, struct gt_reader **r, struct gt_state **s,
			char *err, size_t errlen)
{
	*r = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts), .fd = fd,
			    .headerless = header_read, .offset = header_read ? GT_HEADER_LEN : 0,
			    .dict = d });
	*s = *r ? gt_state__new() : NULL;
	if (*s)
		return 0;
	snprintf(err, errlen, "%s", strerror(errno));
	gt_reader__free(*r);
	return 1;
}

/* The trace's first time (what the viewers count from), reading fd to its end, its
 * definitions into whole: 0, or 1 on a bad file with the reason in err. */
static int scan(int fd, struct gt_dict *whole, uint64_t *t0, char *err, size_t errlen)
{
	struct gt_reader *r;
	struct gt_state *s;
	struct gt_event e;
	int ret;

	if (open_checked(fd, whole, &r, &s, err, errlen))
		return 1;
	*t0 = UINT64_MAX;
	while ((ret = gt_state__next(s, r, &e, err, errlen)) == 1)
		if (e.ts < *t0)
			*t0 = e.ts;
	gt_state__free(s);
	gt_reader__free(r);
	return ret ? 1 : 0;
}

/* Prints every event of fd; t0 is the time origin, UINT64_MAX to take the first event's; whole,
 * when not NULL, the definitions of the file read to its end, whose refined stacks each event
 * shows as refined (gt_dict__refine_from). 0, 1 on a bad file (err says why), -1 when stdout
 * fails. */
static int print(int fd, const struct gt_dict *whole, uint64_t t0, char *err, size_t errlen)
{
	struct gt_dict *d = whole ? gt_dict__new(NULL, 0) : NULL;
	struct gt_reader *r;
	struct gt_state *s;
	struct gt_event e;
	int ret, out = 0;

	if (whole && (!d || gt_dict__refine_from(d, whole))) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		gt_dict__free(d);
		return 1;
	}
	if (open_checked(fd, d, &r, &s, err, errlen)) {
		gt_dict__free(d);
		return 1;
	}
	while (!out && (ret = gt_state__next(s, r, &e, err, errlen)) == 1) {
		if (t0 == UINT64_MAX)
			t0 = e.ts;
		out = gt_dump__event(stdout, gt_reader__dict(r), gt_reader__frequency(r), &e, t0);
	}
	gt_state__free(s);
	gt_reader__free(r);
	gt_dict__free(d);
	if (out || fflush(stdout))
		return -1;
	return ret ? 1 : 0;
}

/* A go1.19 file Go's runtime wrote (format/go119/order.h): read whole, put in Go's order, checked
 * whole, then printed in that order. 0, 1 on a bad file (err says why), -1 when stdout fails. */
static int dump_ordered(int fd, char *err, size_t errlen)
{
	struct gt_trace *tr = NULL;
	struct gt_event *ev = NULL;
	size_t n = 0;
	int ret = lseek(fd, 0, SEEK_SET) ? -errno : 0, out = 0;

	if (ret)
		snprintf(err, errlen, "rewinding: %s", strerror(-ret));
	if (!ret && !(ret = gt_trace__read(fd, &tr, err, errlen)))
		ret = gt_order__events(gt_trace__events(tr), n = gt_trace__nevents(tr), &ev, err,
				       errlen);
	if (!ret)
		ret = gt_state__check(ev, n, err, errlen);
	for (size_t i = 0; !ret && !out && i < n; i++)
		out = gt_dump__event(stdout, gt_trace__dict(tr), gt_trace__frequency(tr), &ev[i],
				     ev[0].ts);
	free(ev);
	gt_trace__free(tr);
	if (ret)
		return 1;
	return out || fflush(stdout) ? -1 : 0;
}

/* A go1.23 file: the reader checks a generation whole before it hands out its events, so
 * what it prints of a stream is whole generations (format/go123/reader.h). */
static struct go123_reader *open_v2(int fd, char *err, size_t errlen)
{
	struct go123_reader *r = go123_reader__new(&(struct go123_reader_opts){
		.sz = sizeof(struct go123_reader_opts), .fd = fd, .header_read = header_read });

	if (!r)
		snprintf(err, errlen, "%s", strerror(errno));
	return r;
}

static int scan_v2(int fd, int64_t *t0, char *err, size_t errlen)
{
	struct go123_reader *r = open_v2(fd, err, errlen);
	struct go123_event e;
	int ret;

	if (!r)
		return 1;
	*t0 = INT64_MAX;
	while ((ret = go123_reader__next(r, &e)) == 1)
		if (go123_reader__ns(r, e.ts) < *t0)
			*t0 = go123_reader__ns(r, e.ts);
	if (ret)
		snprintf(err, errlen, "%s", go123_reader__error(r));
	go123_reader__free(r);
	return ret ? 1 : 0;
}

static int print_v2(int fd, int64_t t0, char *err, size_t errlen)
{
	struct go123_reader *r = open_v2(fd, err, errlen);
	struct go123_event e;
	int ret = 0, out = 0;

	if (!r)
		return 1;
	while (!out && (ret = go123_reader__next(r, &e)) == 1) {
		if (t0 == INT64_MAX)
			t0 = go123_reader__ns(r, e.ts);
		out = go123_print__event(stdout, r, &e, t0);
	}
	if (ret < 0)
		snprintf(err, errlen, "%s", go123_reader__error(r));
	go123_reader__free(r);
	if (out || fflush(stdout))
		return -1;
	return ret ? 1 : 0;
}

/* Whether fd holds a go1.23 trace, from its header: read in place when fd can be read
 * twice, else taken from the stream (header_read). */
static bool is_v2(int fd)
{
	uint8_t hdr[GO123_HEADER_LEN];
	ssize_t n;

	if (lseek(fd, 0, SEEK_CUR) >= 0)
		return file_cmd__is_v2(fd);
	/* A pipe may hand the 16 bytes over in pieces. */
	for (n = 0; n < (ssize_t)sizeof(hdr);) {
		ssize_t k = read(fd, hdr + n, sizeof(hdr) - (size_t)n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += k;
	}
	header_read = n == (ssize_t)sizeof(hdr) && (go123_reader__is_header(hdr, sizeof(hdr)) ||
						      !memcmp(hdr, GT_HEADER, GT_HEADER_LEN));
	/* Neither header: the go1.19 reader, told of none, refuses what follows. */
	return header_read && go123_reader__is_header(hdr, sizeof(hdr));
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gt_dict *whole = NULL;	/* the file's definitions, when it can be read twice */
	const char *path;
	uint64_t t0 = UINT64_MAX;
	char err[256];
	int c, fd, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		default:
			return file_cmd__bad_option("dump", argv, "");
		}
	}
	path = file_cmd__one_file("dump", argc, argv);
	if (!path)
		return 2;
	fd = file_cmd__open("dump", path, O_RDONLY, true);
	if (fd < 0)
		return 1;
	ret = 0;
	err[0] = '\0';
	if (is_v2(fd)) {
		int64_t t0_ns = INT64_MAX;

		if (!header_read)
			ret = scan_v2(fd, &t0_ns, err, sizeof(err));
		if (!ret && !header_read && lseek(fd, 0, SEEK_SET)) {
			snprintf(err, sizeof(err), "rewinding: %s", strerror(errno));
			ret = 1;
		}
		if (!ret)
			ret = print_v2(fd, t0_ns, err, sizeof(err));
		goto done;
	}
	/* Go's runtime wrote it: its order is known once it is read whole. */
	if (lseek(fd, GT_HEADER_LEN, SEEK_SET) == GT_HEADER_LEN && gt_order__needed(fd)) {
		ret = dump_ordered(fd, err, sizeof(err));
		goto done;
	}
	/* Check, when the file can be read twice; else the stream is checked as it prints. */
	if (lseek(fd, 0, SEEK_SET) == 0) {
		whole = gt_dict__new(NULL, 0);
		if (!whole) {
			snprintf(err, sizeof(err), "%s", strerror(errno));
			ret = 1;
		}
		if (!ret)
			ret = scan(fd, whole, &t0, err, sizeof(err));
		if (!ret && lseek(fd, 0, SEEK_SET)) {
			snprintf(err, sizeof(err), "rewinding: %s", strerror(errno));
			ret = 1;
		}
	}
	/* Print. */
	if (!ret)
		ret = print(fd, whole, t0, err, sizeof(err));
	gt_dict__free(whole);
done:
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret > 0) {
		fprintf(stderr, "lxtrace dump: %s: %s\n", path, err);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "lxtrace dump: writing to stdout failed\n");
		return 1;
	}
	return 0;
}
