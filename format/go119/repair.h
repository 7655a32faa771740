/* repair.h - makes a trace cut short (kill -9, a crash, power loss, a full disk) one that every
 * viewer opens: `lxtrace repair`.
 *
 * The file is read to its first bad byte, or to the first event either Go parser would refuse
 * (the state tracker's problems, format/go119/state.h). Whatever follows the last whole batch
 * before it (a batch cut by power loss, garbage, a batch out of order) is dropped and counted.
 * The state tracker replays what is kept, and what it leaves open is closed at the trace's last
 * time (format/go119/close.h), with a note in the file saying what was done. A file that ends
 * whole, with nothing open, is left as it is: repairing twice changes nothing.
 * docs/format.md §15.
 */
#ifndef LXTRACE_FORMAT_GO119_REPAIR_H
#define LXTRACE_FORMAT_GO119_REPAIR_H

#include <stdbool.h>
#include <stdint.h>

struct gt_repair_report {
	uint64_t size;		/* bytes read */
	uint64_t kept;		/* bytes kept: whole batches up to the first bad byte */
	char why[256];		/* why the rest was dropped (the reader's error or the state's
				 * problem), "" when not */
	uint64_t events;	/* events kept */
	uint64_t goroutines;	/* running goroutines stopped */
	uint64_t procs;		/* Ps stopped */
	uint64_t phases;	/* GC, stop-the-world and sweep phases ended */
	uint64_t appended;	/* bytes appended; 0 when the file was left as it was */
};

/* Repairs the trace read from fd (from its start) into out_fd, or into fd itself when out_fd is
 * -1 (fd then needs write access: the dropped tail is truncated away). out_fd receives the
 * kept bytes, then the closing batches. 0; -ENODATA when no whole trace is left to repair
 * (err says why: a bad header, no Frequency, no event); another negative errno, with err. */
int gt_repair(int fd, int out_fd, struct gt_repair_report *rep, char *err, size_t errlen);

#endif
