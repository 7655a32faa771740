/* record_flight.c - `lxtrace record --flight-recorder` (record_flight.h): the flight recorder's
 * place in a recording's phases, its signal, its files and its summary lines. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/escape.h"
#include "format/go123/restack.h"
#include "user/cli/output_file.h"
#include "user/cli/record_flight.h"
#include "user/flight/flight.h"

#define PREFIX "lxtrace record: "
/* A file is due once its trigger's --after has passed, but records up to then are still in the
 * merge's queues until the watermark passes them: a poll round and the ordering window later,
 * everything up to the due time has reached the model. */
#define DELIVERY_LAG_NS (2 * MERGE_WINDOW_NS)
/* The writer's open batches go to the window this often at most (and at least every second),
 * so none stays out of it for long: a tenth of the window. */
#define MIN_FLUSH_NS (50 * 1000 * 1000ULL)
#define MAX_FLUSH_NS (1000 * 1000 * 1000ULL)
/* Names a due file may try, each numbered next: enough to step over another user's link or
 * file where one is to go, few enough that a directory gone costs a few lines, not one a poll. */
#define FILE_NAMES 3

/* SIGUSR1s caught and not yet made triggers: counted, not a flag, so that signals that come
 * faster than a busy reader's rounds are each a trigger. Lock-free atomics, as a handler
 * may use. */
static unsigned usr1;

struct record_flight {
	struct flight *flight;
	const struct record_args *args;
	record_open_fn open;
	uint64_t flush_every, next_flush;
	size_t bytes;		/* the window's */
	uint64_t start;		/* the recording's, in ticks */
	unsigned tried;		/* names tried: the next one's number is tried + 1 */
	unsigned names;		/* of them, for the due file */
	unsigned failed;	/* files not written: not opened, or failed once begun */
	unsigned lost;		/* of them, begun */
	char name[4096];	/* the file being written */
	struct output_file *file;	/* it, or NULL */
	char last[4096];	/* the last file written */
	bool tty;
	struct model *model;	/* names the JIT frames of go1.23 files */
	uint64_t jit_files;	/* go1.23 files copied with JIT frames named */
	uint64_t jit_failed;	/* of those to copy, left as written */
};

static void on_usr1(int sig)
{
	__atomic_fetch_add(&usr1, 1, __ATOMIC_RELAXED);
}

void record_flight__catch_signals(void)
{
	/* No SA_RESTART: the signal cuts the ring buffer wait short. */
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

struct record_flight *record_flight__new(const struct record_args *args, uint32_t nprocs,
					 record_open_fn open)
{
	struct record_flight *rf = calloc(1, sizeof(*rf));
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)(args->flight_mib * 1024 * 1024) / (size_t)page * (size_t)page;
	uint64_t span = (uint64_t)(args->flight * 1e9);

	if (!rf) {
		fprintf(stderr, PREFIX "out of memory\n");
		return NULL;
	}
	rf->args = args;
	rf->bytes = bytes;
	rf->open = open;
	rf->tty = isatty(STDERR_FILENO);
	rf->flush_every = span / 10 < MIN_FLUSH_NS ? MIN_FLUSH_NS :
			  span / 10 > MAX_FLUSH_NS ? MAX_FLUSH_NS : span / 10;
	rf->flight = flight__new(&(struct flight_opts){
		.sz = sizeof(struct flight_opts), .span = span, .bytes = bytes,
		.after = (uint64_t)(args->after * 1e9), .gap = (uint64_t)(args->min_gap * 1e9),
		.max_files = args->max_files, .nprocs = nprocs, .frequency = 1000000000,
		.generations = args->format == FORMAT_GO123 });
	if (!rf->flight) {
		fprintf(stderr, PREFIX "flight recorder: %g MiB of memory: %s\n", args->flight_mib,
			strerror(errno));
		free(rf);
		return NULL;
	}
	return rf;
}

void record_flight__started(struct record_flight *rf, uint64_t start, struct model *model)
{
	rf->start = start;
	rf->model = model;
}

/* Seconds from the recording's start to tick ts; the init phase is a few ticks before it. */
static double into(const struct record_flight *rf, uint64_t ts)
{
	return ts > rf->start ? (ts - rf->start) / 1e9 : 0.0;
}

void record_flight__writer_opts(struct record_flight *rf, struct gt_writer_opts *wo)
{
	wo->fd = -1;
	wo->sink = flight__sink;
	wo->sink_ctx = rf->flight;
	wo->forgot = flight__forgot;
}

void record_flight__writer2_opts(struct record_flight *rf, struct go123_writer_opts *wo)
{
	wo->fd = -1;
	wo->sink = flight__generation;
	wo->sink_ctx = rf->flight;
	wo->gen_ticks = rf->flush_every;
	wo->gen_bytes = rf->bytes / 8;
}

void record_flight__model_opts(struct record_flight *rf, struct model_opts *mo)
{
	mo->triggers = rf->args->triggers;
	mo->ntriggers = rf->args->ntriggers;
	mo->on_trigger = flight__trigger;
	mo->trigger_ctx = rf->flight;
}

/* A file that could not be written: said in one line and counted. */
static void say_failed(struct record_flight *rf, const char *why)
{
	rf->failed++;
	rf->lost++;
	fprintf(stderr, "%s" PREFIX "%s: %s\n", rf->tty ? "\r\033[K" : "", rf->name, why);
}

/* The due file could not be opened (said by rf->open): counted; after FILE_NAMES names it is
 * given up, so that the next trigger can have one. */
static void open_failed(struct record_flight *rf)
{
	rf->failed++;
	if (++rf->names < FILE_NAMES)
		return;
	rf->names = 0;
	flight__abandon(rf->flight);
}

/* Starts the due file, numbered next, written by a child process while the recording goes on.
 * The file is made as the recording's output is (no link followed, no file taken over, locked,
 * the invoking user's). One that cannot be opened is said and counted; the recording goes on. */
static void start_file(struct record_flight *rf)
{
	int err;

	flight__file_name(rf->args->output, ++rf->tried, rf->name, sizeof(rf->name));
	rf->file = rf->open(rf->name);
	if (!rf->file) {
		open_failed(rf);
		return;
	}
	err = flight__write_start(rf->flight, output_file__fd(rf->file));
	if (!err) {
		rf->names = 0;
		return;
	}
	output_file__remove(rf->file);
	rf->file = NULL;
	/* Still due: it failed before it was begun (no pipe), and may try the next name. */
	if (!flight__due(rf->flight, UINT64_MAX)) {
		say_failed(rf, strerror(-err));
		return;
	}
	fprintf(stderr, "%s" PREFIX "%s: %s\n", rf->tty ? "\r\033[K" : "", rf->name,
		strerror(-err));
	open_failed(rf);
}

/* What fired, on which thread: `trigger sched-latency 152.3 ms > 50.0 ms of "stall" (pid 1,
 * tid 2)`, `lxtrace_trigger("slow") of ...`, `SIGUSR1`. Names and reasons come from other
 * users' processes: quoted and escaped. */
static void say_trigger(const struct trigger_fired *f)
{
	char what[128];

	if (f->trigger) {
		trigger__what(f->trigger, f->nr, f->ns, what, sizeof(what));
		fprintf(stderr, "trigger %s", what);
	} else if (f->tid) {
		fputs("lxtrace_trigger(", stderr);
		escape__quoted(stderr, f->reason, strlen(f->reason));
		fputc(')', stderr);
	} else {
		fputs("SIGUSR1", stderr);
	}
	if (f->tid) {
		fputs(" of ", stderr);
		escape__quoted(stderr, f->comm, strlen(f->comm));
		fprintf(stderr, " (pid %u, tid %u)", f->pid, f->tid);
	}
}

/* output_file__rewrite's copy: the go1.23 file with the JIT frames named now. */
static int copy_named(void *ctx, int in, int out, char *why, size_t whylen)
{
	struct record_flight *rf = ctx;
	struct go123_restack_stats st;

	return go123_restack__copy(in, out, model__late_named, rf->model, &st, why, whylen);
}

/* A go1.23 file, written whole, whose late JIT frames (kept unnamed, their perf map written
 * after their stacks) a perf map names now: copied with them named (format/go123/restack.h) before
 * it is put at its name. A go1.19 window keeps one definition per id (format/window.h): as
 * written. A copy that fails leaves the file as written, said and counted. */
static void name_jit(struct record_flight *rf)
{
	struct stat st;
	char why[512];

	if (rf->args->format != FORMAT_GO123 || !rf->model ||
	    fstat(output_file__fd(rf->file), &st) || !S_ISREG(st.st_mode) ||
	    !model__name_window(rf->model))
		return;
	if (!output_file__rewrite(rf->file, copy_named, rf, why, sizeof(why))) {
		rf->jit_files++;
	} else {
		rf->jit_failed++;
		fprintf(stderr, "%s" PREFIX "warning: the JIT frames named now are not in the "
			"file: %s\n", rf->tty ? "\r\033[K" : "", why);
	}
	model__window_done(rf->model);
}

/* The file being written, once done (or waiting for it): said in one line; one that failed is
 * taken away and counted. */
static void end_file(struct record_flight *rf, bool wait)
{
	struct flight_stats st;
	char err[512];
	int result;

	if (flight__reap(rf->flight, wait, &result, err, sizeof(err)) != 1)
		return;
	if (result) {
		say_failed(rf, err);
		output_file__remove(rf->file);
		rf->file = NULL;
		return;
	}
	name_jit(rf);
	/* Put at its name whole, on the disk: a file at a flight recorder's name is complete. */
	result = output_file__publish(rf->file, err, sizeof(err));
	if (result) {
		say_failed(rf, err);
		output_file__close(rf->file);
		rf->file = NULL;
		return;
	}
	result = output_file__close(rf->file);
	rf->file = NULL;
	if (result) {
		say_failed(rf, strerror(-result));
		return;
	}
	flight__stats(rf->flight, &st);
	snprintf(rf->last, sizeof(rf->last), "%s", rf->name);
	fprintf(stderr, "%s" PREFIX "%s: %.1f s, %.1f to %.1f s into the recording (%.1f MiB, "
		"written in %.0f ms), for ", rf->tty ? "\r\033[K" : "", rf->name,
		(st.last_to - st.last_from) / 1e9, into(rf, st.last_from), into(rf, st.last_to),
		st.last_file_bytes / 1048576.0, st.last_write_ns / 1e6);
	say_trigger(&st.last_trigger);
	fprintf(stderr, " at %.1f s\n", into(rf, st.last_trigger.ts));
}

int record_flight__take_signals(struct capture *cap)
{
	for (unsigned n = __atomic_exchange_n(&usr1, 0, __ATOMIC_RELAXED); n; n--) {
		/* The reader's own trigger record, in time order among the kernel's (tid 0: marked
		 * on lxtrace's goroutine). */
		struct lx_user_log r = { .u.h = { .ts = now_ns(), .type = LX_REC_TRIGGER } };
		int err;

		snprintf(r.msg, sizeof(r.msg), "SIGUSR1");
		err = capture__inject(cap, &r.u.h, sizeof(r));
		if (err)
			return err;
	}
	return 0;
}

int record_flight__poll(struct record_flight *rf, struct capture *cap, struct gt_writer *w,
			struct go123_writer *w2, uint64_t now)
{
	bool due;
	int err;

	err = record_flight__take_signals(cap);
	if (err)
		return err;
	if (flight__writing(rf->flight))
		end_file(rf, false);
	due = !flight__writing(rf->flight) && flight__due(rf->flight, now - DELIVERY_LAG_NS);
	if (now >= rf->next_flush || due) {
		err = w ? gt_writer__flush(w) : go123_writer__flush(w2);
		if (err)
			return err;
		flight__note_memory(rf->flight);
		rf->next_flush = now + rf->flush_every;
	}
	if (due)
		start_file(rf);
	if (!flight__done(rf->flight) || flight__writing(rf->flight))
		return 0;
	fprintf(stderr, "%s" PREFIX "--max-files %u reached, the last %s: stopping\n",
		rf->tty ? "\r\033[K" : "", rf->args->max_files, rf->last);
	return 1;
}

int record_flight__finish(struct record_flight *rf)
{
	if (flight__writing(rf->flight))
		end_file(rf, true);
	/* Until it is written or given up: a name refused at the end is stepped over too. */
	while (flight__due(rf->flight, UINT64_MAX)) {
		start_file(rf);
		if (flight__writing(rf->flight))
			end_file(rf, true);
	}
	return 0;
}

/* The triggers --min-gap kept from a file: a line for each trigger and thread, at most
 * TALLY_GROUPS of them, whatever the storm. */
static void say_too_soon(const struct record_flight *rf, const struct tally *t)
{
	for (size_t i = 0; i < t->ngroups; i++) {
		const struct tally_group *g = &t->g[i];

		fprintf(stderr, "%s%llu from %.1f to %.1f s, the %s: ", i ? "                 " :
			"  within gap:    ", (unsigned long long)g->n, into(rf, g->first_ts),
			into(rf, g->last_ts), g->longest.trigger ? "longest" : "first");
		say_trigger(&g->longest);
		fputc('\n', stderr);
	}
	if (t->others)
		fprintf(stderr, "                 and %llu more, of other triggers or threads\n",
			(unsigned long long)t->others);
}

void record_flight__summary(const struct record_flight *rf)
{
	struct flight_stats st;

	flight__stats(rf->flight, &st);
	fprintf(stderr, "  flight:        %llu files",
		(unsigned long long)(st.plan.files - rf->lost));
	if (rf->failed)
		fprintf(stderr, " (%u could not be written)", rf->failed);
	if (st.plan.files > rf->lost)
		fprintf(stderr, ", the last %s", rf->last);
	fprintf(stderr, "; %llu triggers: %llu with a file, %llu in a pending file, %llu within "
		"--min-gap, %llu past --max-files", (unsigned long long)st.plan.fired,
		(unsigned long long)st.plan.files, (unsigned long long)st.plan.in_pending,
		(unsigned long long)st.plan.too_soon, (unsigned long long)st.plan.no_more);
	if (st.plan.abandoned)
		fprintf(stderr, ", %llu whose file could not be opened",
			(unsigned long long)st.plan.abandoned);
	if (rf->jit_files || rf->jit_failed)
		fprintf(stderr, "; %llu files copied with late JIT frames named (%llu left as "
			"written)", (unsigned long long)rf->jit_files,
			(unsigned long long)rf->jit_failed);
	fputc('\n', stderr);
	say_too_soon(rf, flight__too_soon(rf->flight));
	fprintf(stderr, "  window:        %.1f MiB held, at most %.1f of %g MiB (memory at most "
		"%.1f MiB); ", st.window.bytes / 1048576.0, st.window.peak_bytes / 1048576.0,
		rf->args->flight_mib, st.peak_resident / 1048576.0);
	if (rf->args->format == FORMAT_GO123)
		fprintf(stderr, "%llu generations evicted, %llu events (%llu larger than the "
			"window)", (unsigned long long)st.window.evicted,
			(unsigned long long)st.evicted_events,
			(unsigned long long)st.window.oversize);
	else
		fprintf(stderr, "%llu events read at its start (strings and stacks: %.1f MiB)",
			(unsigned long long)st.evicted_events, st.dict_bytes / 1048576.0);
	fprintf(stderr, "; slowest file %.0f ms\n", st.max_write_ns / 1e6);
}

void record_flight__free(struct record_flight *rf)
{
	if (!rf)
		return;
	if (rf->file && flight__writing(rf->flight))
		end_file(rf, true);
	flight__free(rf->flight);
	free(rf);
}
