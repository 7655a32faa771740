/* tally.c - the triggers without a file, grouped by trigger and thread (tally.h). */
#include "user/flight/tally.h"

void tally__add(struct tally *t, const struct trigger_fired *f)
{
	struct tally_group *g = NULL;

	for (size_t i = 0; i < t->ngroups && !g; i++)
		if (t->g[i].longest.trigger == f->trigger && t->g[i].longest.tid == f->tid)
			g = &t->g[i];
	if (!g) {
		if (t->ngroups == TALLY_GROUPS) {
			t->others++;
			return;
		}
		g = &t->g[t->ngroups++];
		*g = (struct tally_group){ .longest = *f, .first_ts = f->ts, .last_ts = f->ts };
	}
	g->n++;
	/* Records may come a little out of time order (docs/record.md, Ordering). */
	if (f->ts < g->first_ts)
		g->first_ts = f->ts;
	if (f->ts > g->last_ts)
		g->last_ts = f->ts;
	if (f->ns > g->longest.ns)
		g->longest = *f;
}
