/* results.h - what one kernel's run of tests/kernels/scenario.sh left on the host, for the
 * stage's assertions (tests/kernels/kernel_tests.c): each step's status and time, the files
 * it wrote, and the log to print when an assertion fails.
 *
 * The directory is $LXTRACE_KERNEL_RESULTS (tests/kernels/run.sh sets it): DIR/out/ is the
 * scenario's own, DIR/console.log the guest's console (absent for the host's kernel), and
 * $LXTRACE_KERNEL_NAME names the kernel in every message ("bookworm 6.1.0-50-cloud-amd64").
 */
#ifndef LXTRACE_TESTS_KERNELS_RESULTS_H
#define LXTRACE_TESTS_KERNELS_RESULTS_H

#include <stdio.h>

/* kr_step_status() of a step the scenario skipped (this lxtrace lacks its option), and of one
 * it has no line for (it never got there: see the guest's log). */
#define KR_SKIPPED (-1)
#define KR_MISSING (-2)

/* The kernel's name for messages; never NULL. */
const char *kr_name(void);

/* DIR/out/FILE. Static storage, overwritten by the next call. */
const char *kr_path(const char *file);

/* The exit status of step NAME (its line in DIR/out/steps), KR_SKIPPED or KR_MISSING; *secs
 * (may be NULL) gets its time. */
int kr_step_status(const char *step, double *secs);

/* The whole of DIR/out/FILE, NUL-terminated (malloc'd), or NULL when there is none. */
char *kr_read(const char *file);

/* The line the scenario logged for step (its status and first error line), or "". Static
 * storage. */
const char *kr_step_line(const char *step);

/* What a failing assertion shows: the scenario's log (one line per step), the last lines of
 * the step's stderr (and of its verbose rerun, libbpf's log), the console's last lines. */
void kr_print_log(const char *step, FILE *f);

#endif
