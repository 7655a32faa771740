/* grow.h - amortised growth of heap arrays, for the tables of format/ and user/ alike. */
#ifndef LXTRACE_LIB_GROW_H
#define LXTRACE_LIB_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes *arr hold at least `need` elements of `elem` bytes, doubling from `min_cap`.
 * Returns 0 or -ENOMEM (also on size overflow); *arr and *cap are unchanged on failure. */
static inline int grow_array(void **arr, size_t *cap, size_t need, size_t elem, size_t min_cap)
{
	size_t ncap = *cap ? *cap : min_cap;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

#endif
