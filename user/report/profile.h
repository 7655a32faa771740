/* profile.h - `lxtrace pprof`: a trace's CPU samples, time off the CPU, waits for a CPU or
 * syscalls as a profile by call stack, read in one pass, for the tools people already use;
 * written by pprof.h (gzip'd profile.proto: `go tool pprof -top`, `-http` flame graphs,
 * `-diff_base`) or folded.h (Brendan Gregg's folded stacks: flamegraph.pl, speedscope).
 * docs/report.md, "Profiles".
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

#include "user/report/walk.h"

enum profile_kind {
	PROFILE_CPU,		/* CPU samples by the stack sampled */
	PROFILE_OFFCPU,		/* time off the CPU by the stack it left with, label "reason" */
	PROFILE_SCHED,		/* waits for a CPU by the stack stopped at, label "after" */
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

/* What the writers read. */
struct stacktab;
enum profile_kind profile__kind(const struct profile *p);
uint64_t profile__span_ns(const struct profile *p);
/* The stacks with a count and a value each, labelled (profile__label); for a syscall profile
 * of a file with calls, the calls' count and length, and apart in *blocks (else NULL) the
 * times they blocked. A file without entries has the blocks alone, as the main table. */
const struct stacktab *profile__samples(const struct profile *p, const struct stacktab **blocks);
/* The table folded stacks show: a syscall profile's calls when the file has their lengths,
 * else their blocks; every other kind's one. */
const struct stacktab *profile__folded(const struct profile *p);
/* An entry's label's value ("futex", "lock", "wakeup"). */
const char *profile__label(const struct profile *p, uint32_t label);

/* Accepts NULL. */
void profile__free(struct profile *p);

#endif
