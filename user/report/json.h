/* json.h - the report as JSON (`lxtrace report --json`, its schema in docs/report.md): a writer
 * that places the commas and escapes every string, so each section writes its figures as
 * keys and values and the output is valid JSON whatever a trace names.
 *
 * Strings are escaped as lxtrace prints names (lib/escape.h: a byte outside printable ASCII
 * as the four characters \xNN, a backslash doubled), then as JSON asks (the quote and the
 * backslash of that text escaped once more): the output is ASCII, and a name reads as in the
 * text report once JSON's escapes are undone. */
#ifndef LXTRACE_USER_REPORT_JSON_H
#define LXTRACE_USER_REPORT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/hist.h"
#include "user/report/stacktab.h"

/* Deeper than the report nests (10: a thread's histogram's log2 bucket). */
#define JSON_DEPTH 16

struct json {
	FILE *out;
	int depth;
	char close[JSON_DEPTH];	/* what ends each level open: '}' or ']' */
	bool more[JSON_DEPTH];	/* a value was written at this level: the next needs a comma */
	bool after_key;		/* the next value follows a key, with no comma */
	bool oom;		/* a string could not be escaped: the output is not whole */
};

/* Objects and arrays: key NULL inside an array (or for the outermost value). */
void json__object(struct json *j, const char *key);
void json__array(struct json *j, const char *key);
void json__end(struct json *j);	/* of the latest object or array open */

void json__str(struct json *j, const char *key, const char *s);
void json__strn(struct json *j, const char *key, const char *s, size_t len);
void json__uint(struct json *j, const char *key, uint64_t v);
void json__int(struct json *j, const char *key, int64_t v);
void json__bool(struct json *j, const char *key, bool v);
void json__null(struct json *j, const char *key);

/* A histogram of durations: {"count", "sum_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns",
 * "max_ns", "max_at_ns"}, and with log2 its buckets, "log2": [{"from_ns", "count"}, ...]
 * from the first used to the last. */
void json__hist(struct json *j, const char *key, const struct hist *h, bool log2);

/* A stack: [{"func", "file", "line"}, ...], leaf first, whole, the process and program
 * frames last. */
void json__stack(struct json *j, const char *key, const struct st_entry *e);

#endif
