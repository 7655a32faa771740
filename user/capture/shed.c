/* shed.c - shedding while behind, each step with hysteresis (shed.h): on past its mark, off
 * below a lower one, so that a recorder near a mark does not turn it on and off record by
 * record.
 */
#include "user/capture/shed.h"

static void step(struct shed_step *st, uint64_t behind, uint64_t after, uint64_t until,
		 uint64_t now)
{
	if (!st->on && behind >= after) {
		st->on = true;
		st->since = now;
		st->spells++;
	} else if (st->on && behind <= until) {
		st->on = false;
		st->ns += now - st->since;
	}
}

void shed__update(struct shed *s, uint64_t ts, uint64_t now)
{
	uint64_t behind;

	if (ts < s->from)
		ts = s->from;
	behind = now > ts ? now - ts : 0;
	if (behind > s->worst)
		s->worst = behind;
	step(&s->waits, behind, SHED_WAITS_AFTER_NS, SHED_WAITS_UNTIL_NS, now);
	step(&s->symbols, behind, SHED_SYMBOLS_AFTER_NS, SHED_SYMBOLS_UNTIL_NS, now);
}

uint64_t shed__ns(const struct shed_step *st, uint64_t now)
{
	return st->ns + (st->on && now > st->since ? now - st->since : 0);
}
