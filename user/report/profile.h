/* profile.h - `lxtrace pprof`: a trace's CPU samples, time off the CPU, waits for a CPU or
 * blocking syscalls as a profile by call stack, for the tools people already use: pprof's
 * format (gzip'd profile.proto: `go tool pprof -top`, `-http` flame graphs, `-diff_base`) or
 * Brendan Gregg's folded stacks (flamegraph.pl, speedscope). docs/report.md, "Profiles".
 *
 * Each stack is the thread's own, leaf first, ending in its process frame "COMM (pid PID)" and
 * its program frame (docs/format.md §10.1), so a flame graph's roots are programs, then
 * processes. Values: CPU samples count (the sampling period is the recorder's -F, which the
 * trace does not hold); the others count and nanoseconds, labelled with the reason, the kind
 * of wait or the syscall. */
#ifndef LXTRACE_USER_REPORT_PROFILE_H
#define LXTRACE_USER_REPORT_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/walk.h"

enum profile_kind {
	PROFILE_CPU,		/* CPU samples by the stack sampled */
	PROFILE_OFFCPU,		/* time off the CPU by the stack it left with, label "reason" */
	PROFILE_SCHED,		/* waits for a CPU by the stack the thread stopped at, label "after" */
	/* syscalls by the stack they were entered with, label "syscall": each call's count
	 * and whole length (recorded with --syscalls=all), apart the times they blocked and
	 * their time off the CPU; a file without entries has the blocks alone */
	PROFILE_SYSCALL,
};

struct profile;

/* Flags of profile__read. */
enum {
	/* Stacks without their process frame "COMM (pid PID)": the processes of one program
	 * (a build's compilers, a server's workers) add up on one stack each, under the
	 * program frame. */
	PROFILE_MERGE_PIDS = 1,
};

/* Reads the trace open on fd into a profile of `kind` of the threads and window f keeps. 0,
 * or a negative errno with a one-line message in err. */
int profile__read(int fd, enum profile_kind kind, const struct walk_filter *f, unsigned flags,
		  struct profile **out, char *err, size_t errlen);

/* pprof's format, gzip'd, written to fd. 0, or a negative errno with a message in err. */
int profile__write_pprof(const struct profile *p, int fd, char *err, size_t errlen);

/* One line per stack, root first: "PROGRAM;COMM (pid PID);...;LEAF VALUE" (VALUE: samples, or
 * ns: a syscall profile's calls' lengths, or their blocks' when the file has no returns), names escaped (lib/escape.h) and a ';' in a name written ':'. 0 or -EIO. */
int profile__write_folded(const struct profile *p, FILE *out);

/* Accepts NULL. */
void profile__free(struct profile *p);

#endif
