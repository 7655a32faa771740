/* lxtrace/annotate.h - user annotations for native programs: tasks, regions and logs that
 * `lxtrace record` shows on the program's threads, like Go's runtime/trace annotations.
 *
 * Header-only, C99 or C++; needs <sys/sdt.h> (Debian: systemtap-sdt-dev) at build time and
 * nothing at run time. Each call is a USDT probe (provider "lxtrace"): while no tracer is
 * attached a probe is one nop, and the calls compute nothing (task ids are not even drawn).
 *
 *	#include <lxtrace/annotate.h>
 *
 *	lxtrace_task_t t = lxtrace_task_begin(LXTRACE_BACKGROUND, "request");
 *	struct lxtrace_region r = lxtrace_region_begin(t, "parse");
 *	...
 *	lxtrace_region_end(r);
 *	lxtrace_log(t, "user", "alice");
 *	lxtrace_task_end(t);		// may be called on another thread
 *	lxtrace_trigger("slow request");	// a flight recorder writes what it holds
 *
 * Record it with `lxtrace record --usdt ./prog` (or a target given with -p / -- COMMAND); the
 * trace shows the tasks and regions on `go tool trace`'s user task and region pages.
 *
 * Rules, as in Go: a region starts and ends on the same thread and regions nest per thread
 * (end the innermost first); a task may end on any thread; logs and regions belong to a task
 * or to the background task LXTRACE_BACKGROUND (0). Strings are copied when the probe fires:
 * names and categories up to LXTRACE_NAME_MAX bytes, messages up to LXTRACE_MESSAGE_MAX, longer
 * ones are cut and marked with "…" in the trace.
 *
 * Task ids: one atomic counter per process, `lxtrace_annotate_task_seq`, a weak symbol of
 * default visibility, so every translation unit and every shared library of the process that
 * includes this header shares the executable's (or the first loaded library's) copy. A task id
 * is only unique within its process; lxtrace keys tasks by (process, id) and gives each its own
 * id in the trace file. Ids are drawn only while the task_begin probe is attached (its USDT
 * semaphore is set): a task begun while the program is not traced is the background task, so
 * its end is a no-op and its regions and logs belong to the background task.
 *
 * Semaphores: this header turns on sys/sdt.h's semaphores (_SDT_HAS_SEMAPHORES) when it
 * includes sys/sdt.h first, and defines the semaphores of its own probes (weak, hidden: one per
 * executable or library, as the probe notes expect). Other sdt probes in the same translation
 * unit then need their semaphores defined too (a link error says which). When sys/sdt.h was
 * included before without semaphores, the calls work the same but task ids are always drawn.
 */
#ifndef LXTRACE_ANNOTATE_H
#define LXTRACE_ANNOTATE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#ifndef _SYS_SDT_H
#define _SDT_HAS_SEMAPHORES 1
#endif
#include <sys/sdt.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LXTRACE_BACKGROUND ((lxtrace_task_t)0)
/* Longest name or category, and message, the trace keeps (bytes, without the NUL). */
#define LXTRACE_NAME_MAX 63
#define LXTRACE_MESSAGE_MAX 255

typedef uint64_t lxtrace_task_t;

/* What lxtrace_region_end needs: returned by lxtrace_region_begin. */
struct lxtrace_region {
	lxtrace_task_t task;
	const char *type;
};

/* The process's task id counter (see above). Not to be used directly. */
__attribute__((weak, visibility("default"))) uint64_t lxtrace_annotate_task_seq;

#ifdef _SDT_HAS_SEMAPHORES
/* One per probe, set by the kernel while a tracer is attached to it. */
#define LXTRACE__SEMAPHORE(probe)                                                            \
	__attribute__((weak, visibility("hidden"), section(".probes"))) volatile unsigned short \
		lxtrace_##probe##_semaphore
LXTRACE__SEMAPHORE(task_begin);
LXTRACE__SEMAPHORE(task_end);
LXTRACE__SEMAPHORE(region_begin);
LXTRACE__SEMAPHORE(region_end);
LXTRACE__SEMAPHORE(log);
LXTRACE__SEMAPHORE(trigger);
#undef LXTRACE__SEMAPHORE
#define LXTRACE__ENABLED(probe) __builtin_expect(lxtrace_##probe##_semaphore != 0, 0)
#else
#define LXTRACE__ENABLED(probe) 1
#endif

/* Begins a task of type `type` inside `parent` (LXTRACE_BACKGROUND: none); returns its id. */
static inline lxtrace_task_t lxtrace_task_begin(lxtrace_task_t parent, const char *type)
{
	lxtrace_task_t id;

	if (!LXTRACE__ENABLED(task_begin))
		return LXTRACE_BACKGROUND;
	id = __atomic_add_fetch(&lxtrace_annotate_task_seq, 1, __ATOMIC_RELAXED);
	STAP_PROBE3(lxtrace, task_begin, id, parent, type);
	return id;
}

/* Ends task `task`, on any thread. */
static inline void lxtrace_task_end(lxtrace_task_t task)
{
	if (task != LXTRACE_BACKGROUND)
		STAP_PROBE1(lxtrace, task_end, task);
}

/* Begins a region of type `type` in `task` on the calling thread. */
static inline struct lxtrace_region lxtrace_region_begin(lxtrace_task_t task, const char *type)
{
	struct lxtrace_region r = { task, type };

	STAP_PROBE2(lxtrace, region_begin, task, type);
	return r;
}

/* Ends region r, which must be the calling thread's innermost open region. */
static inline void lxtrace_region_end(struct lxtrace_region r)
{
	STAP_PROBE2(lxtrace, region_end, r.task, r.type);
}

/* Logs `message` under `category` in `task`. */
static inline void lxtrace_log(lxtrace_task_t task, const char *category, const char *message)
{
	STAP_PROBE3(lxtrace, log, task, category, message);
}

/* Whether a log would be recorded now: guards the cost of building a message. */
static inline int lxtrace_log_enabled(void)
{
	return LXTRACE__ENABLED(log);
}

/* lxtrace_log with a printf-style message, formatted only while the probe is attached. */
__attribute__((format(printf, 3, 4)))
static inline void lxtrace_logf(lxtrace_task_t task, const char *category, const char *fmt, ...)
{
	char msg[LXTRACE_MESSAGE_MAX + 2];	/* one byte more than kept, so a cut shows */
	va_list ap;

	if (!lxtrace_log_enabled())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lxtrace_log(task, category, msg);
}

/* Asks a flight recorder (`lxtrace record --flight-recorder`) watching this program to write
 * the seconds it holds to a file now, with `reason` marked in the trace at this moment; it then
 * goes on recording. Under a plain recording the reason is only logged. Costs a nop untraced. */
static inline void lxtrace_trigger(const char *reason)
{
	STAP_PROBE1(lxtrace, trigger, reason);
}

#ifdef __cplusplus
}

namespace lxtrace {
/* A region that ends when it goes out of scope. */
class region {
public:
	region(lxtrace_task_t task, const char *type) : r_(lxtrace_region_begin(task, type)) {}
	~region() { lxtrace_region_end(r_); }
	region(const region &) = delete;
	region &operator=(const region &) = delete;

private:
	struct lxtrace_region r_;
};
} // namespace lxtrace
#endif

#endif
