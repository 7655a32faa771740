/* sym_search.h - binary search of the symbolizer's address-sorted tables. */
#ifndef LXTRACE_USER_SYM_SEARCH_H
#define LXTRACE_USER_SYM_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many of the n elements (size bytes each, sorted by the uint64_t at key_off) have a key
 * <= x: the last of them, the candidate holding x, is at the result - 1. */
static inline size_t sym_search__upto(const void *base, size_t n, size_t size, size_t key_off,
				      uint64_t x)
{
	const char *p = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, p + mid * size + key_off, sizeof(key));
		if (key <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
