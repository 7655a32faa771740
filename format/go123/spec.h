/* spec.h - what each timed event of the go1.23 format carries: its name, its arguments after
 * the time delta, and which of them are string or stack ids of the generation's tables
 * (docs/format.md §18.6). The reader and the state tracker decode by it, the dump prints by it. */
#ifndef LXTRACE_FORMAT_GO123_SPEC_H
#define LXTRACE_FORMAT_GO123_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define GO123_MAX_ARGS 4

/* A batch of an experiment's data (a byte naming the experiment after the type): Go 1.23 keeps
 * it aside, off the events. */
#define GO123_EV_EXPERIMENTAL_BATCH 49

struct go123_spec {
	const char *name;	/* NULL: not a timed event Go 1.23 reads in an event batch */
	uint8_t nargs;		/* after the time delta */
	const char *args[GO123_MAX_ARGS];
	uint8_t strings;	/* bit i: argument i is a string id */
	uint8_t stacks;		/* bit i: argument i is a stack id */
};

/* The spec of type t, or NULL when Go 1.23 refuses it in an event batch. */
const struct go123_spec *go123_spec(uint8_t t);

/* Decodes the timed event at p (< end): its time delta and arguments (room for GO123_MAX_ARGS)
 * by its spec; its length, 0 when its type is not a timed event or it is cut short. */
size_t go123_spec__decode(const uint8_t *p, const uint8_t *end, uint64_t *dt, uint64_t *args);

#endif
