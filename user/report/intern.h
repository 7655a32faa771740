/* intern.h - the offline tools' one interning table: keys of bytes (a name, a label, a tuple
 * of handles and numbers) to handles numbered from 0 in the order first met, each key kept
 * once at an address valid as long as the table. The report's stacks, names and rows and the
 * profile's strings, functions and locations are all numbered through it, so memory follows
 * the distinct keys, lookups are hashed (a crafted file may name any number of them, none is
 * searched in order), and a handle is stable for a file's whole reading. */
#ifndef LXTRACE_USER_REPORT_INTERN_H
#define LXTRACE_USER_REPORT_INTERN_H

#include <stdbool.h>
#include <stddef.h>

struct intern;

/* NULL with errno. */
struct intern *intern__new(void);

/* key's handle (len bytes), added when new (then *added): 0 or more, or -ENOMEM. */
long intern__put(struct intern *t, const void *key, size_t len, bool *added);

/* key's handle, -1 when the table does not hold it. */
long intern__get(const struct intern *t, const void *key, size_t len);

/* The key of handle h (< intern__count), a NUL byte after its len bytes. */
const void *intern__key(const struct intern *t, size_t h);
size_t intern__count(const struct intern *t);

/* A C string kept once: equal strings, equal pointers. NULL when out of memory. */
const char *intern__str(struct intern *t, const char *s);

/* Accepts NULL. */
void intern__free(struct intern *t);

#endif
