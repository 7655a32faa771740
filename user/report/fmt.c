/* fmt.c - durations and names for the report's columns (fmt.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/escape.h"
#include "user/report/fmt.h"

const char *fmt__dur(char *buf, uint64_t ns)
{
	static const struct {
		double div;
		const char *unit;
	} units[] = { { 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t u = 0;
	double v;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && (double)ns >= units[u + 1].div)
		u++;
	v = (double)ns / units[u].div;
	if (u == 0 || v >= 99.95)
		snprintf(buf, FMT_DUR, "%.0f%s", v, units[u].unit);
	else if (v >= 9.995)
		snprintf(buf, FMT_DUR, "%.1f%s", v, units[u].unit);
	else
		snprintf(buf, FMT_DUR, "%.2f%s", v, units[u].unit);
	return buf;
}

const char *fmt__cut(char *buf, size_t width, const char *s)
{
	char tmp[256];
	FILE *f = fmemopen(tmp, sizeof(tmp), "w");
	size_t len;

	buf[0] = '\0';
	if (!f)
		return buf;
	escape__print(f, s, strlen(s));
	/* fmemopen writes no NUL when nothing was written: end the text where it ends. */
	fflush(f);
	len = (size_t)ftell(f);
	fclose(f);
	if (len > sizeof(tmp) - 1)
		len = sizeof(tmp) - 1;
	tmp[len] = '\0';
	if (len < width) {
		memcpy(buf, tmp, len + 1);
	} else {
		memcpy(buf, tmp, width - 1);
		buf[width - 1] = '~';
		buf[width] = '\0';
	}
	return buf;
}

void fmt__log2(FILE *out, const char *what, const struct hist *h)
{
	uint64_t b[HIST_LOG2], most = 0;
	int lo = HIST_LOG2, hi = -1;

	fprintf(out, "    %s, by length:\n", what);
	hist__log2(h, b);
	for (int k = 0; k < HIST_LOG2; k++)
		if (b[k]) {
			lo = k < lo ? k : lo;
			hi = k;
			most = b[k] > most ? b[k] : most;
		}
	for (int k = lo; k <= hi; k++) {
		char from[FMT_DUR], to[FMT_DUR], bar[41];
		size_t len = most ? (size_t)(b[k] * 40 / most) : 0;

		memset(bar, '*', len);
		bar[len] = '\0';
		fmt__dur(from, k ? 1ull << k : 0);
		fmt__dur(to, (2ull << k) - 1);
		fprintf(out, "    %7s .. %-7s %8llu |%-40s|\n", from, to, (unsigned long long)b[k],
			bar);
	}
}

void fmt__stack(FILE *out, const struct st_entry *e, size_t max)
{
	char buf[80];
	size_t i, shown = 0;

	for (i = 0; i < e->n; i++) {
		const struct st_frame *f = &e->frames[i];

		if (!strcmp(f->file, "program") || !strncmp(f->file, "pid ", 4))
			break;
		if (shown++ < max)
			fprintf(out, "      %s\n", fmt__cut(buf, 72, f->func));
	}
	if (shown > max)
		fprintf(out, "      ... %zu frame%s more\n", shown - max,
			shown - max > 1 ? "s" : "");
	/* "in COMM (pid PID), program PROG" in 80 columns. */
	if (i < e->n) {
		fprintf(out, "      in %s", fmt__cut(buf, 40, e->frames[i].func));
		if (i + 1 < e->n)
			fprintf(out, ", program %s", fmt__cut(buf, 24, e->frames[i + 1].func));
		fprintf(out, "\n");
	}
}
