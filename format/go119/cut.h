/* cut.h - a window of a trace written as a trace of its own: `lxtrace cut`, and the flight
 * recorder's files.
 *
 * The state at the window's start (a state tracker fed everything before it) becomes an init
 * phase, the way lxtrace's recorder begins a trace: every live goroutine created (waiting ones
 * GoWaiting, those blocked in a syscall GoInSyscall), the open tasks, Gomaxprocs; then, one
 * tick before the window, the started Ps and the goroutines running on them, with their
 * label, their syscall entry, their open regions and GC phases. The window's events follow,
 * re-encoded through a gt_writer (strings and stacks defined where used, start, unblock, exit
 * and GC sequence numbers counted anew), and what is still open at the end is closed
 * (format/go119/close.h). A second state tracker follows the output, so an event the output's state
 * does not allow stops the cut with an error instead of writing a file a parser would refuse.
 *
 * Left out, and counted: regions open in goroutines that are not running at the window's start
 * (a region begins on its goroutine, which cannot run in an init phase without inventing a
 * run); mark assists of such goroutines. Their ends in the window are ends without a start,
 * which both parsers take.
 */
#ifndef LXTRACE_FORMAT_GO119_CUT_H
#define LXTRACE_FORMAT_GO119_CUT_H

#include <stdint.h>

#include "format/go119/dict.h"
#include "format/go119/reader.h"
#include "format/go119/state.h"

struct gt_cut_opts {
	size_t sz;			/* sizeof(struct gt_cut_opts) */
	int fd;				/* output, written from its current offset */
	uint32_t nprocs;		/* the output's P ids: 0 .. nprocs-1 (the source's) */
	uint64_t frequency;		/* the source's */
	uint64_t from;			/* the window's start, in the source's ticks */
	const struct gt_state *start;	/* the state at from; read, never changed */
	const struct gt_dict *dict;	/* the strings and stacks start refers to */
};

struct gt_cut_stats {
	uint64_t goroutines;	/* live at the window's start */
	uint64_t running, waiting, syscall;	/* of which */
	uint64_t tasks, regions;	/* open at the start and written */
	uint64_t left_out;	/* regions and mark assists open at the start, left out */
	uint64_t init_events, window_events, closing_events;
	uint64_t stacks_trimmed;	/* re-encoded stacks that grew past 2048 bytes, trimmed */
	uint64_t bytes;		/* written */
};

struct gt_cut;

/* Writes the header and the init phase. NULL with errno set, and err written: -ERANGE when
 * from leaves no room for the init phase before it, or a P id is out of range. */
struct gt_cut *gt_cut__new(const struct gt_cut_opts *opts, char *err, size_t errlen);

/* One event of the window (from <= e->ts), in the source's order (file order will do);
 * strings and stacks it names are looked up in d. 0; -EPROTO when the output's state does
 * not allow it (gt_cut__error says why, with its source offset); another negative errno. */
int gt_cut__event(struct gt_cut *c, const struct gt_event *e, const struct gt_dict *d);

/* Closes what is open at ts (no earlier than any event given) and flushes. */
int gt_cut__finish(struct gt_cut *c, uint64_t ts);

const char *gt_cut__error(const struct gt_cut *c);
void gt_cut__stats(const struct gt_cut *c, struct gt_cut_stats *out);
/* Accepts NULL. */
void gt_cut__free(struct gt_cut *c);

/* The window a file cut took. */
struct gt_cut_window {
	uint64_t from, to;		/* in the source's ticks: [from, to) */
	uint64_t from_ns, to_ns;	/* since the trace's first event */
};

/* The whole job on files: the window [from_ns, to_ns) of in_fd, times in nanoseconds since
 * the trace's first event (what the viewers show; to_ns UINT64_MAX: to the end), to out_fd.
 * A window that starts inside the trace's own init phase starts at the trace's start. Three
 * streaming passes over in_fd (its span, the state at the start, the window). *st and *win
 * (either may be NULL) get the figures and the window taken. */
int gt_cut__file(int in_fd, int out_fd, uint64_t from_ns, uint64_t to_ns,
		 struct gt_cut_stats *st, struct gt_cut_window *win, char *err, size_t errlen);

#endif
