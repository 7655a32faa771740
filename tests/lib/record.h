/* record.h - runs real recordings for the integration tests: `lxtrace record` as a child,
 * the workloads of tests/workloads/, and any command whose output a test checks.
 *
 * Every child is tied to the test process with PR_SET_PDEATHSIG (the recorder gets SIGINT,
 * so even a crashed test makes it detach its BPF programs and exit; workloads get SIGKILL),
 * and every *__free kills and reaps what is still running and removes its temp files.
 * Programs are found next to the test binary: <build>/lxtrace and <build>/tests/workloads/,
 * where <build> is two levels above /proc/self/exe; $LXTRACE and $LXTRACE_WORKLOADS override.
 */
#ifndef LXTRACE_TESTS_RECORD_H
#define LXTRACE_TESTS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct recorder;

/* Starts `lxtrace record -o TMPFILE --ready-fd 3 ARGS...` (args NULL-terminated, may be NULL)
 * with a pipe at fd 3, and waits for its line there: recording has begun. NULL with errno set
 * when it could not start, exited first or never said it was ready; *why (if not NULL, size
 * whylen) then says why, with its stderr. */
struct recorder *recorder__start(const char *const *args, char *why, size_t whylen);

/* Sends sig (SIGINT to stop it the way a user does; 0 to send nothing, e.g. with -d), then
 * waits up to timeout_s for it to exit (SIGKILL after that, which recorder__status reports
 * as 128 + 9). Returns 0, or -errno when it could not be waited for. */
int recorder__stop(struct recorder *r, int sig, int timeout_s);

/* Exit status after stop: the exit code, or 128 + the signal that killed it. */
int recorder__status(const struct recorder *r);
/* Its peak resident memory in KiB, once stopped by recorder__stop. */
long recorder__maxrss_kb(const struct recorder *r);
/* Everything it wrote on stderr (read when stopped), NUL-terminated; never NULL. */
const char *recorder__stderr(const struct recorder *r);
const char *recorder__path(const struct recorder *r);
/* Its pid while it runs, 0 once reaped. */
pid_t recorder__pid(const struct recorder *r);
/* BPF programs the recorder held while recording (from /proc/PID/fdinfo) that still exist
 * after a few seconds' grace for the kernel to free them: after a stop this must be 0. */
size_t recorder__leftover_progs(const struct recorder *r);
size_t recorder__nprogs(const struct recorder *r);

/* Kills (SIGKILL) and reaps it if still running, unlinks the trace file. Accepts NULL. */
void recorder__free(struct recorder *r);

struct workload;

/* Runs workload NAME with args (NULL-terminated, may be NULL) to completion, capturing its
 * stdout (tests/workloads/workload.h's protocol); killed after timeout_s. NULL with errno
 * set when it could not run. */
struct workload *workload__run(const char *name, const char *const *args, int timeout_s);

/* Starts workload NAME (or the program at an absolute path) with args in the background: its
 * stdin is a pipe workload__send writes to, its stdout is kept for workload__finish. NULL with
 * errno set when it could not start. workload__pid is its pid from the start. */
struct workload *workload__start(const char *name, const char *const *args);
/* Writes text to its stdin. Returns 0 or -errno. */
int workload__send(struct workload *w, const char *text);
/* Closes its stdin, waits up to timeout_s for it to exit (SIGKILL after that), then reads
 * what it reported. Returns 0 or -errno. */
int workload__finish(struct workload *w, int timeout_s);

/* The report of a workload that another program ran (lxtrace record -- NAME ...), from its
 * stdout `out` as captured; status is what the runner exited with. NULL with errno set. */
struct workload *workload__from_output(const char *out, int status);

/* Exit status: the exit code, or 128 + the signal that killed it. */
int workload__status(const struct workload *w);
pid_t workload__pid(const struct workload *w);
/* The tid it reported for role, or 0. */
pid_t workload__tid(const struct workload *w, const char *role);
/* The n-th reported thread (role and tid), false past the end. */
bool workload__thread(const struct workload *w, size_t n, const char **role, pid_t *tid);
/* The value it reported for key, or def. */
long long workload__stat(const struct workload *w, const char *key, long long def);
const char *workload__stdout(const struct workload *w);

/* Kills (SIGKILL) and reaps a started workload still running, removes its files. Accepts NULL. */
void workload__free(struct workload *w);

/* Runs argv to completion (killed after timeout_s); *out and *err (malloc'd, NUL-terminated,
 * either may be NULL to discard) receive its output. Returns its exit code, 128 + signal when
 * killed, or a negative errno when it could not run. */
int run_capture(const char *const *argv, int timeout_s, char **out, char **err);

/* <build>/NAME, e.g. "lxtrace" -> ".../build/lxtrace". Static storage, overwritten by the next call. */
const char *record__build_path(const char *name);

/* The workload NAME's program: <build>/tests/workloads/NAME, or under $LXTRACE_WORKLOADS.
 * Static storage, overwritten by the next call. */
const char *record__workload_path(const char *name);

/* Creates an empty temp file "/tmp/lxtrace-test-XXXXXX<suffix>" and writes its name into
 * path (size len). Returns 0 or -errno. */
int record__tmpfile(char *path, size_t len, const char *suffix);

#endif
