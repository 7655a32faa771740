/* idents.h - the synthetic frames and stacks that name threads and syscalls in the trace.
 *
 * An identity is one (pid, comm, program). Two frames name it, outermost last:
 *   "COMM (pid PID)", file "pid PID"   the process (comm is the thread's name)
 *   "PROGRAM", file "program"           the program, one PC per program name
 * A goroutine's creation stack is the program frame alone: Go 1.19 groups goroutines by the PC
 * of its leaf frame and Go 1.23 by the func of its root frame, so both group every thread of a
 * program (all 400 perf workers, the 50 threads of a process) in one row. Every other stack of
 * a thread ends in both frames, so the pid is on each stack a person selects, and 1.23 names a
 * thread that existed before the trace (its creation is not shown) by its program too.
 * Each distinct func string gets its own PC and keeps it for the whole file, so one PC always
 * shows one frame. Stack ids are cached per (identity, syscall), so the hot path costs a map
 * lookup or two and no string work; the cache keeps two generations of them (lib/u64cache.h),
 * as identities come and go with processes: a stack forgotten is built again from the same
 * frames, and the ids handed out stay valid.
 */
#ifndef LXTRACE_USER_STACKS_IDENTS_H
#define LXTRACE_USER_STACKS_IDENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/pcs.h"
#include "format/tables.h"

/* Stacks of one frame that belong to no thread. */
enum ident_special {
	IDENT_SPECIAL_IRQ,	/* "[irq]": a wakeup from a CPU running no thread, or raised by an
				 * interrupt */
	IDENT_SPECIAL_LXTRACE,	/* "lxtrace": lxtrace's own goroutine, which writes its logs */
	IDENT_SPECIAL_REPAIR,	/* "[lxtrace repair]": events invented to keep the trace valid */
	IDENT_SPECIAL_IDLE,	/* "[idle]": the identity of CPU samples of the idle task */
	IDENT_SPECIAL_TRUNCATED, /* "[truncated]": where a user stack walk stopped at a frame that
				  * cannot be code (docs/stacks.md) */
	IDENT_SPECIAL_NO_ROOM,	/* "[truncated: no room for a copy]": the same, in a walk that
				 * went on by frame pointers where the ring had no room for
				 * the copy of the stack it wanted */
	IDENT_SPECIAL_SHED,	/* "[not symbolized: the recorder was behind]": a stack shed
				 * (user/capture/shed.h), its frames not looked at */
	IDENT_SPECIAL_PY_DEEP,	/* "[truncated: Python frames]": where a Python stack deeper
				 * than the walk keeps (LX_PY_FRAMES_MAX) lost its outermost
				 * frames */
	IDENT_SPECIAL_COUNT,
};

/* Every PC of a synthetic frame (identities, syscalls, specials, trim marks) has this bit
 * (format/pcs.h): its 40-bit hashes alone could equal a real address of a non-PIE
 * executable. */
#define IDENT_PC_SYNTHETIC GT_PC_IDENT
/* And a PC moved off one another func string holds or may have held (pcclaims.h). */
#define IDENT_PC_REMAPPED GT_PC_IDENT_REMAPPED

struct idents;

/* Stacks get their ids from w (format/tables.h), which must outlive s: with the go1.19 writer's
 * tables, new stacks and their strings go into the batch of the P passed to each call, which
 * must be the P of the event about to use them. NULL with errno set. */
struct idents *idents__new(const struct gt_tables *w);

/* Frames naming an identity at most (idents__frames). */
#define IDENT_FRAMES 2

/* The identity of (pid, comm, program), added when new; pid 0 stands for an unknown thread.
 * The program is the process's name: its comm at exec, /proc/PID/comm, a parent's program for
 * a fork; NULL or "" stands for comm. comm and prog need not be NUL-terminated within
 * LX_COMM_LEN bytes. Returns 0 or -errno.
 *
 * Identities live while held: each thread that names one holds it (idents__hold, and
 * idents__drop when it names another or leaves). One that nothing holds goes at the next
 * idents__collect (after each record), so an identity met only for a moment still serves the
 * record that asked for it. Ids (> 0) are never given twice: a key made of an id that went
 * never names a newer identity. */
int idents__get(struct idents *s, uint32_t pid, const char *comm, const char *prog, uint32_t *out);
void idents__hold(struct idents *s, uint32_t ident);
void idents__drop(struct idents *s, uint32_t ident);
void idents__collect(struct idents *s);
/* Identities live now. */
size_t idents__count(const struct idents *s);

/* The identity's program name, NUL-terminated. */
const char *idents__prog(const struct idents *s, uint32_t ident);

/* The identity's name as its frame shows it, e.g. "bash (pid 1234)". */
const char *idents__name(const struct idents *s, uint32_t ident);

uint32_t idents__pid(const struct idents *s, uint32_t ident);

/* The identity's comm, NUL-terminated ("" for an unknown thread). */
const char *idents__comm(const struct idents *s, uint32_t ident);

/* The stack "syscall NAME" <- identity frames, or the identity frames alone when nr < 0. 0 with
 * errno set on failure. */
uint64_t idents__stack(struct idents *s, uint32_t p, uint32_t ident, int nr);

/* The creation stack of the identity's goroutines: its program frame alone. 0 with errno set. */
uint64_t idents__create_stack(struct idents *s, uint32_t p, uint32_t ident);

uint64_t idents__special(struct idents *s, uint32_t p, enum ident_special k);

/* The 1.23 viewer hides goroutines whose name starts with "runtime.": a comm or program name
 * that would, after any '_'s, is written with one '_' more ("runtime.x" as "_runtime.x",
 * "_runtime.x" as "__runtime.x"), which idents__unguard takes off again. Here, not in
 * idents.c, so that the offline tools, which read names back, link nothing of the stack
 * makers. */
static inline bool idents__hidden(const char *name)
{
	return !strncmp(name + strspn(name, "_"), "runtime.", 8);
}

static inline const char *idents__guard(const char *name)
{
	return idents__hidden(name) ? "_" : "";
}

static inline const char *idents__unguard(const char *name)
{
	return name[0] == '_' && idents__hidden(name) ? name + 1 : name;
}

/* Frames for stacks built elsewhere (callstacks.c); strings live as long as s, but for the
 * syscall and trim frames, whose func is written into the caller's buffer. The int ones
 * return 0 or -errno. */
/* The identity's frames, process then program (only the program for an unknown thread): f has
 * room for IDENT_FRAMES; returns how many. */
size_t idents__frames(const struct idents *s, uint32_t ident, struct gt_frame f[IDENT_FRAMES]);
int idents__special_frame(struct idents *s, enum ident_special k, struct gt_frame *f);
int idents__syscall_frame(struct idents *s, int nr, char *func, size_t len,
				struct gt_frame *f);
/* "[trimmed N frames]": marks where a deep stack lost its outer frames. */
void idents__trim_frame(uint64_t n, char *func, size_t len, struct gt_frame *f);

/* Accepts NULL. */
void idents__free(struct idents *s);

#endif
