/* file_worker.h - opening and reading files whose reads may never end, in a process of their
 * own, waited for a bounded time.
 *
 * A read of a file on FUSE, NFS, CIFS or 9p waits for a server, which may never answer: a
 * FUSE server is any user's program (fusermount3 lets any user mount one). The thread that
 * drains the rings and ends the recording must never make such a read, nor touch a mapping
 * of such a file (a page fault is a read). So a job that opens or copies such a file runs on
 * a thread of the worker, a process forked from lxtrace, and the caller waits for its answer
 * (a descriptor, passed over a socket) at most FILE_WORKER_WAIT_NS.
 *
 * Why a process and not a thread of lxtrace: a thread can be abandoned, but not always killed.
 * A FUSE request the server has taken is waited for to its end even by a thread that got
 * SIGKILL (request_wait_answer: an open, a stat), and so is a page lock that such a read
 * holds; a process with such a thread does not finish exiting, so `lxtrace record` would write
 * its file and then never exit. The worker is another process: lxtrace exits whatever the
 * worker's threads wait for, and the worker follows it (its parent's death kills it) as soon
 * as the kernel lets its threads go. The worker holds no descriptor of lxtrace's but its end of
 * the request socket (not the trace file, its lock, nor the terminal).
 *
 * Why FILE_WORKER_WAIT_NS is 200 ms: the reader is away from the rings for as long as it
 * waits, and a 4 MiB ring holds about 130,000 scheduler records, over a second of the busiest
 * CPU; 200 ms leaves most of it. A file on a server that answers takes far less: a binary
 * another user may change is copied from the page cache (1 GB/s and more; the files a
 * process runs are cached) and a header read across a network takes milliseconds. A job that
 * says what is left cannot stall (file_job__unbounded: a file on a local filesystem) is waited
 * for to its end, as before there was a worker.
 *
 * A job not answered in time is late, not refused: the caller gets -ETIMEDOUT and asks again
 * later, while the job runs on in the worker; its answer, when it comes, is kept for the next
 * job that asks for the same file (FILE_WORKER_KEPT_MAX of them at most), which gets it at once
 * (the file of a process gone since is still read). What tells a stalled filesystem (a FUSE
 * server that stopped answering, an NFS server gone) from a slow one (a local disk under
 * direct-IO reads, a cold page cache, CPUs all busy: a path walk, an exiting process's
 * mappings, or only the wait for a CPU took 250 ms there) is progress: a slow filesystem's late
 * jobs end, a stalled one's never do. So a key (a device: the filesystem of the file) that had
 * a job late is slow from then on: its jobs are waited for FILE_WORKER_SLOW_WAIT_NS, what a
 * file in the page cache takes, and while FILE_WORKER_KEY_LATE_MAX of them are late every other
 * is answered -ETIMEDOUT at once, until one ends. A filesystem that stalls costs the reader
 * FILE_WORKER_WAIT_NS once and FILE_WORKER_SLOW_WAIT_NS a few times; a slow one a short wait
 * per file. Every job is refused at once while FILE_WORKER_STUCK_MAX jobs are late (each holds
 * a thread of the worker). file_worker__stalled tells whether a key has a job late now: at the
 * end of a recording, stalled rather than slow. The worker runs at nice -10: the reader waits
 * for it.
 *
 * Thread-safe: the symbolizer's thread and the unwind tables' loader run jobs side by side.
 */
#ifndef LXTRACE_LIB_FILE_WORKER_H
#define LXTRACE_LIB_FILE_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FILE_WORKER_WAIT_NS (200ull * 1000 * 1000)
/* The wait for a job of a key that had one late before (a slow filesystem): what a file in the
 * page cache takes, and not much more; a job past it is collected later. */
#define FILE_WORKER_SLOW_WAIT_NS (5ull * 1000 * 1000)
#define FILE_WORKER_STUCK_MAX 8
/* Jobs of one key running past their wait at most: a slow disk's files are read side by side,
 * a stalled filesystem holds no more of the worker's threads than that. */
#define FILE_WORKER_KEY_LATE_MAX 4
/* Answers of late jobs kept for a job that asks for the same, at most (each may hold a
 * descriptor): the oldest go first. */
#define FILE_WORKER_KEPT_MAX 64
/* The largest argument a job takes. */
#define FILE_WORKER_ARG_MAX 8192

struct file_job;

/* A job: runs in the worker with its copy of the caller's argument; returns a descriptor (the
 * caller gets its own, the worker's is closed) or a negative errno. */
typedef int (*file_job_fn)(struct file_job *job, const void *arg);

/* Called by a job: what is left of it cannot stall (it reads a file of a local filesystem), so
 * its caller waits for its end without bound. */
void file_job__unbounded(struct file_job *job);

/* Starts the worker now, so that it is forked from a process that has no other thread and
 * holds no descriptor it should not (call it first thing, from the main thread: the worker is
 * killed when the thread that forked it ends); else the first job starts it. 0 or a negative
 * errno. */
int file_worker__start(void);

/* The worker's pid (0: none started, or it failed to start): the tracer's own process, which
 * the recording leaves out as it leaves out the tracer. */
int file_worker__pid(void);

/* Runs fn on a copy of arg (len bytes, at most FILE_WORKER_ARG_MAX) in the worker. key: what a
 * late job holds back (the device of the file), 0 for nothing; what: what the job reads within
 * it (the file's inode): a job of the same key and what as a late one that has ended since gets
 * that job's answer at once, without running. Returns fn's result (its descriptor a descriptor
 * of this process), -ETIMEDOUT when the job did not end in time or a job of its key is still
 * late (above: ask again later), or -ECHILD when there is no worker. *unbounded (if not NULL):
 * whether the job called file_job__unbounded. */
int file_worker__run(file_job_fn fn, const void *arg, size_t len, uint64_t key, uint64_t what,
		     bool *unbounded);

/* Whether a job of key (not 0) is running past its wait now: its filesystem has not answered
 * since. */
bool file_worker__stalled(uint64_t key);

#endif
