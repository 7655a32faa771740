/* duration.c - reading durations (duration.h). */
#include <errno.h>
#include <string.h>

#include "lib/duration.h"

int duration__parse(const char *s, size_t len, bool unit, uint64_t *ns)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 }, { "ns", 1 },
	};
	unsigned __int128 whole = 0, frac = 0, scale = 1, v;
	const char *p = s, *end = s + len;
	size_t rest;

	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (unsigned)(*p - '0');
		if (whole > UINT64_MAX)
			return -ERANGE;
	}
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++)
			if (scale < 1000000000000000000ull) {
				frac = frac * 10 + (unsigned)(*p - '0');
				scale *= 10;
			}
	rest = (size_t)(end - p);
	if (!rest) {
		if (unit)
			return -ENOMSG;
		v = whole * 1000000000u + frac * 1000000000u / scale;
	} else {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].name) == rest && !memcmp(p, units[i].name, rest))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		v = whole * units[i].ns + frac * units[i].ns / scale;
	}
	if (v > UINT64_MAX)
		return -ERANGE;
	*ns = (uint64_t)v;
	return 0;
}
