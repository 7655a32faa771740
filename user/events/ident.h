/* ident.h - who a stack of an lxtrace trace belongs to, and the syscall it was taken in, read
 * back from the frames the recorder puts on every stack of a thread (docs/format.md §10.1,
 * user/stacks/idents.h): outermost the program frame (file "program"), before it the process
 * frame "COMM (pid PID)" (file "pid PID"), and a "syscall NAME" frame (file "kernel", line the
 * number) where the stack was taken inside a syscall. A stack of no thread (the waker "[irq]",
 * lxtrace's own logs, "[lxtrace repair]") has one frame of file "lxtrace". */
#ifndef LXTRACE_USER_EVENTS_IDENT_H
#define LXTRACE_USER_EVENTS_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/dict.h"

/* Names are cut at this many bytes (a comm is at most 15). */
#define IDENT_NAME_MAX 31

struct ident {
	uint32_t pid;			/* 0: the stack names no process */
	char comm[IDENT_NAME_MAX + 1];	/* the thread's name */
	char prog[IDENT_NAME_MAX + 1];	/* its program's */
};

/* Reads the process and program frames of s into *out: true when s ends in them. */
bool ident__of_stack(const struct gt_stack *s, struct ident *out);

/* The program frame alone (a creation stack): its name into out->prog; true when found. */
bool ident__program(const struct gt_stack *s, struct ident *out);

/* The syscall frame's name (after "syscall "), NULL when the stack was not taken in one. */
const char *ident__syscall(const struct gt_stack *s);

/* The single lxtrace frame of a stack of no thread ("[irq]", "lxtrace", "[lxtrace repair]",
 * "[idle]"), NULL for any other stack. */
const char *ident__special(const struct gt_stack *s);

#endif
