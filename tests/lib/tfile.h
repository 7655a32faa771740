/* tfile.h - files the tests make: the exact bytes and mode a case needs (the umask does not
 * apply). */
#ifndef LXTRACE_TESTS_TFILE_H
#define LXTRACE_TESTS_TFILE_H

#include <stdint.h>
#include <sys/types.h>

/* Creates or truncates path with text and exactly `mode`. Returns 0 or -errno. */
int tfile_write(const char *path, const char *text, mode_t mode);

/* Writes to path the contents of a GNU-style compressed ELF section (.zdebug_*: "ZLIB", the
 * inflated size, a zlib stream) that inflates to size zero bytes: a thousandth of size on disk,
 * what a zlib bomb is. Returns 0 or -errno. */
int tfile_zsection(const char *path, uint64_t size);

/* Writes a gzip file of size zero bytes to path (a thousandth of size). Returns 0 or -errno. */
int tfile_gzip_zeros(const char *path, uint64_t size);

/* Writes to path an x86_64 assembly program (gcc -o builds it) whose main spins forever in one
 * function with `rows` rows of call-frame information, a byte of code each: libdw, which
 * evaluates each row from the function's start, takes the square of that to compile them. */
int tfile_costly_cfi(const char *path, int rows);

#endif
