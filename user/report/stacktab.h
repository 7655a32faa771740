/* stacktab.h - call stacks by content, each with a count and a value (samples and their
 * weight, waits and their time), for the report's tables by stack and for the profiles.
 *
 * A trace may define one stack under several ids (its writer forgets and defines again,
 * docs/format.md §4), so a stack is keyed by its frames' contents (function, file, line) and a
 * label (the caller's: a reason, a kind), never by its id. The frames' strings are interned:
 * memory follows the distinct stacks and names, not the events. */
#ifndef LXTRACE_USER_REPORT_STACKTAB_H
#define LXTRACE_USER_REPORT_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/dict.h"

struct st_frame {
	const char *func, *file;	/* interned: equal names, equal pointers */
	uint64_t line, pc;
};

struct st_entry {
	uint32_t label;
	size_t n;
	struct st_frame *frames;	/* leaf first */
	uint64_t count, value;
};

struct stacktab;

/* lines: frames differ by line too (a profile's locations); else by function and file (a
 * table of stacks a person reads by function), the first line added kept. NULL with errno. */
struct stacktab *stacktab__new(bool lines);

/* Adds count and value to the entry of (label, the first n frames of s, leaf first; all when
 * n exceeds them). A NULL stack is the stack of no frames. A stack with an id is told from
 * others by its address, so it must be one no other stack takes while the table lives (a
 * reader's dictionary keeps every definition, format/go119/dict.h); one with id 0 is read
 * whole each time. 0 or -ENOMEM. */
int stacktab__add(struct stacktab *t, uint32_t label, const struct gt_stack *s, size_t n,
		  uint64_t count, uint64_t value);

/* The name, interned: a pointer equal for equal names, valid as long as the table. NULL on
 * failure. */
const char *stacktab__intern(struct stacktab *t, const char *s);

/* The entries in the order they were first added; valid until the next add. */
size_t stacktab__count(const struct stacktab *t);
const struct st_entry *stacktab__entries(const struct stacktab *t);

/* Accepts NULL. */
void stacktab__free(struct stacktab *t);

#endif
