/* tfile.h - files the tests make: the exact bytes and mode a case needs (the umask does not
 * apply). */
#ifndef LXTRACE_TESTS_TFILE_H
#define LXTRACE_TESTS_TFILE_H

#include <sys/types.h>

/* Creates or truncates path with text and exactly `mode`. Returns 0 or -errno. */
int tfile_write(const char *path, const char *text, mode_t mode);

#endif
