/* viewer.h - a Go trace viewer (`go tool trace -http`) of Go 1.19 or 1.23 started on a file, for
 * tests that read its pages as a person would. */
#ifndef LXTRACE_TESTS_VIEWER_H
#define LXTRACE_TESTS_VIEWER_H

#include <stddef.h>

struct viewer;

/* Starts version "1.19" or "1.23" on path at a free local port; its output goes to a temp
 * file (kept with LXTRACE_TEST_KEEP). NULL with a one-line reason in why. */
struct viewer *viewer__start(const char *version, const char *path, char *why, size_t whylen);

/* GETs page (e.g. "/goroutines") once the viewer serves (it parses the whole trace first),
 * waiting until deadline (http_now_ms()). The body, headers included, malloc'd; NULL with a
 * reason in why (the viewer exited, answered an error, reset the connection). */
char *viewer__get(struct viewer *v, const char *page, long deadline, char *why, size_t whylen);

/* The count of goroutine group name on the Goroutines page (body of "/goroutines") of viewer
 * version "1.19" or "1.23"; -1 when the group is not there. */
long viewer__group_count(const char *version, const char *page, const char *name);

/* The viewer's log file. */
const char *viewer__log(const struct viewer *v);

/* Kills the viewer, removes its log unless kept. Accepts NULL. */
void viewer__stop(struct viewer *v);

#endif
