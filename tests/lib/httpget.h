/* httpget.h - the smallest HTTP client the tests need: one GET to a local Go trace viewer,
 * answered and closed by the server (HTTP/1.0). */
#ifndef LXTRACE_TESTS_HTTPGET_H
#define LXTRACE_TESTS_HTTPGET_H

#include <stddef.h>

/* CLOCK_MONOTONIC in milliseconds: the clock of http_get's deadline. */
long http_now_ms(void);

/* GET page from the server at addr ("127.0.0.1:PORT"), giving up at deadline (http_now_ms()).
 * 0 when it answered 200 and closed the connection; *body (if body is not NULL) then receives
 * the whole answer, headers included, malloc'd and NUL-terminated. Else -1 and a one-line
 * reason in why; a page that panics resets the connection. */
int http_get(const char *addr, const char *page, long deadline, char **body, char *why, size_t whylen);

#endif
