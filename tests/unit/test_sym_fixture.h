/* test_sym_fixture.h - runs the symbolizer fixture programs (tests/symfix/) and reads the code
 * addresses they print. */
#ifndef LXTRACE_TESTS_UNIT_TEST_SYM_FIXTURE_H
#define LXTRACE_TESTS_UNIT_TEST_SYM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symfix {
	pid_t pid;		/* 0 once reaped */
	char line[512];		/* its first output line: "key=0xADDR key=0xADDR ..." */
};

/* Starts $(OUT)/tests/symfix/NAME (found next to the test binary) and waits for its line. */
void symfix__start(struct symfix *f, const char *name);

/* Starts the program at path instead. */
void symfix__start_path(struct symfix *f, const char *path);

/* The path of fixture NAME, built in $(OUT)/tests/symfix/ next to the test binary. */
void symfix__path(const char *name, char *out, size_t size);

/* The value printed as "key=0x...". Fails the test when absent. */
uint64_t symfix__addr(const struct symfix *f, const char *key);

/* Kills and reaps the fixture. Accepts a fixture never started or already stopped. */
void symfix__stop(struct symfix *f);

/* The line of file holding "LINE:marker" (1-based). Fails the test when absent. */
uint64_t symfix__marker_line(const char *file, const char *marker);

#endif
