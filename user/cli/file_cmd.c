/* file_cmd.c - usage errors and files shared by dump, repair and cut (file_cmd.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/cli/file_cmd.h"

int file_cmd__bad_option(const char *cmd, char **argv, const char *with_value)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	/* A long option as written; a short one alone, even inside a cluster (-xvf). */
	if (strncmp(arg, "--", 2))
		arg = shortopt;
	if (optopt && strchr(with_value, optopt))
		fprintf(stderr, "lxtrace %s: %s needs a value (see lxtrace %s --help)\n", cmd, arg, cmd);
	else
		fprintf(stderr, "lxtrace %s: unknown option '%s' (see lxtrace %s --help)\n", cmd, arg,
			cmd);
	return 2;
}

const char *file_cmd__one_file(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		fprintf(stderr, "lxtrace %s: no trace file given (see lxtrace %s --help)\n", cmd, cmd);
	else if (optind < argc - 1)
		fprintf(stderr, "lxtrace %s: unexpected argument '%s' (see lxtrace %s --help)\n", cmd,
			argv[optind + 1], cmd);
	else
		return argv[optind];
	return NULL;
}

int file_cmd__create(const char *cmd, const char *path, int in_fd)
{
	struct stat in, out;
	int fd;

	if (!fstat(in_fd, &in) && !stat(path, &out) && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino) {
		fprintf(stderr, "lxtrace %s: %s is the input file: write to another one\n", cmd, path);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		fprintf(stderr, "lxtrace %s: %s: %s\n", cmd, path, strerror(errno));
	return fd;
}
