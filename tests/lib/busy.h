/* busy.h - a busy machine for a test, made of scripts/load.sh's parts that need no disk: CPU
 * hogs beyond the cores (every CPU has a queue) and an exec churn of the machine's coreutils
 * programs (new processes mapping their libraries). Everything it starts dies with the test
 * (PR_SET_DEATHSIG), and busy__stop ends it all. */
#ifndef LXTRACE_TESTS_BUSY_H
#define LXTRACE_TESTS_BUSY_H

#include <stdbool.h>
#include <stddef.h>

/* nhogs spinning processes, and the exec churn with churn. 0, or -errno (what was started
 * is stopped). */
int busy__start(size_t nhogs, bool churn);

/* Ends what busy__start started and reaps it; nothing when nothing runs. */
void busy__stop(void);

#endif
