/* report.c - one walk over the file feeding each section asked for, then their tables
 * (report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "user/report/cpu.h"
#include "user/report/json.h"
#include "user/report/notes.h"
#include "user/report/offcpu.h"
#include "user/report/report.h"
#include "user/report/sched.h"
#include "user/report/syslat.h"

static void on_wait(void *ctx, const struct walk *w, const struct walk_thread *t,
		    enum walk_wait kind, const struct gt_stack *stk, uint64_t ns, uint64_t at,
		    int64_t p)
{
	sched_report__wait(((struct report *)ctx)->sched, w, t, kind, ns, at, p);
}

static void on_offcpu(void *ctx, const struct walk_thread *t, enum walk_off why,
		      const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at)
{
	struct report *r = ctx;

	if (r->off)
		offcpu__add(r->off, t, why, stk, sys, ns, at);
	if (r->sys)
		syslat__offcpu(r->sys, t, why, stk, sys, ns, at);
}

static void on_offcpu_cut(void *ctx, const struct walk_thread *t, enum walk_off why,
			  const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at)
{
	offcpu__add(((struct report *)ctx)->off, t, why, stk, sys, ns, at);
}

static void on_syscall(void *ctx, const struct walk_thread *t, const struct gt_stack *stk,
		       const char *sys, uint64_t ns, uint64_t at)
{
	syslat__call(((struct report *)ctx)->sys, t, sys, ns, at);
}

static void on_sample(void *ctx, const struct walk_thread *t, const struct gt_stack *stk,
		      int64_t p, uint64_t at)
{
	cpu_report__sample(((struct report *)ctx)->cpu, t, stk, p, at);
}

static void on_log(void *ctx, const struct walk_thread *t, const char *key, const char *msg,
		   size_t len, uint64_t at)
{
	notes__log(((struct report *)ctx)->notes, t, key, msg, len, at);
}

static void on_repair(void *ctx, const struct walk_thread *t, const char *event, uint64_t at)
{
	notes__repair(((struct report *)ctx)->notes, t, event, at);
}

static bool all_ok(const struct report *r)
{
	return (!r->sched || sched_report__ok(r->sched)) && (!r->sys || syslat__ok(r->sys)) &&
	       (!r->off || offcpu__ok(r->off)) && (!r->cpu || cpu_report__ok(r->cpu)) &&
	       (!r->notes || notes__ok(r->notes));
}

int report__read(int fd, const struct report_opts *o, struct report *r, char *err,
		 size_t errlen)
{
	struct walk_sink sink = { .ctx = r };
	unsigned s = o->sections;
	int ret;

	memset(r, 0, sizeof(*r));
	if (((s & REPORT_SCHED) && !(r->sched = sched_report__new(o->top))) ||
	    ((s & REPORT_OFFCPU) && !(r->off = offcpu__new(o->top))) ||
	    ((s & REPORT_SYSCALLS) && !(r->sys = syslat__new(o->top))) ||
	    ((s & REPORT_CPU) && !(r->cpu = cpu_report__new(o->top))) ||
	    ((s & REPORT_TRIGGERS) && !(r->notes = notes__new(o->top)))) {
		ret = -ENOMEM;
		goto fail;
	}
	if (r->sched)
		sink.wait = on_wait;
	if (r->off || r->sys)
		sink.offcpu = on_offcpu;
	if (r->off)
		sink.offcpu_cut = on_offcpu_cut;
	if (r->sys)
		sink.syscall = on_syscall;
	if (r->cpu)
		sink.sample = on_sample;
	if (r->notes) {
		sink.log = on_log;
		sink.repair = on_repair;
	}
	ret = walk__file(fd, &o->filter, &sink, &r->st, err, errlen);
	if (!ret && !all_ok(r))
		ret = -ENOMEM;
	if (!ret)
		return 0;
fail:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	report__free(r);
	return ret;
}

/* "kept: pid N, threads or programs named "X", from A s to B s" on a line of its own. */
static void print_filter(const struct walk_filter *f, FILE *out)
{
	const char *sep = "\nkept: ";

	if (f->pid) {
		fprintf(out, "%spid %u", sep, f->pid);
		sep = ", ";
	}
	if (f->comm) {
		fprintf(out, "%sthreads or programs named ", sep);
		escape__quoted(out, f->comm, strlen(f->comm));
		sep = ", ";
	}
	if (f->from_ns || f->to_ns != UINT64_MAX) {
		fprintf(out, "%swhat ends from %.6f s", sep, f->from_ns / 1e9);
		if (f->to_ns != UINT64_MAX)
			fprintf(out, " to %.6f s", f->to_ns / 1e9);
	}
}

void report__print(const struct report *r, const char *name, const struct report_opts *o,
		   FILE *out)
{
	char none[128];

	fprintf(out, "lxtrace report: ");
	escape__print(out, name, strlen(name));
	if (r->st.go_runtime)
		fprintf(out, ": %.6f s, %llu events,\n%llu goroutines, %lld Ps (a trace Go's "
			"runtime wrote: CPU below means P)", r->st.span_ns / 1e9,
			(unsigned long long)r->st.events, (unsigned long long)r->st.threads,
			(long long)r->st.cpus);
	else
		fprintf(out, ": %.6f s, %llu events,\n%llu threads (once per program run), %lld "
			"CPUs", r->st.span_ns / 1e9, (unsigned long long)r->st.events,
			(unsigned long long)r->st.threads, (long long)r->st.cpus);
	print_filter(&o->filter, out);
	fprintf(out, "\n");
	/* Each section would say it has nothing, as if the trace had none of it. */
	if (walk__none_kept(&o->filter, &r->st, none, sizeof(none))) {
		fprintf(out, "\n%s\n", none);
		return;
	}
	if (r->sched)
		sched_report__print(r->sched, o->hist, out);
	if (r->off)
		offcpu__print(r->off, o->hist, o->depth ? o->depth : REPORT_DEPTH, out);
	if (r->sys)
		syslat__print(r->sys, o->hist, out);
	if (r->cpu)
		cpu_report__print(r->cpu, o->depth ? o->depth : REPORT_DEPTH, out);
	if (r->notes)
		notes__print(r->notes, out);
}

/* The filter as given: "pid" 0 and "comm" null when none, "to_ns" null for the end. */
static void json_filter(struct json *j, const struct walk_filter *f)
{
	json__object(j, "filter");
	json__uint(j, "pid", f->pid);
	if (f->comm)
		json__str(j, "comm", f->comm);
	else
		json__null(j, "comm");
	json__uint(j, "from_ns", f->from_ns);
	if (f->to_ns != UINT64_MAX)
		json__uint(j, "to_ns", f->to_ns);
	else
		json__null(j, "to_ns");
	json__end(j);
}

int report__json(const struct report *r, const char *name, const struct report_opts *o,
		 FILE *out)
{
	struct json j = { .out = out };
	char none[128];

	json__object(&j, NULL);
	json__str(&j, "schema", "lxtrace-report/1");
	json__str(&j, "file", name);
	json__uint(&j, "span_ns", r->st.span_ns);
	json__uint(&j, "events", r->st.events);
	json__uint(&j, "threads", r->st.threads);
	json__int(&j, "cpus", r->st.cpus);
	json__bool(&j, "go_runtime", r->st.go_runtime);
	json_filter(&j, &o->filter);
	/* The sections would say the trace had none of their figures. */
	if (walk__none_kept(&o->filter, &r->st, none, sizeof(none))) {
		json__str(&j, "none_kept", none);
	} else {
		if (r->sched)
			sched_report__json(r->sched, o->hist, &j);
		if (r->off)
			offcpu__json(r->off, o->hist, &j);
		if (r->sys)
			syslat__json(r->sys, o->hist, &j);
		if (r->cpu)
			cpu_report__json(r->cpu, &j);
		if (r->notes)
			notes__json(r->notes, &j);
	}
	json__end(&j);
	return j.oom ? -ENOMEM : 0;
}

void report__free(struct report *r)
{
	sched_report__free(r->sched);
	offcpu__free(r->off);
	syslat__free(r->sys);
	cpu_report__free(r->cpu);
	notes__free(r->notes);
	memset(r, 0, sizeof(*r));
}

int report__file(int fd, const char *name, const struct report_opts *o, FILE *out, char *err,
		 size_t errlen)
{
	struct report r;
	int ret = report__read(fd, o, &r, err, errlen);

	if (ret)
		return ret;
	if (o->json)
		ret = report__json(&r, name, o, out);
	else
		report__print(&r, name, o, out);
	report__free(&r);
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}
