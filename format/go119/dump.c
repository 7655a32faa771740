/* dump.c - prints decoded events as text, one line each with indented stack frames. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "format/go119/dump.h"
#include "lib/escape.h"

/* Argument names as Go's parser prints them; a string id (gt_spec.str_arg) is printed
 * resolved. */
static const char *const arg_names[GT_EV_COUNT][GT_MAX_ARGS] = {
	[GT_EV_GOMAXPROCS] = { "procs" },
	[GT_EV_PROC_START] = { "thread" },
	[GT_EV_GC_START] = { "seq" },
	[GT_EV_GC_STW_START] = { "kind" },
	[GT_EV_GC_SWEEP_DONE] = { "swept", "reclaimed" },
	[GT_EV_GO_CREATE] = { "g", "stack" },
	[GT_EV_GO_START] = { "g", "seq" },
	[GT_EV_GO_UNBLOCK] = { "g", "seq" },
	[GT_EV_GO_SYSEXIT] = { "g", "seq", "ts" },
	[GT_EV_GO_WAITING] = { "g" },
	[GT_EV_GO_IN_SYSCALL] = { "g" },
	[GT_EV_HEAP_ALLOC] = { "mem" },
	[GT_EV_HEAP_GOAL] = { "mem" },
	[GT_EV_GO_START_LOCAL] = { "g" },
	[GT_EV_GO_UNBLOCK_LOCAL] = { "g" },
	[GT_EV_GO_SYSEXIT_LOCAL] = { "g", "ts" },
	[GT_EV_GO_START_LABEL] = { "g", "seq", "label" },
	[GT_EV_USER_TASK_CREATE] = { "taskid", "pid", "name" },
	[GT_EV_USER_TASK_END] = { "taskid" },
	[GT_EV_USER_REGION] = { "taskid", "mode", "name" },
	[GT_EV_USER_LOG] = { "taskid", "key" },
	[GT_EV_CPU_SAMPLE] = { "ts", "p", "g" },
};

static void print_frames(FILE *f, const struct gt_stack *s, const char *prefix)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		const char *func = s->frames[i].func[0] ? s->frames[i].func : "?";
		const char *file = s->frames[i].file[0] ? s->frames[i].file : "?";

		fprintf(f, "    %s", prefix);
		escape__print(f, func, strlen(func));
		fputc(' ', f);
		escape__print(f, file, strlen(file));
		fprintf(f, ":%" PRIu64 " pc=%#" PRIx64 "\n", s->frames[i].line, s->frames[i].pc);
	}
}

int gt_dump__event(FILE *f, const struct gt_dict *d, uint64_t freq, const struct gt_event *e,
		   uint64_t t0)
{
	const struct gt_spec *s = &gt_specs[e->type];
	unsigned nargs = e->nargs - !!(s->flags & GT_STACK);
	/* ns since t0; a sample may predate t0, hence the sign. */
	__int128 dt = (__int128)e->ts - (__int128)t0;
	long long ns = (long long)(dt * 1000000000 / (freq ? (__int128)freq : 1000000000));

	fprintf(f, "%lld p=%" PRId64 " g=%" PRIu64 " %s", ns, e->p, e->g, s->name);
	for (unsigned i = 0; i < nargs && i < GT_MAX_ARGS; i++) {
		const char *name = arg_names[e->type][i];

		if (!name)
			fprintf(f, " arg%u=%" PRIu64, i, e->args[i]);
		else if (i + 1 == s->str_arg) {
			const char *str = gt_dict__string(d, e->args[i]);

			fprintf(f, " %s=", name);
			escape__quoted(f, str ? str : "", str ? strlen(str) : 0);
		}
		else if (e->type == GT_EV_CPU_SAMPLE && i == 1)
			fprintf(f, " p=%" PRId64, (int64_t)e->args[i]);
		else
			fprintf(f, " %s=%" PRIu64, name, e->args[i]);
	}
	if (e->type == GT_EV_USER_LOG) {
		fputs(" msg=", f);
		escape__quoted(f, e->msg, e->msg_len);
	}
	if (s->flags & GT_STACK)
		fprintf(f, " stk=%" PRIu64, e->args[e->nargs - 1]);
	fputc('\n', f);
	print_frames(f, e->stack, "");
	if (e->type == GT_EV_GO_CREATE)
		print_frames(f, gt_dict__stack(d, e->args[1]), "new: ");
	return ferror(f) ? -EIO : 0;
}

int gt_dump__trace(FILE *f, const struct gt_trace *t)
{
	const struct gt_event *ev = gt_trace__events(t);
	size_t n = gt_trace__nevents(t);
	uint64_t t0 = n ? ev[0].ts : 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = gt_dump__event(f, gt_trace__dict(t), gt_trace__frequency(t), &ev[i], t0);
	return err;
}
