/* goparse.h - runs the real Go trace parsers (Go 1.19 and Go 1.23) over a file, for tests.
 * A test that only round-trips through our own decoder proves little: these are the viewers'
 * own parsers, so a file they accept is a file users can open. */
#ifndef LXTRACE_TESTS_GOPARSE_H
#define LXTRACE_TESTS_GOPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "format/go119/wire.h"

struct goparse_result {
	bool ok;		/* exit status 0 and no error or panic text */
	int status;		/* the parser's exit status */
	char error[1024];	/* first error or panic line when !ok */
	/* Go 1.19 (`go tool trace -d`): events printed, by type. */
	size_t counts[GT_EV_COUNT];
	size_t events;		/* lines (1.19) or converted events (1.23) printed */
};

/* Runs `go tool trace -d FILE` with Go 1.19. Returns 0, or -errno when it could not run. */
int goparse_119(const char *path, struct goparse_result *out);

/* Runs `go tool trace -d=1 FILE` with Go 1.23. Returns 0, or -errno when it could not run. */
int goparse_123(const char *path, struct goparse_result *out);

/* Runs Go 1.23's `trace -d=LEVEL FILE` and keeps what it printed in *text (malloc'd,
 * NUL-terminated; the caller frees it): level 1 runs the whole reader (its checks of state and
 * order, docs/format.md §18.6) and prints the events it makes, level 2 only splits the file
 * into batches and raw events. Printing more than GOPARSE_TEXT_MAX bytes fails the check.
 * Returns 0, or -errno when it could not run. */
#define GOPARSE_TEXT_MAX (256 << 20)
int goparse_123_text(const char *path, int level, struct goparse_result *out, char **text);

/* Runs Go 1.23's viewer (`trace -http=127.0.0.1:0 FILE`): it builds the proc timeline of the
 * whole trace before it listens, then the index, the proc and thread timelines (their JSON
 * must hold events), the goroutine summaries and the user task and region pages are fetched. These panic on some files the
 * parser accepts (docs/format.md). ok when none failed; error holds the panic or the page
 * that failed. Returns 0, or -errno when it could not run. */
int goparse_123_views(const char *path, struct goparse_result *out);

/* The same with Go 1.19's viewer, which builds its timeline before it listens too (and
 * panics there on a goroutine that starts and never stops): the index, the timeline's JSON,
 * the goroutine list and the user task and region pages are fetched. */
int goparse_119_views(const char *path, struct goparse_result *out);

/* Both viewers serve their pages for path. On failure writes a one-line reason. */
bool goparse_views_ok(const char *path, char *why, size_t whylen);

/* Both parsers must accept path. On failure writes a one-line reason naming the parser. */
bool goparse_both_ok(const char *path, char *why, size_t whylen);

#endif
