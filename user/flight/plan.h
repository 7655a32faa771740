/* plan.h - when a flight recorder writes a file: which triggers get one (--max-files,
 * --min-gap, one file per --after), when it is due, and the counts the summary reports.
 * Pure bookkeeping on trigger times: no I/O, so every rule is testable on its own.
 *
 * A trigger at ts that gets a file makes it due at ts + after: the file then shows what
 * followed. A trigger while a file is pending is in that file already: it holds what came
 * until it is begun, at its due time or later. One
 * less than gap after the last trigger that got a file gets none, so a storm of triggers
 * cannot fill the disk; neither does one after max_files files. */
#ifndef LXTRACE_USER_FLIGHT_PLAN_H
#define LXTRACE_USER_FLIGHT_PLAN_H

#include <stdbool.h>
#include <stdint.h>

enum flight_verdict {
	FLIGHT_FILE,		/* a file will be written for it */
	FLIGHT_IN_PENDING,	/* the file already due covers its moment */
	FLIGHT_TOO_SOON,	/* within gap of the last trigger that got a file */
	FLIGHT_NO_MORE,		/* max_files reached */
};

struct flight_plan_stats {
	uint64_t fired;		/* triggers seen */
	uint64_t files;		/* files begun */
	uint64_t abandoned;	/* files that could not be opened under any name tried */
	uint64_t in_pending, too_soon, no_more;	/* triggers without a file of their own */
};

struct flight_plan {
	uint64_t after, gap;	/* ticks */
	unsigned max_files;	/* 0: no limit */
	bool pending;
	uint64_t due;		/* when the pending file is to be written */
	uint64_t last;		/* the last trigger that got a file */
	bool any;		/* one got a file already: last is valid */
	struct flight_plan_stats st;
};

void flight_plan__init(struct flight_plan *p, uint64_t after, uint64_t gap, unsigned max_files);

/* A trigger fired at ts: what becomes of it. */
enum flight_verdict flight_plan__trigger(struct flight_plan *p, uint64_t ts);

/* Whether the pending file is due at now. */
bool flight_plan__due(const struct flight_plan *p, uint64_t now);

/* The pending file was begun (its writing may still fail): the next trigger may have one. */
void flight_plan__written(struct flight_plan *p);

/* The pending file could not be opened: given up, and counted. */
void flight_plan__abandon(struct flight_plan *p);

/* Every file there may be is written: recording on would serve nothing. */
bool flight_plan__done(const struct flight_plan *p);

#endif
