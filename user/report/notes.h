/* notes.h - the report's account of the recording itself: records lost (lxtrace's
 * "lxtrace.lost" logs), events lxtrace invented to keep the trace valid (stack "[lxtrace
 * repair]", docs/model.md "Repairs"), and the triggers that fired ("lxtrace.trigger" logs,
 * docs/flight.md), each with when and why. */
#ifndef LXTRACE_USER_REPORT_NOTES_H
#define LXTRACE_USER_REPORT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/walk.h"

struct notes;

/* top: the loss reports and triggers listed one by one (all are counted). NULL with errno. */
struct notes *notes__new(size_t top);

/* A walk_sink's log and repair. */
void notes__log(struct notes *n, const struct walk_thread *t, const char *key, const char *msg,
		size_t len, uint64_t at);
void notes__repair(struct notes *n, const struct walk_thread *t, const char *event, uint64_t at);

bool notes__ok(const struct notes *n);

/* Records lost in all, triggers fired, repaired events. For the tests. */
void notes__counts(const struct notes *n, uint64_t *lost, uint64_t *triggers, uint64_t *repairs);

void notes__print(const struct notes *n, FILE *out);

/* The same figures as JSON, the key "recording" (docs/report.md, "JSON"). */
struct json;
void notes__json(const struct notes *n, struct json *j);

/* Accepts NULL. */
void notes__free(struct notes *n);

#endif
