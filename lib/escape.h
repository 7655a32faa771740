/* escape.h - text from other users' processes (thread names, paths, symbols, annotation
 * strings) as lxtrace prints it: anything unprintable escaped as \xNN and the backslash as \\,
 * so that a line stays one line and a name shown on a terminal can send it no escape sequence
 * (a binary named "x\e[2J\nrecords lost: 0" once cleared root's screen and forged a summary
 * line). One rule for every such text, in dump, the summary and the flight recorder's lines. */
#ifndef LXTRACE_LIB_ESCAPE_H
#define LXTRACE_LIB_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* s (len bytes), escaped. */
void escape__print(FILE *f, const char *s, size_t len);

/* s (len bytes) in double quotes, escaped, the quote as \" too. */
void escape__quoted(FILE *f, const char *s, size_t len);

#endif
