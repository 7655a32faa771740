/* go123text.c - see go123text.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/go123text.h"

size_t go123text_syscalls(const char *text, uint32_t tid, const char *func, long long *sum)
{
	long long begun = -1;
	bool named = false;
	size_t n = 0;

	*sum = 0;
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		const char *res = memmem(l, len, "Resource=Goroutine(", 19);
		const char *at = memmem(l, len, "Time=", 5);
		unsigned long long g;

		/* A stack's frames follow its event, a tab ahead of each line. */
		if (l[0] == '\t' && begun >= 0 && memmem(l, len, func, strlen(func)))
			named = true;
		if (!strncmp(l, "M=", 2) && res && at &&
		    sscanf(res, "Resource=Goroutine(%llu)", &g) == 1 && (uint32_t)g == tid) {
			if (memmem(l, len, "Running->Syscall", 16)) {
				begun = atoll(at + 5);
				named = false;
			} else if (memmem(l, len, "Syscall->", 9) && begun >= 0) {
				if (named) {
					*sum += atoll(at + 5) - begun;
					n++;
				}
				begun = -1;
			}
		}
		l += len + (nl != NULL);
	}
	return n;
}
