/* record_summary.c - what `lxtrace record` prints after a recording (docs/record.md, "The
 * summary"): what was recorded and lost, what the kernel made it do without, the files refused,
 * how to open the trace, and with -v the internals. */
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/foreign_file.h"
#include "user/capture/features.h"
#include "user/cli/record_summary.h"

#define PREFIX "lxtrace record: "

/* The CPU lxtrace's own process used (reading, modelling, symbolizing, loading unwind rows,
 * writing), in seconds. */
static double self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* How the user stacks were taken: walks, proofs from the cache, what stopped walks early; and
 * what the daemon's CPU came to per distinct stack (the rest of its work is per record and
 * small, see docs/record.md). */
static void print_unwind_summary(const struct capture *cap, struct cfi_loader *cfi,
				 struct disk_cache *cache, uint64_t distinct)
{
	struct disk_cache_stats cs;

	uint64_t u[LX_UNWIND_NSTATS];
	struct cfi_loader_stats ls;
	double cpu = self_cpu_s();

	if (!cfi || capture__unwind_stats(cap, u))
		return;
	cfi_loader__stats(cfi, &ls);
	fprintf(stderr, "  user stacks:   %llu walked, %llu unchanged (cached), %llu truncated, "
		"%llu with frame-pointer steps, %llu frames without rows yet; process tables: %llu "
		"built whole, %llu updated by range (%llu busy)\n",
		(unsigned long long)u[LX_UNWIND_WALKS], (unsigned long long)u[LX_UNWIND_HITS],
		(unsigned long long)u[LX_UNWIND_TRUNCATED], (unsigned long long)u[LX_UNWIND_FP],
		(unsigned long long)u[LX_UNWIND_NO_TABLE], (unsigned long long)u[LX_UNWIND_WHOLE],
		(unsigned long long)u[LX_UNWIND_UPDATES], (unsigned long long)u[LX_UNWIND_SCAN_BUSY]);
	fprintf(stderr, "  unwind rows:   %llu binaries (%llu rows), %llu without CFI, %llu retried, "
		"%llu did not fit, %llu too costly, %llu failed, %llu still queued; compiling took "
		"%.3f s\n",
		(unsigned long long)ls.files, (unsigned long long)ls.rows,
		(unsigned long long)ls.files_empty, (unsigned long long)ls.files_retry,
		(unsigned long long)ls.files_full, (unsigned long long)ls.files_costly,
		(unsigned long long)ls.files_failed,
		(unsigned long long)ls.queued, ls.compile_ns / 1e9);
	if (cache) {
		disk_cache__stats(cache, &cs);
		fprintf(stderr, "  row cache:     %llu binaries from %s, %llu missed, %llu corrupt "
			"entries ignored, %llu stored so far (the rest at the exit), %.1f of %.0f MiB\n",
			(unsigned long long)ls.files_cached, disk_cache__dir(cache),
			(unsigned long long)cs.misses, (unsigned long long)cs.corrupt,
			(unsigned long long)cs.stored, cs.bytes / 1048576.0,
			disk_cache__max(cache) / 1048576.0);
	}
	fprintf(stderr, "  daemon CPU:    %.3f s in all, %.0f us per distinct stack\n", cpu,
		distinct ? cpu * 1e6 / distinct : 0.0);
}

/* How the kernel's reports of mappings were stood in for: the changes of processes' code asked
 * of user space and read from /proc (docs/record.md). */
static void print_maps_summary(const struct capture *cap)
{
	struct capture_maps_stats ms;

	capture__maps_stats(cap, &ms);
	if (ms.asked)
		fprintf(stderr, "  maps read:     %llu changes of processes' code asked for, %llu "
			"reads of /proc/PID/maps (%llu processes gone), %llu mappings reported, %llu "
			"asks lost, %llu tables without room\n",
			(unsigned long long)ms.asked, (unsigned long long)ms.answered,
			(unsigned long long)ms.gone, (unsigned long long)ms.reported,
			(unsigned long long)ms.asks_lost, (unsigned long long)ms.tables_full);
}

/* What was lost and what the model invented in its place, in one line that is there even when
 * nothing was (scripts read its count): records the rings had no room for, program runs the
 * kernel skipped, and each kind of repair that happened (docs/model.md). */
static void print_losses(const struct model_stats *ms, const struct capture_stats *cs)
{
	const char *sep = "; repairs (docs/model.md):";

	fprintf(stderr, "  records lost:  %llu", (unsigned long long)cs->lost);
	if (cs->lost > cs->malformed + cs->dropped + cs->abandoned)
		fprintf(stderr, " (ring buffer full: a larger --buffer-size keeps them)");
	if (cs->dropped)
		fprintf(stderr, "; %llu of them read but dropped: the recorder fell behind by more "
			"than its queues hold (%llu CPU samples, dropped first: a lower -F keeps them)",
			(unsigned long long)cs->dropped, (unsigned long long)cs->dropped_samples);
	if (cs->abandoned)
		fprintf(stderr, "; %llu of them still to write when the stop's time ran out (the "
			"recorder was behind: docs/record.md, \"Stopping\")",
			(unsigned long long)cs->abandoned);
	if (cs->malformed)
		fprintf(stderr, "; %llu of them malformed (dropped: a bug, please report it)",
			(unsigned long long)cs->malformed);
	if (cs->misses)
		fprintf(stderr, "; %llu program runs skipped by the kernel (recursion)",
			(unsigned long long)cs->misses);
	for (int i = 0; i < MODEL_REPAIR_COUNT; i++) {
		if (!ms->repairs[i])
			continue;
		fprintf(stderr, "%s %s %llu", sep, model__repair_name(i),
			(unsigned long long)ms->repairs[i]);
		sep = ",";
	}
	fputc('\n', stderr);
}

/* The internals behind -v: records by kind, how stacks were taken and symbolized, what the
 * kernel lacked, what the writer wrote, and records that came late or after the stop. */
static void print_details(const struct model_stats *ms, const struct gt_writer_stats *ws,
			  const struct capture_stats *cs, const struct capture *cap,
			  struct cfi_loader *cfi, struct disk_cache *row_cache)
{
	fprintf(stderr, "  by kind:      ");
	for (int i = 0; i < MODEL_KIND_COUNT; i++)
		fprintf(stderr, " %llu %s%s", (unsigned long long)ms->kinds[i], model__kind_name(i),
			i + 1 < MODEL_KIND_COUNT ? "," : "\n");
	if (ms->stack_lookups)
		fprintf(stderr, "  call stacks:   %llu, %llu distinct (%llu trimmed, %llu named as "
			"another process's of the same code), %llu process images; "
			"symbolizing took %.3f s (%.0f us per distinct stack); %llu binaries, "
			"%llu closed unused or past the budget (%llu past it), %llu read again\n",
			(unsigned long long)ms->stack_lookups, (unsigned long long)ms->stacks_distinct,
			(unsigned long long)ms->stacks_trimmed, (unsigned long long)ms->stacks_shared,
			(unsigned long long)ms->images,
			ms->symbolize_ns / 1e9,
			ms->stacks_distinct ? ms->symbolize_ns / 1e3 / ms->stacks_distinct : 0.0,
			(unsigned long long)ms->binaries, (unsigned long long)ms->binaries_closed,
			(unsigned long long)ms->binaries_over_budget,
			(unsigned long long)ms->binaries_reread);
	if (ms->late_walks || ms->copies_refused)
		fprintf(stderr, "  first sight:   %llu user stacks finished from a copy of the stack "
			"(%llu frames), %llu held for their rows; cut short: %llu at the copy's end, "
			"%llu without rows in time, %llu with no room in the ring for the copy\n",
			(unsigned long long)ms->late_walks, (unsigned long long)ms->late_frames,
			(unsigned long long)ms->late_held, (unsigned long long)ms->late_copy_short,
			(unsigned long long)ms->late_no_rows, (unsigned long long)ms->copies_refused);
	if (ms->prepare_ns)
		fprintf(stderr, "  read ahead:    %llu binaries (%llu with DWARF)%s before the start, "
			"in %.3f s\n", (unsigned long long)ms->prepared,
			(unsigned long long)ms->prepared_dwarf, ms->prepared_kernel ? " and kallsyms" : "",
			ms->prepare_ns / 1e9);
	print_unwind_summary(cap, cfi, row_cache, ms->stacks_distinct);
	print_maps_summary(cap);
	fprintf(stderr, "  kernel:        %s\n", capture__features(cap)->release);
	fprintf(stderr, "  threads:       %llu (%llu under a tid an earlier thread had)\n",
		(unsigned long long)ms->threads, (unsigned long long)ms->tids_reused);
	fprintf(stderr, "  written:       %llu bytes, %llu events, %.1f bytes/event\n",
		(unsigned long long)ws->bytes, (unsigned long long)ws->events,
		ws->events ? (double)ws->bytes / ws->events : 0.0);
	fprintf(stderr, "  definitions:   %llu strings, %llu stacks; forgotten after a while unused "
		"(defined again if met again): %llu strings, %llu stacks\n",
		(unsigned long long)ws->strings, (unsigned long long)ws->stacks,
		(unsigned long long)ws->strings_forgotten, (unsigned long long)ws->stacks_forgotten);
	fprintf(stderr, "  out of order:  %llu records (delivered late)\n",
		(unsigned long long)cs->out_of_order);
	fprintf(stderr, "  queued:        %.1f MiB at most for one CPU (records read, waiting for "
		"the model)\n", cs->staged_peak / 1048576.0);
	fprintf(stderr, "  after stop:    %llu records (sent while the programs were detached)\n",
		(unsigned long long)cs->after_stop);
	fprintf(stderr, "  moot wakeups:  %llu (of threads not asleep yet: nothing to show)\n",
		(unsigned long long)ms->wakeups_moot);
}

/* A list of files the symbolizer did not read, headed by head (its %llu the count), when it
 * has any. */
static void print_files(const struct foreign_log *log, const char *head)
{
	if (!log || !foreign_log__count(log))
		return;
	fprintf(stderr, head, (unsigned long long)foreign_log__count(log));
	foreign_log__print(log, stderr, "   ");
}

/* path as a shell word, for a command line a person pastes: in single quotes unless it has
 * only characters no shell treats specially. */
static void print_shell_word(const char *path)
{
	if (path[0] && !path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "0123456789+,-./:=@_%")]) {
		fputs(path, stderr);
		return;
	}
	fputc('\'', stderr);
	for (const char *c = path; *c; c++)
		if (*c == '\'')
			fputs("'\\''", stderr);
		else
			fputc(*c, stderr);
	fputc('\'', stderr);
}

/* The newest Go of Debian's versioned packages (/usr/lib/go-1.N/bin/go), if it is 1.22 or
 * later: the go on PATH of Debian 12 is 1.19, whose viewer cannot open a go1.23 file. */
static bool newer_go(char *out, size_t len)
{
	int best = 0;
	glob_t g;

	if (glob("/usr/lib/go-1.*/bin/go", 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int minor = atoi(g.gl_pathv[i] + strlen("/usr/lib/go-1."));

		if (minor >= 22 && minor > best && !access(g.gl_pathv[i], X_OK)) {
			best = minor;
			snprintf(out, len, "%s", g.gl_pathv[i]);
		}
	}
	globfree(&g);
	return best > 0;
}

/* The command that opens the file on this machine. */
static void print_open_it(const char *path, bool go123)
{
	char go[64];
	bool found = go123 && newer_go(go, sizeof(go));

	fprintf(stderr, "  open it:       %s tool trace ", found ? go : "go");
	print_shell_word(path);
	fputs(go123 && !found ? "   (Go 1.22 or later; on a server: README.md, \"Viewing on a "
			     "server\")\n" : "   (on a server: README.md, \"Viewing on a server\")\n",
	      stderr);
}

/* JIT code a perf map did not name when its stacks were written, named at the end from the map
 * as it stood then (a map the runtime writes at its exit, or when asked). */
static void print_jit(const struct model_stats *ms, const struct go123_restack_stats *copied)
{
	if (!ms->jit_kept && !ms->jit_unkept)
		return;
	fprintf(stderr, "  JIT code:      %llu stacks with frames no perf map named when written: "
		"%llu named at the end (%llu frames, in %.3f s)", (unsigned long long)(ms->jit_kept +
		ms->jit_unkept), (unsigned long long)ms->jit_named,
		(unsigned long long)ms->jit_frames, ms->jit_ns / 1e9);
	if (ms->jit_unkept)
		fprintf(stderr, ", %llu not kept for it (memory)", (unsigned long long)ms->jit_unkept);
	if (ms->jit_dropped)
		fprintf(stderr, ", %llu dropped when their process exited without a perf map",
			(unsigned long long)ms->jit_dropped);
	if (ms->jit_err == -ENOTSUP && copied && copied->generations)
		fprintf(stderr, "; written by a copy of the go1.23 file (%llu stack table entries in "
			"%llu generations)", (unsigned long long)copied->stacks,
			(unsigned long long)copied->generations);
	else if (ms->jit_err == -ENOTSUP && ms->jit_window)
		fprintf(stderr, "; %llu named in the flight recorder's go1.23 files, from the maps "
			"as each file was written", (unsigned long long)ms->jit_window);
	else if (ms->jit_err == -ENOTSUP)
		fputs("; the flight recorder's files keep them as written (go1.19 windows, or no "
		      "map named them in time)", stderr);
	else if (ms->jit_err)
		fprintf(stderr, ", some not: %s", strerror(-ms->jit_err));
	fputc('\n', stderr);
}

/* Python frames: the processes found, the stacks that got them, and what was left native. */
static void print_python(const struct record_summary *s, const struct model_stats *ms)
{
	struct python_stats ps;
	uint64_t b[LX_PY_NSTATS] = { 0 };

	python__stats(s->py, &ps);
	if (!s->py || (!ps.processes && !ps.unknown_version && !ps.not_found &&
			!ps.offsets_refused))
		return;
	(void)capture__python_stats(s->cap, b);
	fprintf(stderr, "  python:        %llu processes (%llu of a version not known, %llu not "
		"found, %llu whose own offsets are not lxtrace's), %llu threads; %llu stacks with "
		"%llu Python frames (%llu of threads not read yet, their state found by BPF; %llu "
		"cut deeper than %d frames, marked); native frames only: %llu stacks of threads not "
		"seen yet, %llu with a frame not named, %llu without the evaluation loop, %llu "
		"holding no thread state, %llu whose state did not prove its own\n",
		(unsigned long long)ps.processes, (unsigned long long)ps.unknown_version,
		(unsigned long long)ps.not_found, (unsigned long long)ps.offsets_refused,
		(unsigned long long)ps.threads,
		(unsigned long long)ms->py_stacks, (unsigned long long)ms->py_frames,
		(unsigned long long)b[LX_PY_TSD_FOUND], (unsigned long long)ms->py_deep,
		LX_PY_FRAMES_MAX, (unsigned long long)b[LX_PY_UNKNOWN_THREAD],
		(unsigned long long)ms->py_unnamed, (unsigned long long)ms->py_no_eval,
		(unsigned long long)b[LX_PY_TSD_NONE], (unsigned long long)b[LX_PY_TSD_REFUSED]);
}

void record_summary__print(const struct record_summary *s)
{
	const char *path = s->path;
	const struct model *m = s->model;
	const struct capture *cap = s->cap;
	double secs = s->secs;
	struct model_stats ms;
	struct gt_writer_stats ws;
	struct capture_stats cs;

	model__stats(m, &ms);
	if (s->writer) {
		gt_writer__stats(s->writer, &ws);
	} else {
		struct go123_writer_stats w2;

		go123_writer__stats(s->writer2, &w2);
		ws = (struct gt_writer_stats){ .events = w2.events, .batches = w2.batches,
					       .bytes = w2.bytes, .strings = w2.strings,
					       .stacks = w2.stacks };
	}
	capture__stats(cap, &cs);
	fprintf(stderr, PREFIX "%s: %.1f s, %llu records (%.0f/s) of %llu threads",
		path ? path : "flight recorder", secs, (unsigned long long)ms.records,
		secs > 0 ? ms.records / secs : 0.0, (unsigned long long)ms.threads);
	if (path && ws.bytes < 1048576)
		fprintf(stderr, ", %.0f KiB", ws.bytes / 1024.0);
	else if (path)
		fprintf(stderr, ", %.1f MiB", ws.bytes / 1048576.0);
	fputc('\n', stderr);
	print_losses(&ms, &cs);
	/* The trace's waits for a CPU begin at the enqueue; the time before it, from the waker's
	 * sched_waking (a remote wakeup's IPI), is in no wait and the file cannot hold it. */
	if (ms.enqueued)
		fprintf(stderr, "  wake to queue: %.3f ms over %llu wakeups (longest %.1f us), from "
			"sched_waking to the enqueue: before the waits, in none\n",
			ms.enqueue_delay_ns / 1e6, (unsigned long long)ms.enqueued,
			ms.enqueue_delay_max_ns / 1e3);
	if (ms.enqueue_unseen)
		fprintf(stderr, "  unqueued:      %llu wakeups whose enqueue was not seen (lost): "
			"runnable from their run\n", (unsigned long long)ms.enqueue_unseen);
	/* What the CPUs did that the trace shows as neither a recorded thread nor idle. */
	if (ms.held_self_ns || ms.held_untraced_ns)
		fprintf(stderr, "  not recorded:  CPUs held %.3f s by lxtrace itself, %.3f s by "
			"untraced programs (shown as [lxtrace] and [untraced])\n",
			ms.held_self_ns / 1e9, ms.held_untraced_ns / 1e9);
	/* Every stack cut short, and the walks that went on without the copy they wanted
	 * (docs/stacks.md, "First sight"). */
	if (ms.stacks_cut || ms.copies_refused)
		fprintf(stderr, "  stacks cut:    %llu user stacks with a \"[truncated\" mark; %llu walked on "
			"by frame pointers where the ring had no room for a copy of the stack (those "
			"cut short end \"[truncated: no room for a copy]\"; a larger --buffer-size "
			"keeps them)\n", (unsigned long long)ms.stacks_cut,
			(unsigned long long)ms.copies_refused);
	/* Work shed while the recorder was behind (user/capture/shed.h): counted, not lost. */
	if (s->shed && s->shed->waits.spells)
		fprintf(stderr, "  shed:          %llu stacks did not wait for unwind rows "
			"(%.1f s in all, from %.1f s behind); %llu new stacks not symbolized, "
			"each \"[not symbolized: the recorder was behind]\" (%.1f s in all, from "
			"%.1f s behind); the most behind: %.1f s\n",
			(unsigned long long)ms.stacks_unwaited,
			shed__ns(&s->shed->waits, s->end) / 1e9, SHED_WAITS_AFTER_NS / 1e9,
			(unsigned long long)ms.stacks_shed, shed__ns(&s->shed->symbols, s->end) / 1e9,
			SHED_SYMBOLS_AFTER_NS / 1e9, s->shed->worst / 1e9);
	if (ms.start_stacks_late)
		fprintf(stderr, "  at the start:  %llu threads off the CPU shown without their stack "
			"(their syscall alone): not walked and named within the start's budget\n",
			(unsigned long long)ms.start_stacks_late);
	if (ms.late_found)
		fprintf(stderr, "  seen later:    %llu threads first seen asleep after the start (moved "
			"into the target): blocked at the stack read while they slept\n",
			(unsigned long long)ms.late_found);
	features__print_missing(capture__features(cap), s->uses, "  without:      ", stderr);
	print_jit(&ms, s->restacked);
	print_python(s, &ms);
	print_files(model__refused(m), "  refused files: %llu that other users control (not read, "
		    "or only in part):\n");
	print_files(model__unread(m), "  unread files:  %llu binaries not read by the end, their "
		    "filesystem slow or stalled (named \"[unknown] FILE+0x...\"):\n");
	if (path)
		print_open_it(path, !s->writer);
	if (s->verbose)
		print_details(&ms, &ws, &cs, cap, s->cfi, s->row_cache);
}
