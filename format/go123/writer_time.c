/* writer_time.c - the times a go1.23 file gets (writer_core.h): Go 1.23 turns ticks into
 * nanoseconds through a float64 and refuses to order two events of one time (docs/format.md
 * §18.4), so the writer chooses an epoch and makes every event's time its own. */
#include "format/go123/writer_core.h"

/* A float64's 53 bits hold CLOCK_MONOTONIC's nanoseconds for only the first 104 days of uptime:
 * past them neighbouring events would share a time, which can make the reader refuse the file.
 * A recording that starts with 52 days or more to go keeps the clock's own times, as the 1.19
 * format does (a reader can set them beside perf's); one started later counts from its first
 * event, exact for 104 days of recording. */
void go123_writer_epoch(struct go123_writer *w, uint64_t ts)
{
	if (!w->last_ts && ts >= 1ull << 52)
		w->epoch = ts - 1;
}

uint64_t go123_writer_ticks(const struct go123_writer *w, uint64_t ts)
{
	return ts > w->epoch ? ts - w->epoch : 1;
}

/* ts, or the first time past the last event's that Go 1.23's float64 tells apart from it
 * (go123_writer_ticks): a recording longer than 104 days keeps its events distinct, a little
 * later than they were. */
static uint64_t distinct(const struct go123_writer *w, uint64_t ts)
{
	uint64_t prev = go123_writer_ticks(w, w->ev_ts), r;

	if (go123_writer_ticks(w, ts) < 1ull << 53 || go123_writer_ticks(w, ts) >= 1ull << 62 ||
	    (double)go123_writer_ticks(w, ts) > (double)prev)
		return ts;
	r = (uint64_t)(double)prev;
	return w->epoch + r + (1ull << (63 - __builtin_clzll(r) - 52));
}

uint64_t go123_writer_event_time(struct go123_writer *w, uint64_t ts)
{
	/* Go 1.23's reader retries a stuck earliest event's rivals but not one tied with it
	 * (docs/format.md §18.4): no two events share a time. */
	if (ts <= w->ev_ts)
		ts = w->ev_ts + 1;
	ts = distinct(w, ts);
	w->ev_ts = ts;
	return ts;
}
