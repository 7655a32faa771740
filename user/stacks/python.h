/* python.h - the Python processes being traced, for their stacks' Python frames: which
 * processes run CPython (its _PyRuntime found in their python binary or libpython, its version
 * from Py_Version), their threads' PyThreadState given to the BPF walk (bpf/python.h), and where
 * a thread keeps its own (CPython's pthread key, in glibc's struct pthread) for the threads not
 * read yet, and the code objects the walk reports named from the process's memory: function,
 * file and line.
 * docs/stacks.md, "Python frames".
 *
 * What it reads of a process it reads with process_vm_readv of that very pid, a bounded
 * number of bytes each time, and it believes nothing: a code object whose type is not the
 * process's PyCode_Type, a string that is not a compact one, a table that does not parse, each
 * makes the stack keep its native frames, counted (python_stats.unnamed).
 */
#ifndef LXTRACE_USER_STACKS_PYTHON_H
#define LXTRACE_USER_STACKS_PYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lxtrace.h"
#include "bpf/python.h"

/* The BPF maps it fills: py_threads, py_procs, py_layouts (bpf/python.bpf.h). */
struct python_maps {
	int threads_fd, procs_fd, layouts_fd;
};

struct python_stats {
	uint64_t processes;		/* processes found running a CPython lxtrace knows */
	uint64_t unknown_version;	/* processes running one it does not: native frames */
	uint64_t not_found;		/* processes mapping a python binary whose interpreter
					 * was never found (symbols missing, file unreadable) */
	uint64_t offsets_refused;	/* processes whose own offsets (3.13's _Py_DebugOffsets)
					 * are not lxtrace's table's, or do not read as any */
	uint64_t threads;		/* threads given to the walk */
	uint64_t threads_full;		/* threads the walk's map had no room for */
	uint64_t codes;			/* code objects read */
	uint64_t bad_codes;		/* frames whose code object did not read as one */
	uint64_t cache_clears;		/* the code cache emptied at its bound */
};

/* A Python frame named: strings owned by the python module, valid until the next call. */
struct python_name {
	const char *func;	/* module.qualname */
	const char *file;
	int line;		/* 0: unknown */
};

struct python;

/* proc_root: NULL for "/proc". maps NULL: no walk to feed (frames are still named). NULL with
 * errno set. */
struct python *python__new(const char *proc_root, const struct python_maps *maps);

/* Process pid may run Python: alive at the start or targeted. Looks at its mappings. */
void python__note(struct python *py, pid_t pid);

/* A traced process mapped code (seen as soon as the record is read): a python binary or a
 * libpython makes it a candidate, found once its interpreter is up (python__refresh). */
void python__mapped(struct python *py, const struct lx_mmap *m);

/* Process pid created a thread at ts (the BPF clock, as python__refresh's now_ns), seen as
 * soon as the record is read: its threads are read at every refresh for a while, so that the
 * new one's Python frames are walked from its first stacks, not tens of milliseconds later. */
void python__thread_created(struct python *py, pid_t pid, uint64_t ts);

/* Every poll: candidates looked for again, the threads of Python processes read again (each
 * at most every few tens of milliseconds, at every poll for a while after they created a
 * thread), processes gone forgotten. */
void python__refresh(struct python *py, uint64_t now_ns);

/* A thread's Python frames as soon as the record is read, in any order: its code objects are
 * named now, while the process runs (r->ps.pid, found by the daemon or by BPF), and kept for
 * python__name. */
void python__peek(struct python *py, const struct lx_pyrec *r);

/* Frame f of a stack of process pid, named into *out: read again when the process still runs,
 * else as python__peek read it. False when it cannot be (not a code object, memory
 * unreadable, a process not known to run Python). */
bool python__name(struct python *py, pid_t pid, const struct lx_pyframe *f,
		  struct python_name *out);

/* The line of frame f of process pid as named before (python__peek), not read again; -1 when
 * it was not. For keys: one stack per line, not per instruction. */
int python__line(struct python *py, pid_t pid, const struct lx_pyframe *f);

void python__stats(const struct python *py, struct python_stats *out);

/* Accepts NULL. */
void python__free(struct python *py);

#endif
