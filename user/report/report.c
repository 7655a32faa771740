/* report.c - one walk over the file feeding each section asked for, then their tables
 * (report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "user/report/report.h"
#include "user/report/sched.h"
#include "user/report/syslat.h"

struct sections {
	struct sched_report *sched;
	struct syslat *sys;
};

static void on_wait(void *ctx, const struct walk *w, const struct walk_thread *t,
		    enum walk_wait kind, uint64_t ns, uint64_t at, int64_t p)
{
	struct sections *s = ctx;

	sched_report__wait(s->sched, w, t, kind, ns, at, p);
}

static void on_offcpu(void *ctx, const struct walk_thread *t, enum walk_off why,
		      const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at)
{
	struct sections *s = ctx;

	if (s->sys)
		syslat__offcpu(s->sys, t, why, stk, sys, ns, at);
}

static void on_syscall(void *ctx, const struct walk_thread *t, const char *sys, uint64_t at)
{
	struct sections *s = ctx;

	syslat__entry(s->sys, t, sys, at);
}

static void print_filter(const struct walk_filter *f, FILE *out)
{
	if (f->pid)
		fprintf(out, ", pid %u", f->pid);
	if (f->comm) {
		fprintf(out, ", threads or programs named ");
		escape__quoted(out, f->comm, strlen(f->comm));
	}
	if (f->from_ns || f->to_ns != UINT64_MAX) {
		fprintf(out, ", from %.6f s", f->from_ns / 1e9);
		if (f->to_ns != UINT64_MAX)
			fprintf(out, " to %.6f s", f->to_ns / 1e9);
	}
}

int report__file(int fd, const char *name, const struct report_opts *o, FILE *out, char *err,
		 size_t errlen)
{
	struct sections s = { 0 };
	struct walk_sink sink = { .ctx = &s };
	struct walk_stats st;
	int ret = -ENOMEM;

	if (o->sections & REPORT_SCHED) {
		s.sched = sched_report__new(o->top);
		if (!s.sched)
			goto nomem;
		sink.wait = on_wait;
	}
	if (o->sections & REPORT_SYSCALLS) {
		s.sys = syslat__new(o->top);
		if (!s.sys)
			goto nomem;
		sink.syscall = on_syscall;
	}
	if (s.sys)
		sink.offcpu = on_offcpu;
	ret = walk__file(fd, &o->filter, &sink, &st, err, errlen);
	if (ret)
		goto out;
	if ((s.sched && !sched_report__ok(s.sched)) || (s.sys && !syslat__ok(s.sys))) {
		ret = -ENOMEM;
		goto nomem;
	}
	fprintf(out, "lxtrace report: ");
	escape__print(out, name, strlen(name));
	fprintf(out, ": %.6f s, %llu events,\n%llu threads (once per program run), %lld CPUs",
		st.span_ns / 1e9, (unsigned long long)st.events, (unsigned long long)st.threads,
		(long long)st.cpus);
	print_filter(&o->filter, out);
	fprintf(out, "\n");
	if (s.sched)
		sched_report__print(s.sched, o->hist, out);
	if (s.sys)
		syslat__print(s.sys, o->hist, out);
	goto out;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
out:
	sched_report__free(s.sched);
	syslat__free(s.sys);
	return ret;
}
