/* print.c - go1.23 events as text (print.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "format/go123/print.h"
#include "lib/escape.h"

static const struct go123_spec sample_spec = {
	"CPUSample", 5, { "time", "m", "p", "g" }, 0, 0,
};

static void print_frames(FILE *f, const struct go123_reader *r, uint64_t id, const char *prefix)
{
	struct go123_frame fr[GO123_MAX_FRAMES];
	int n = go123_reader__stack(r, id, fr);

	for (int i = 0; i < n; i++) {
		fprintf(f, "    %s", prefix);
		if (fr[i].func_len)
			escape__print(f, fr[i].func, fr[i].func_len);
		else
			fputc('?', f);
		fputc(' ', f);
		if (fr[i].file_len)
			escape__print(f, fr[i].file, fr[i].file_len);
		else
			fputc('?', f);
		fprintf(f, ":%" PRIu64 " pc=%#" PRIx64 "\n", fr[i].line, fr[i].pc);
	}
}

static void print_m(FILE *f, const char *name, uint64_t m)
{
	if (m == GO123_NO_THREAD)
		fprintf(f, " %s=-1", name);
	else
		fprintf(f, " %s=%" PRIu64, name, m);
}

int go123_print__event(FILE *f, const struct go123_reader *r, const struct go123_event *e,
		    int64_t t0_ns)
{
	bool sample = e->type == GO123_EV_CPU_SAMPLE;
	const struct go123_spec *s = sample ? &sample_spec : go123_spec(e->type);
	unsigned nargs = sample ? 4 : s->nargs;
	uint64_t stack = 0;

	fprintf(f, "%" PRId64 " gen=%" PRIu64, go123_reader__ns(r, e->ts) - t0_ns, e->gen);
	print_m(f, "m", e->m);
	fprintf(f, " %s", s->name);
	for (unsigned i = sample; i < nargs; i++) {
		if (s->strings >> i & 1) {
			size_t len;
			const char *str = go123_reader__string(r, e->args[i], &len);

			fprintf(f, " %s=", s->args[i]);
			escape__quoted(f, str ? str : "", str ? len : 0);
		} else if (s->stacks >> i & 1) {
			fprintf(f, " %s=%" PRIu64, s->args[i], e->args[i]);
			if (!strcmp(s->args[i], "stack"))
				stack = e->args[i];
		} else if (!strcmp(s->args[i], "m")) {
			print_m(f, s->args[i], e->args[i]);
		} else {
			fprintf(f, " %s=%" PRIu64, s->args[i], e->args[i]);
		}
	}
	if (sample) {
		stack = e->args[4];
		fprintf(f, " stack=%" PRIu64, stack);
	}
	fputc('\n', f);
	print_frames(f, r, stack, "");
	if (e->type == GO123_EV_GO_CREATE || e->type == 47)
		print_frames(f, r, e->args[1], "new: ");
	return ferror(f) ? -EIO : 0;
}
