/* dict.h - the string and stack definitions a trace has made so far, as a reader resolves them.
 *
 * A trace defines each string once (id -> bytes) and each stack by id (a later definition of a
 * stack id wins for the events after it; the earlier one stays for those before). The dictionary
 * keeps what has been defined so far, and no more than a byte budget: a file cannot make its
 * reader hold more than the budget, whatever it claims. A dictionary may sit on a parent whose
 * definitions it sees but never changes (a reader of batches kept in memory on top of the
 * dictionary of batches already read).
 */
#ifndef LXTRACE_FORMAT_GO119_DICT_H
#define LXTRACE_FORMAT_GO119_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_rframe {
	uint64_t pc;
	const char *func;	/* "" when undefined */
	const char *file;
	uint64_t line;
	uint64_t func_id, file_id;	/* as the trace names them */
};

struct gt_stack {
	uint64_t id;
	size_t n;
	const struct gt_rframe *frames;	/* leaf first */
};

struct gt_dict;

/* Default byte budget: far above what lxtrace writes (a few MiB for a busy hour). */
#define GT_DICT_DEFAULT_BUDGET (1024ull << 20)

/* budget 0 takes the default; parent may be NULL and must outlive the dictionary. NULL with
 * errno set on failure. */
struct gt_dict *gt_dict__new(const struct gt_dict *parent, uint64_t budget);

/* Defines string id (> 0) as len (>= 1) bytes. -EEXIST when id is defined already (here or in
 * the parent), -E2BIG over the budget, -ENOMEM. */
int gt_dict__add_string(struct gt_dict *d, uint64_t id, const void *bytes, size_t len);

/* Defines stack id (> 0) as n (>= 1) frames given as {pc, func id, file id, line} each,
 * replacing an earlier definition. Frames name the strings defined at this point. -E2BIG over
 * the budget, -ENOMEM. */
int gt_dict__add_stack(struct gt_dict *d, uint64_t id, const uint64_t *vals, size_t n);

/* NUL-terminated, NULL when undefined. Valid as long as the dictionary. */
const char *gt_dict__string(const struct gt_dict *d, uint64_t id);
/* The id's latest definition, NULL when undefined. Valid as long as the dictionary (until the id
 * is forgotten): a definition the id is given again keeps the earlier one, so a stack an
 * event resolved stays the one it was written under, and equal addresses are one definition. */
const struct gt_stack *gt_dict__stack(const struct gt_dict *d, uint64_t id);

/* Drop a definition made here (not in the parent), the earlier ones of a stack id with it:
 * false when it has none. The caller sees
 * to it that nothing refers to the id any more; a string must be named by no stack left. */
bool gt_dict__forget_string(struct gt_dict *d, uint64_t id);
bool gt_dict__forget_stack(struct gt_dict *d, uint64_t id);

/* The stacks defined here (not in the parent), i < gt_dict__nstacks(); valid until the next
 * change. */
size_t gt_dict__nstacks(const struct gt_dict *d);
const struct gt_stack *gt_dict__stack_at(const struct gt_dict *d, size_t i);

/* Names the strings of every stack again, for files that define strings after the stacks
 * that use them (the Go runtime writes its stacks at the end). */
void gt_dict__resolve(struct gt_dict *d);

/* For a file read a second time into d (before its first stack): each stack definition that
 * `whole`, a dictionary of the same file read to its end, saw refined by later ones (each
 * only naming frames the one before left "[unknown]" or undefined: the recorder's JIT frames
 * named at the stop) is taken with the frames of its last refinement, so every event shows
 * what Go's parsers show, which keep a stack id's last definition. Other redefinitions keep
 * each event's stack as written. whole must outlive d. 0 or -ENOMEM. */
int gt_dict__refine_from(struct gt_dict *d, const struct gt_dict *whole);

/* The largest string and stack ids defined, here or in the parent: ids above them are free. */
uint64_t gt_dict__max_string_id(const struct gt_dict *d);
uint64_t gt_dict__max_stack_id(const struct gt_dict *d);
/* Bytes held (the budget's measure), parent not included. */
uint64_t gt_dict__bytes(const struct gt_dict *d);

/* Accepts NULL. */
void gt_dict__free(struct gt_dict *d);

#endif
