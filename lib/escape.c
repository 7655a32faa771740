/* escape.c - printing untrusted text (escape.h). */
#include <stdbool.h>

#include "lib/escape.h"

static void put(FILE *f, const char *s, size_t len, bool quoted)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || (quoted && c == '"'))
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

void escape__print(FILE *f, const char *s, size_t len)
{
	put(f, s, len, false);
}

void escape__quoted(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	put(f, s, len, true);
	fputc('"', f);
}
