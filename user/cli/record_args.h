/* record_args.h - the options of `lxtrace record`, parsed and checked before anything is
 * loaded. */
#ifndef LXTRACE_USER_RECORD_ARGS_H
#define LXTRACE_USER_RECORD_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "user/flight/trigger.h"
#include "user/model/model.h"

#define MAX_USDT_PATHS 64	/* --usdt paths on one command line */
#define MAX_TRIGGERS 32		/* --trigger expressions on one command line */

enum stacks_mode { STACKS_NONE, STACKS_USER, STACKS_KERNEL, STACKS_BOTH };

/* The file's format: Go 1.19's (format/go119/writer.h) or go1.23's (format/go123/writer.h). */
enum record_format { FORMAT_GO119, FORMAT_GO123 };

struct record_args {
	const char *output;
	enum record_format format;
	double duration;	/* seconds; 0 = until a signal */
	double buffer_mib;	/* per CPU */
	enum model_syscalls syscalls;
	const char *usdt[MAX_USDT_PATHS];	/* binaries, libraries whose annotations to trace */
	size_t n_usdt;
	unsigned sample_hz;	/* 0: no sampling */
	bool sample_idle;
	enum stacks_mode stacks;	/* on switch, wakeup and fork records */
	bool verbose;
	bool check;		/* --check: print what this kernel gives, record nothing */
	int ready_fd;		/* --ready-fd: told once recording has begun; -1: none */
	const char **pid_lists;	/* each -p argument; npid_lists of them */
	int npid_lists;
	const char *cgroup;	/* --cgroup PATH */
	char **command;		/* COMMAND [ARGS...], NULL-terminated; NULL without one */
	bool as_root;
	/* --flight-recorder (0: a plain recording to output), and its files (user/flight/). */
	double flight;		/* seconds kept in memory */
	double flight_mib;	/* memory for them */
	struct trigger triggers[MAX_TRIGGERS];
	size_t ntriggers;
	double after;		/* seconds recorded past a trigger before its file */
	double min_gap;		/* seconds after a trigger that got a file when others get none */
	unsigned max_files;
};

/* Fills a from argv (argv[0] is "record"). Returns 0 to record, 1 when --help was shown
 * (exit 0), 2 after a one-line usage error on stderr (exit 2). Free with record_args__free
 * whatever it returns. */
int record_args__parse(int argc, char **argv, struct record_args *a);

void record_args__free(struct record_args *a);

#endif
