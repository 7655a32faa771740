/* folded.c - a profile as folded stacks (folded.h). */
#include <errno.h>
#include <string.h>

#include "lib/escape.h"
#include "user/report/folded.h"
#include "user/report/stacktab.h"

static void folded_name(FILE *out, const char *s)
{
	char buf[512];
	size_t n = strlen(s) < sizeof(buf) ? strlen(s) : sizeof(buf) - 1;

	memcpy(buf, s, n);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == ';')
			buf[i] = ':';
	escape__print(out, buf, n);
}

int folded__write(const struct profile *p, FILE *out)
{
	const struct stacktab *tab = profile__folded(p);
	const struct st_entry *e = stacktab__entries(tab);

	for (size_t i = 0; i < stacktab__count(tab); i++) {
		if (!e[i].n)
			continue;
		for (size_t k = e[i].n; k-- > 0;) {
			folded_name(out, e[i].frames[k].func);
			fputc(k ? ';' : ' ', out);
		}
		fprintf(out, "%llu\n", (unsigned long long)e[i].value);
	}
	/* The buffered lines go out here, so fflush meets the write error and names it. */
	if (fflush(out))
		return -errno;
	return ferror(out) ? -EIO : 0;
}
