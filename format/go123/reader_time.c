/* reader_time.c - a go1.23 generation's times (reader_core.h): ticks at its Frequency to
 * nanoseconds, as Go 1.23 counts them, and the latest time refused when Go's int64 ns cannot
 * hold it. */
#include <errno.h>

#include "format/go123/reader_core.h"

int go123_reader_check_time(struct go123_reader *r)
{
	/* Go turns ticks into int64 ns (through a float64): past 2^63 ns its times wrap, and so
	 * would every difference taken of them. */
	if ((unsigned __int128)r->hi * 1000000000u / r->freq > INT64_MAX)
		return go123_reader_fail(r, -EINVAL, r->gen_start, "generation %llu: time %llu at "
					 "%llu ticks per second is past 2^63 ns, what Go's clock "
					 "holds", (unsigned long long)r->gen,
					 (unsigned long long)r->hi, (unsigned long long)r->freq);
	return 0;
}

int64_t go123_reader__ns(const struct go123_reader *r, uint64_t ts)
{
	uint64_t f = r->freq ? r->freq : 1000000000;

	return (int64_t)((__int128)ts * 1000000000 / f);
}

void go123_reader__gen_span(const struct go123_reader *r, int64_t *first_ns, int64_t *last_ns)
{
	*first_ns = go123_reader__ns(r, r->lo);
	*last_ns = go123_reader__ns(r, r->hi);
}
