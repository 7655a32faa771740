/* callstacks.h - the kernel and user call stacks of the BPF records, turned into trace stacks.
 *
 * A record's stack (struct lx_stack: raw kernel and user addresses) becomes, leaf first:
 *
 *     kernel frames   "syscall NAME"   user frames (inlined calls expanded)   identity
 *
 * with the thread's identity frames (process, program) always outermost (idents.h),
 * "syscall NAME" only when the thread is in one, and a "[trimmed N frames]" mark before the
 * identity when the stack had to lose its outer frames to fit Go's limits (at most
 * CALLSTACKS_MAX_FRAMES frames, a body of at most 2048 bytes).
 *
 * Each distinct raw stack (identity, syscall, process image, addresses) is symbolized once and
 * remembered with its stack id: a stack seen a million times costs one hash lookup after the
 * first.
 *
 * Process images: user addresses only mean something against the mappings of the image that
 * ran them. A process alive at the start is read from /proc; after that the kernel side reports
 * each mapping of code as it is made (LX_REC_MMAP): its file is opened as soon as the record is
 * read (callstacks__peek), and in time order the mapping joins the process's current image
 * (callstacks__mmap). An exec's first mapping starts a new image, a fork copies the parent's
 * (callstacks__fork), each under its own symbolizer proc (symbolize.h), so stacks resolve
 * against the image that ran them, also after the process exited.
 */
#ifndef LXTRACE_USER_CALLSTACKS_H
#define LXTRACE_USER_CALLSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lxtrace.h"
#include "bpf/python.h"
#include "bpf/unwind.h"
#include "format/tables.h"
#include "user/stacks/idents.h"
#include "user/stacks/late_walk.h"

#define CALLSTACKS_MAX_FRAMES 100
/* The identity of a stack of the idle task. */
#define CALLSTACKS_IDLE UINT32_MAX

struct callstacks;
struct cfi_loader;
struct foreign_log;
struct python;

struct callstacks_stats {
	uint64_t lookups;	/* stacks asked for */
	uint64_t distinct;	/* of which new: symbolized (again when not seen for a
				 * generation of the stacks' memory: CACHE_WORDS in callstacks.c) */
	uint64_t shared;	/* of them, built from the kernel and user frames of a stack of
				 * the same code in another image (another process, or an exec
				 * of the same binaries at other addresses): not symbolized */
	uint64_t cache_clears;	/* generations of that memory dropped */
	uint64_t live_images;	/* process images held now: their processes still run */
	uint64_t trimmed;	/* distinct stacks that lost outer frames */
	uint64_t images;	/* process images noted */
	uint64_t symbolize_ns;	/* time spent symbolizing the distinct stacks */
	uint64_t hits_lost;	/* stacks naming a cached walk whose record was lost */
	uint64_t late_walks;	/* walks BPF stopped for lack of rows, finished here */
	uint64_t late_frames;	/* the frames they gained */
	uint64_t late_ends[LATE_WALK_DEEP + 1];	/* how they ended (enum late_walk_end) */
	uint64_t late_held;	/* records the stream held until their rows were loaded */
	uint64_t shed;		/* stacks not symbolized while shedding (callstacks__shed) */
	uint64_t unwaited;	/* stacks that did not wait for rows or a file, shedding */
	uint64_t copies_refused;	/* stacks BPF walked on by frame pointers where the
					 * ring had no room for their copy (LX_USLOT_NO_ROOM) */
	uint64_t cut;		/* stacks handed out cut short, their user frames ending
				 * "[truncated]" or "[truncated: no room for a copy]", or
				 * their Python frames cut by "[truncated: Python frames]" */
	uint64_t walks;		/* walks of live threads' BPF caches held now */
	uint64_t prepared;	/* binaries read ahead by callstacks__prepare */
	uint64_t prepared_dwarf;	/* of which with their DWARF */
	uint64_t prepared_kernel;	/* 1: kallsyms too */
	uint64_t prepare_ns;	/* time that took */
	uint64_t binaries;	/* binaries opened (symbolizer_stats.modules) */
	uint64_t binaries_closed;	/* their ELFs closed unused or past the budget (of
					 * which binaries_over_budget), and read again */
	uint64_t binaries_over_budget;
	uint64_t binaries_reread;
	uint64_t late_jit_kept;		/* stacks written with JIT frames their perf map did not
					 * name yet, kept to be named at the end */
	uint64_t late_jit_unkept;	/* more of them, past the memory kept for them */
	uint64_t late_jit_dropped;	/* of the kept, dropped: their process exited without a
					 * perf map */
	uint64_t late_jit_named;	/* of the kept, defined again with names at the end */
	uint64_t late_jit_frames;	/* the frames that got their names then */
	int late_jit_err;		/* why a stack was not defined again (-ENOTSUP: go1.23) */
	uint64_t late_jit_ns;		/* the time naming them at the end took */
	uint64_t late_jit_window;	/* of the kept, named in a flight recorder's window, summed
					 * over its windows (callstacks__name_window) */
	uint64_t py_stacks;		/* stacks given Python frames */
	uint64_t py_frames;		/* the Python frames they got */
	uint64_t py_unnamed;		/* stacks whose Python frames could not all be named
					 * (python_stats.bad_codes): native frames */
	uint64_t py_no_eval;		/* stacks with Python frames but no evaluation loop in
					 * their native frames to put them at: native frames */
	uint64_t py_deep;		/* stacks handed out whose outermost Python frames
					 * the walk did not keep (LX_PYSTACK_DEEP): marked where */
};

/* Stacks get their ids from w (which must outlive cs), identity and syscall frames come from
 * ids. proc_root: "/proc" (NULL) unless a test substitutes one; kernel symbols are read from its
 * "kallsyms", so a test's fake /proc can hold a fixture kallsyms. trusted_uid:
 * symbolizer_opts.trusted_uid. NULL with errno set. */
struct callstacks *callstacks__new(const struct gt_tables *w, struct idents *ids,
				   const char *proc_root, uid_t trusted_uid);

/* Before the recording starts: the unwind rows of the binaries of the processes pids are
 * wanted now, ahead of other files (cfi_loader__want_process); callstacks__rows_loaded says
 * when they are. */
void callstacks__want_rows(struct callstacks *cs, const uint32_t *pids, size_t n);

/* Whether no urgent file's rows are queued or being compiled (true without a loader). */
bool callstacks__rows_loaded(struct callstacks *cs);

/* Before the recording starts: reads ahead, for the processes pids, what their first stacks
 * would read (symbolizer__prepare), for at most budget_ns; kallsyms too when kernel. */
void callstacks__prepare(struct callstacks *cs, const uint32_t *pids, size_t n, bool kernel,
			 uint64_t budget_ns);

/* A process alive when the recording starts. */
void callstacks__note(struct callstacks *cs, uint32_t pid);

/* Every record as soon as it is read, in any order: the file of a new mapping is opened now,
 * while the process may still run. */
void callstacks__peek(struct callstacks *cs, const struct lx_rec *r, size_t size);

/* In time order: a mapping of code the process made (the first of an exec's new address space
 * starts a new image of the process). */
void callstacks__mmap(struct callstacks *cs, const struct lx_mmap *r);

/* In time order: child, a new process, starts with parent's image. */
void callstacks__fork(struct callstacks *cs, uint32_t parent, uint32_t child);

/* Every record's stack, in time order, before any callstacks__get: keeps the user frames of a
 * walk the thread's BPF cache stored, which its later records name instead of carrying. */
void callstacks__see(struct callstacks *cs, const struct lx_stack *st);

/* Thread tid exited: its cached walks are gone with it. */
void callstacks__forget_thread(struct callstacks *cs, uint32_t tid);

/* The image the stacks of process pid resolve against now (a proc of user/stacks/symbolize.h). */
uint64_t callstacks__image(const struct callstacks *cs, uint32_t pid);

/* In time order: process pid, whose image was image when its last thread exited, is gone and no
 * stack of it comes any more: the image is forgotten (symbolizer__forget_process) and its perf
 * map closed, and so is pid's current image if it is still that one. */
void callstacks__exit(struct callstacks *cs, uint32_t pid, uint64_t image);

/* Before the recording: what st, a stack of process pid, will need is made ready (its walk
 * finished if it is a late one, its frames named), so that writing it later, while the
 * rings fill, costs lookups. */
void callstacks__warm(struct callstacks *cs, uint32_t pid, const struct lx_stack *st);

/* Python frames are named by py (NULL: none; python.h), which also hears of the processes
 * noted and the mappings peeked at. */
void callstacks__use_python(struct callstacks *cs, struct python *py);

/* The Python frames ps of a sleeping thread of process pid, read with its stack to be written
 * later (at its wakeup): named now, while the process surely runs (python__peek_frames). */
void callstacks__peek_python(struct callstacks *cs, uint32_t pid, const struct lx_pystack *ps);

/* Late walks (late_walk.h) take their rows from cfi (NULL: none loaded; frame pointers). */
void callstacks__use_rows(struct callstacks *cs, struct cfi_loader *cfi);

/* Whether st, a stack of process pid, can be made now: false while a walk BPF stopped for
 * lack of rows (LX_USTACK_COPY) waits for them, for at most a second from the first false;
 * the stream holds its records meanwhile (merge.h). */
bool callstacks__ready(struct callstacks *cs, uint32_t pid, const struct lx_stack *st);
/* The same, waiting at most limit_ns from the first false. */
bool callstacks__ready_within(struct callstacks *cs, uint32_t pid, const struct lx_stack *st,
			      uint64_t limit_ns);

/* From now on no late walk waits for rows (callstacks__ready is true at once): the walks
 * whose rows are not loaded end at that file, marked and counted (late_no_rows), as those
 * that waited too long. For a recording's end, which must not wait on the rows' compiles. */
void callstacks__stop_waiting(struct callstacks *cs);

/* The recorder is behind (user/capture/shed.h). With waits, no stack waits for rows
 * (callstacks__ready is true at once; stats.unwaited counts those that would have), though
 * one still waits for a late binary's file, which names it. With
 * symbols, nothing is symbolized: a stack not met before takes the frames of a stack of the
 * same code in another image if there is one (stats.shared: lookups), else it is made of its
 * identity under one "[not symbolized: the recorder was behind]" frame (stats.shed); stacks
 * met before still get the id they have: a lookup. */
void callstacks__shed(struct callstacks *cs, bool waits, bool symbols);

/* The trace stack of st, taken from a thread of process pid with identity ident (or
 * CALLSTACKS_IDLE) while in syscall nr (-1: none), for an event on P p, with the thread's
 * Python frames ps (NULL: none; their count ps->n checked by the caller) where its native
 * frames show the evaluation loop. 0 with errno set. */
uint64_t callstacks__get(struct callstacks *cs, uint32_t p, uint32_t ident, uint32_t pid, int nr,
			 const struct lx_stack *st, const struct lx_pystack *ps);

void callstacks__stats(const struct callstacks *cs, struct callstacks_stats *out);

/* The files of other users that symbolizing refused (symbolizer__refused). */
const struct foreign_log *callstacks__refused(const struct callstacks *cs);

/* The recording has stopped: the JIT frames their perf map did not name when their stacks
 * were written are looked up in it again, as it stands now (a map written by the exiting
 * process, or on request), and each stack that gained a name is defined again under its id
 * (gt_tables__restack); then symbolizer__finish. */
void callstacks__finish(struct callstacks *cs);

/* The frames a file can hold of a stack where the encoder cannot define a stack again (Go
 * go1.23's parser takes GO123_MAX_FRAMES): a stack written longer is known by its first ones. */
#define CALLSTACKS_WRITTEN_FRAMES 128

/* After callstacks__finish, where the encoder could not define the stacks named then again
 * (late_jit_err -ENOTSUP), or between callstacks__name_window and callstacks__window_done:
 * the frames, named, of the stack that was written with PCs pcs[0, n)
 * (its first n when n is CALLSTACKS_WRITTEN_FRAMES), for a copy of the file that names them
 * (format/go123/restack.h); NULL for any other stack. Valid as long as cs. */
const struct gt_frame *callstacks__late_named(const struct callstacks *cs, const uint64_t *pcs,
					      size_t n);

/* A flight recorder's window is written where the encoder cannot define a stack again (Go
 * go1.23): the kept stacks are named from their perf maps as they stand now, for a copy of the
 * window that names them (callstacks__late_named, until callstacks__window_done); the kept
 * stacks themselves stay as written, for the next window and the end. The stacks named. */
size_t callstacks__name_window(struct callstacks *cs);

/* The window's names are given up: callstacks__late_named names nothing until the end. */
void callstacks__window_done(struct callstacks *cs);

/* The binaries not read in time by the end (symbolizer__unread). */
const struct foreign_log *callstacks__unread(const struct callstacks *cs);

/* Accepts NULL. */
void callstacks__free(struct callstacks *cs);

#endif
