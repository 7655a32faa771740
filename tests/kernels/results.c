/* results.c - one kernel's results directory, read for the assertions (results.h). */
#include "tests/kernels/results.h"

#include <stdlib.h>
#include <string.h>

static const char *dir(void)
{
	const char *d = getenv("LXTRACE_KERNEL_RESULTS");

	return d && *d ? d : ".";
}

const char *kr_name(void)
{
	const char *n = getenv("LXTRACE_KERNEL_NAME");

	return n && *n ? n : dir();
}

const char *kr_path(const char *file)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/out/%s", dir(), file);
	return path;
}

/* The whole of path, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	for (;;) {
		char *more = realloc(buf, len + 65536 + 1);
		size_t got;

		if (!more) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = more;
		got = fread(buf + len, 1, 65536, f);
		len += got;
		if (got < 65536)
			break;
	}
	buf[len] = 0;
	fclose(f);
	return buf;
}

char *kr_read(const char *file)
{
	return slurp(kr_path(file));
}

int kr_step_status(const char *step, double *secs)
{
	FILE *f = fopen(kr_path("steps"), "r");
	char name[64], rc[16];
	double t;
	int status = KR_MISSING;

	while (f && fscanf(f, "%63s %15s %lf", name, rc, &t) == 3) {
		if (strcmp(name, step))
			continue;
		status = !strcmp(rc, "skip") ? KR_SKIPPED : atoi(rc);
		if (secs)
			*secs = t;
	}
	if (f)
		fclose(f);
	return status;
}

const char *kr_step_line(const char *step)
{
	static char line[2048];
	char *log = kr_read("log"), *p = log, prefix[80];

	line[0] = 0;
	snprintf(prefix, sizeof(prefix), "lxk: %s ", step);
	while (p && *p) {
		char *end = strchrnul(p, '\n');

		if (!strncmp(p, prefix, strlen(prefix))) {
			snprintf(line, sizeof(line), "%.*s", (int)(end - p - 5), p + 5);
			break;
		}
		p = *end ? end + 1 : end;
	}
	free(log);
	return line;
}

/* The last n lines of path, each indented, to f; nothing when there is no such file. */
static void tail(const char *title, const char *path, size_t n, FILE *f)
{
	char *text = slurp(path), *p;
	size_t lines = 0;

	if (!text)
		return;
	for (p = text + strlen(text); p > text; p--)
		if (p[-1] == '\n' && p[0] && ++lines > n)
			break;
	fprintf(f, "--- %s (%s, last %zu lines):\n", title, path, n);
	for (char *l = p; *l;) {
		char *end = strchrnul(l, '\n');

		fprintf(f, "    %.*s\n", (int)(end - l), l);
		l = *end ? end + 1 : end;
	}
	free(text);
}

void kr_print_log(const char *step, FILE *f)
{
	char file[128], console[4096];

	fprintf(f, "=== guest log of %s, for the step %s\n", kr_name(), step);
	tail("the scenario's log", kr_path("log"), 40, f);
	snprintf(file, sizeof(file), "%s.err", step);
	tail("its stderr", kr_path(file), 30, f);
	snprintf(file, sizeof(file), "%s.verbose.err", step);
	tail("its verbose rerun's stderr", kr_path(file), 30, f);
	snprintf(console, sizeof(console), "%s/console.log", dir());
	tail("the guest's console", console, 15, f);
}
