/* plan.c - the flight recorder's rules for which triggers get a file and when
 * (plan.h). */
#include "user/flight/plan.h"

void flight_plan__init(struct flight_plan *p, uint64_t after, uint64_t gap, unsigned max_files)
{
	*p = (struct flight_plan){ .after = after, .gap = gap, .max_files = max_files };
}

static bool all_taken(const struct flight_plan *p)
{
	return p->max_files && p->st.files + p->pending >= p->max_files;
}

enum flight_verdict flight_plan__trigger(struct flight_plan *p, uint64_t ts)
{
	p->st.fired++;
	/* Past the due time too: the file is begun only once the records up to it have come,
	 * so one still pending holds what came before it begins. */
	if (p->pending) {
		p->st.in_pending++;
		return FLIGHT_IN_PENDING;
	}
	if (all_taken(p)) {
		p->st.no_more++;
		return FLIGHT_NO_MORE;
	}
	/* A trigger older than the last one (a record delivered late) is too soon as well. */
	if (p->any && ts < p->last + p->gap) {
		p->st.too_soon++;
		return FLIGHT_TOO_SOON;
	}
	p->pending = true;
	p->due = ts + p->after;
	p->last = ts;
	p->any = true;
	return FLIGHT_FILE;
}

bool flight_plan__due(const struct flight_plan *p, uint64_t now)
{
	return p->pending && now >= p->due;
}

void flight_plan__written(struct flight_plan *p)
{
	if (!p->pending)
		return;
	p->pending = false;
	p->st.files++;
}

void flight_plan__abandon(struct flight_plan *p)
{
	if (!p->pending)
		return;
	p->pending = false;
	p->st.abandoned++;
}

bool flight_plan__done(const struct flight_plan *p)
{
	return !p->pending && all_taken(p);
}
