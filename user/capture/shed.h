/* shed.h - when a recorder that has fallen behind the kernel sheds work it can count.
 *
 * A record is written some time after the kernel stamped it: the ordering window (~10 ms) on
 * a recorder that keeps up, seconds on one that does not (a loaded machine, -F 100000, the
 * first stacks of every process). Behind, it sheds in two steps, each counted:
 *
 *   waits    from SHED_WAITS_AFTER_NS behind until caught up to SHED_WAITS_UNTIL_NS: no record
 *            waits for a binary's unwind rows (a waiting record holds every later one of
 *            every CPU); its stack ends where the rows are missing, marked and counted (a
 *            wait for a late binary's file, which names the stack, is not shed);
 *   symbols  from SHED_SYMBOLS_AFTER_NS until SHED_SYMBOLS_UNTIL_NS: new call stacks are not
 *            symbolized but marked (one frame that says so, counted in the summary), before
 *            the merge engine, at twice that, drops CPU samples whole (merge_opts).
 *
 * So the recorder falls behind by about a second, not by many (the merge engine's bound in
 * time drops records only past that), and the stop, bounded in time itself, has little to
 * write.
 */
#ifndef LXTRACE_USER_CAPTURE_SHED_H
#define LXTRACE_USER_CAPTURE_SHED_H

#include <stdbool.h>
#include <stdint.h>

/* ~50x the ordering window, well past the first stacks of a quiet start (tens of ms). */
#define SHED_WAITS_AFTER_NS (500 * 1000 * 1000ULL)
#define SHED_WAITS_UNTIL_NS (100 * 1000 * 1000ULL)
/* Symbols cost names: only before samples would be dropped (2 s, capture.c MAX_BEHIND_NS / 2). */
#define SHED_SYMBOLS_AFTER_NS (1500 * 1000 * 1000ULL)
#define SHED_SYMBOLS_UNTIL_NS (500 * 1000 * 1000ULL)

/* One kind of work shed: on from `after` behind, off again at `until`. */
struct shed_step {
	bool on;		/* shedding now */
	uint64_t since;		/* when it began (CLOCK_MONOTONIC ns), while on */
	uint64_t spells;	/* times it began */
	uint64_t ns;		/* time spent shedding, spells ended so far */
};

struct shed {
	/* Records stamped before this count as stamped then: those of a recording's start,
	 * read once the initial state is written (seconds on a busy machine), are late by the
	 * start, not by a recorder that cannot keep up. */
	uint64_t from;
	struct shed_step waits, symbols;
	uint64_t worst;		/* the most behind a record was written, ns */
};

/* A record stamped ts is written at now (CLOCK_MONOTONIC ns, as the kernel stamps): updates
 * s->waits.on and s->symbols.on. */
void shed__update(struct shed *s, uint64_t ts, uint64_t now);

/* The time spent shedding in step st up to now, the spell under way included. */
uint64_t shed__ns(const struct shed_step *st, uint64_t now);

#endif
