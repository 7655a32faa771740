/* file_cmd.h - what the commands that read a trace file (dump, repair, cut, report, pprof)
 * share: their one-line usage errors, their one FILE argument and its opening, the output file
 * they create. */
#ifndef LXTRACE_USER_CLI_FILE_CMD_H
#define LXTRACE_USER_CLI_FILE_CMD_H

#include <stdbool.h>

/* After getopt_long returned '?': prints "lxtrace CMD: unknown option 'X'" or, for one of the
 * option letters in `with_value`, "-X needs a value", pointing at `lxtrace CMD --help`.
 * Returns 2, the exit status of a usage error. */
int file_cmd__bad_option(const char *cmd, char **argv, const char *with_value);

/* The one FILE left in argv after the options (at optind), or NULL after saying, in one line,
 * that there is none or more than one. */
const char *file_cmd__one_file(const char *cmd, int argc, char **argv);

/* FILE opened with flags (O_RDONLY, or O_RDWR to change it in place; O_CLOEXEC is added), "-"
 * being standard input where stdin_ok; -1 after saying why in one line. */
int file_cmd__open(const char *cmd, const char *path, int flags, bool stdin_ok);

/* Whether the file open on fd is a go1.23 trace, by its header (read in place). */
bool file_cmd__is_v2(int fd);

struct output_file;

/* The file a command writes its trace to, by the recorder's rules (output_file.h: no link
 * followed, no other user's file taken, 0600 and the invoking user's), never the file open on
 * in_fd (the input): made beside path, put there by file_cmd__finish once written whole, so a
 * failed command leaves path as it was (output_file__close alone takes it away). NULL after
 * saying why in one line. */
struct output_file *file_cmd__create(const char *cmd, const char *path, int in_fd);

/* Puts f at its path and closes it; 0, or -errno after saying why in one line. */
int file_cmd__finish(const char *cmd, struct output_file *f);

#endif
