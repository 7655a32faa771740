/* close.h - ends what a trace cut short leaves open, so that every viewer shows it.
 *
 * Both Go parsers accept a trace cut at a batch boundary, but Go 1.19's viewer builds a slice
 * for every goroutine run, GC, stop-the-world and sweep from its start to its end event, and
 * crashes (a nil end) on one that never ends (docs/format.md §10.5). Closing writes those ends
 * at the trace's last time, P by P: the stop-the-world and the sweep of the P, the running
 * goroutine preempted, the P stopped; then the GC. Optionally a note goroutine runs for no
 * time on one P and logs (UserLog) what happened to the file, so that the repair is seen in
 * the trace itself (docs/format.md §15).
 *
 * What is open comes from the state tracker (gt_close__plan: `lxtrace repair`, `lxtrace cut`)
 * or from a writer that failed (gt_close__seal: `lxtrace record` on a full disk).
 */
#ifndef LXTRACE_FORMAT_GO119_CLOSE_H
#define LXTRACE_FORMAT_GO119_CLOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/state.h"
#include "format/go119/writer.h"

struct gt_open_proc {
	uint32_t p;
	bool started;
	bool sweep;
	uint64_t g;		/* running goroutine, 0 for none */
};

struct gt_open {
	uint64_t ts;		/* when to close: no earlier than any event of the trace */
	struct gt_open_proc *procs;
	size_t nprocs;
	bool gc;		/* a GC to end */
	bool stw;		/* a stop-the-world to end, begun on P stw_p */
	uint32_t stw_p;
};

struct gt_close_note {
	uint64_t goid;		/* a goroutine id the trace never used */
	uint32_t p;		/* where it runs */
	const char *name;	/* its name (identity frame) */
	const char *key;	/* the UserLog key */
	const char *msg;	/* the message */
};

/* What s leaves open, to be closed at ts. P ids must fit 0 .. UINT32_MAX - 1. o->procs is
 * malloc'd (gt_close__release). 0, -ENOMEM, or -ERANGE for a P id the writer cannot take. */
int gt_close__plan(const struct gt_state *s, uint64_t ts, struct gt_open *o);
/* Accepts a zeroed or released plan. */
void gt_close__release(struct gt_open *o);

/* Whether o closes anything. */
bool gt_close__needed(const struct gt_open *o);

/* Writes the events that end everything o holds open through w, then the note (when not
 * NULL), then flushes w. Every P of o and the note's P must be below w's nprocs. */
int gt_close__write(struct gt_writer *w, const struct gt_open *o, const struct gt_close_note *note);

/* Bytes the closing of a trace of nprocs Ps may take, a note with a message of up to 512
 * bytes included: the disk reserve a writer should keep (gt_writer_opts.reserve). */
size_t gt_close__reserve(uint32_t nprocs);

/* After w (of nprocs Ps) failed writing to fd (a full disk): appends to fd, through a writer
 * of its own, what closes the file w leaves, and the note (gt_writer__file_state counts the
 * events that never reached the file, for its message). 0; -ENODATA when the file holds no
 * batch (nothing to close, and no time to close it at); a negative errno. */
int gt_close__seal(const struct gt_writer *w, int fd, uint32_t nprocs,
		   const struct gt_close_note *note);

#endif
