/* tally.h - the triggers that got no file of their own (within --min-gap of one that did),
 * grouped by trigger and thread in bounded memory: a storm of thousands is said in a few
 * lines, each naming what fired, on which thread, how often and when. */
#ifndef LXTRACE_USER_FLIGHT_TALLY_H
#define LXTRACE_USER_FLIGHT_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "user/flight/trigger.h"

/* Groups kept; the triggers of any further one are only counted. */
#define TALLY_GROUPS 8

struct tally_group {
	struct trigger_fired longest;	/* its longest firing (a record's: its first) */
	uint64_t n;
	uint64_t first_ts, last_ts;
};

struct tally {
	struct tally_group g[TALLY_GROUPS];	/* in the order they were first met */
	size_t ngroups;
	uint64_t others;	/* triggers past the groups kept */
};

/* f joins the group of its trigger and thread (a --trigger and a tid; a trigger record: its
 * tid, 0 for SIGUSR1), made at its first firing while there is room. Start from a zeroed
 * tally. */
void tally__add(struct tally *t, const struct trigger_fired *f);

#endif
