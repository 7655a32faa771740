/* json.c - the report's JSON writer (json.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "user/report/json.h"

/* s as lxtrace escapes names, then its quotes and backslashes as JSON escapes them. */
static void quoted(struct json *j, const char *s, size_t len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f || (escape__print(f, s, len), fclose(f))) {
		j->oom = true;
		n = 0;
	}
	fputc('"', j->out);
	for (size_t i = 0; i < n; i++) {
		if (text[i] == '"' || text[i] == '\\')
			fputc('\\', j->out);
		fputc(text[i], j->out);
	}
	fputc('"', j->out);
	free(text);
}

/* The comma before a value, and its key. */
static void begin(struct json *j, const char *key)
{
	if (!j->after_key && j->depth > 0 && j->more[j->depth - 1])
		fputc(',', j->out);
	if (j->depth > 0)
		j->more[j->depth - 1] = true;
	j->after_key = false;
	if (key) {
		quoted(j, key, strlen(key));
		fputc(':', j->out);
	}
}

static void open_level(struct json *j, const char *key, char open, char close)
{
	begin(j, key);
	fputc(open, j->out);
	j->close[j->depth] = close;
	j->more[j->depth] = false;
	j->depth++;
}

void json__object(struct json *j, const char *key)
{
	open_level(j, key, '{', '}');
}

void json__array(struct json *j, const char *key)
{
	open_level(j, key, '[', ']');
}

void json__end(struct json *j)
{
	fputc(j->close[--j->depth], j->out);
	if (!j->depth)
		fputc('\n', j->out);
}

void json__strn(struct json *j, const char *key, const char *s, size_t len)
{
	begin(j, key);
	quoted(j, s, len);
}

void json__str(struct json *j, const char *key, const char *s)
{
	json__strn(j, key, s, strlen(s));
}

void json__uint(struct json *j, const char *key, uint64_t v)
{
	begin(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void json__int(struct json *j, const char *key, int64_t v)
{
	begin(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void json__bool(struct json *j, const char *key, bool v)
{
	begin(j, key);
	fputs(v ? "true" : "false", j->out);
}

void json__null(struct json *j, const char *key)
{
	begin(j, key);
	fputs("null", j->out);
}

void json__hist(struct json *j, const char *key, const struct hist *h, bool log2)
{
	uint64_t b[HIST_LOG2];
	int lo = HIST_LOG2, hi = -1;

	json__object(j, key);
	json__uint(j, "count", h->count);
	json__uint(j, "sum_ns", h->sum);
	json__uint(j, "min_ns", h->count ? h->min : 0);
	json__uint(j, "p50_ns", hist__quantile(h, 0.5));
	json__uint(j, "p90_ns", hist__quantile(h, 0.9));
	json__uint(j, "p99_ns", hist__quantile(h, 0.99));
	json__uint(j, "max_ns", h->max);
	json__uint(j, "max_at_ns", h->max_at);
	if (log2) {
		hist__log2(h, b);
		for (int k = 0; k < HIST_LOG2; k++)
			if (b[k]) {
				lo = k < lo ? k : lo;
				hi = k;
			}
		json__array(j, "log2");
		for (int k = lo; k <= hi; k++) {
			json__object(j, NULL);
			json__uint(j, "from_ns", k ? 1ull << k : 0);
			json__uint(j, "count", b[k]);
			json__end(j);
		}
		json__end(j);
	}
	json__end(j);
}

void json__stack(struct json *j, const char *key, const struct st_entry *e)
{
	json__array(j, key);
	for (size_t i = 0; i < e->n; i++) {
		json__object(j, NULL);
		json__str(j, "func", e->frames[i].func);
		json__str(j, "file", e->frames[i].file);
		json__uint(j, "line", e->frames[i].line);
		json__end(j);
	}
	json__end(j);
}
