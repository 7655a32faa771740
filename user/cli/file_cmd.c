/* file_cmd.c - usage errors and files shared by dump, repair and cut (file_cmd.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go123/reader.h"
#include "lib/sudo_user.h"
#include "user/cli/file_cmd.h"
#include "user/cli/output_file.h"

int file_cmd__bad_option(const char *cmd, char **argv, const char *with_value)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	/* A long option as written; a short one alone, even inside a cluster (-xvf). */
	if (strncmp(arg, "--", 2))
		arg = shortopt;
	if (optopt && strchr(with_value, optopt))
		fprintf(stderr, "lxtrace %s: %s needs a value (see lxtrace %s --help)\n", cmd, arg,
			cmd);
	else
		fprintf(stderr, "lxtrace %s: unknown option '%s' (see lxtrace %s --help)\n", cmd,
			arg, cmd);
	return 2;
}

const char *file_cmd__one_file(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		fprintf(stderr, "lxtrace %s: no trace file given (see lxtrace %s --help)\n", cmd,
			cmd);
	else if (optind < argc - 1)
		fprintf(stderr, "lxtrace %s: unexpected argument '%s' (see lxtrace %s --help)\n",
			cmd, argv[optind + 1], cmd);
	else
		return argv[optind];
	return NULL;
}

int file_cmd__open(const char *cmd, const char *path, int flags, bool stdin_ok)
{
	int fd;

	if (stdin_ok && !strcmp(path, "-"))
		return STDIN_FILENO;
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "lxtrace %s: %s: %s\n", cmd, path, strerror(errno));
	return fd;
}

struct output_file *file_cmd__create(const char *cmd, const char *path, int in_fd)
{
	char why[PATH_MAX + 256];
	struct output_file *f;
	struct stat in, out;
	uid_t uid;
	gid_t gid;

	if (!fstat(in_fd, &in) && !stat(path, &out) && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino) {
		fprintf(stderr, "lxtrace %s: %s is the input file: write to another one\n", cmd,
			path);
		return NULL;
	}
	f = sudo_user__ids(&uid, &gid, why, sizeof(why)) ? NULL :
	    output_file__prepare(path, uid, gid, why, sizeof(why));
	if (!f)
		fprintf(stderr, "lxtrace %s: %s\n", cmd, why);
	return f;
}

int file_cmd__finish(const char *cmd, struct output_file *f)
{
	char why[PATH_MAX + 256];
	int err = output_file__publish(f, why, sizeof(why)), cerr;

	if (err)
		fprintf(stderr, "lxtrace %s: %s\n", cmd, why);
	cerr = output_file__close(f);
	if (cerr && !err) {
		err = cerr;
		fprintf(stderr, "lxtrace %s: writing the output: %s\n", cmd, strerror(-err));
	}
	return err;
}

bool file_cmd__is_v2(int fd)
{
	uint8_t hdr[GO123_HEADER_LEN];

	return pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
	       go123_reader__is_header(hdr, sizeof(hdr));
}
