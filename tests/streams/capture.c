/* capture.c - records a command the way `lxtrace record -- COMMAND` does (as root, the command
 * and its descendants as the target, every syscall, samples, kernel and user stacks unwound with
 * the binaries' unwind rows, the annotations of the command's program and of --usdt files), but
 * keeps the record stream that capture delivers instead of a trace: the fixture of the golden
 * tests.
 *
 *   capture-stream [-F HZ] [--usdt PATH]... PREFIX -- COMMAND [ARGS...]
 *
 * writes
 *   PREFIX.stream    the records and loss reports in delivery order (tests/lib/stream.h), times
 *                    shifted so the recording starts at STREAM_T0: a replay then does not depend
 *                    on the replaying machine's clock (the model compares record times with the
 *                    time of its /proc scan)
 *   PREFIX.proc      the threads the model's start would create: "pid tid state syscall
 *                    resident_pages comm" per line
 *   PREFIX.kallsyms  the lines of /proc/kallsyms that name the stream's kernel addresses, so a
 *                    fake /proc resolves them as this machine did
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "tests/lib/stream.h"
#include "user/capture/capture.h"
#include "user/proc/procscan.h"
#include "user/stacks/cfi_loader.h"
#include "user/target/launch.h"
#include "user/target/target.h"
#include "user/target/usdt_files.h"

#define STREAM_T0 1000000ull
#define MAX_USDT 16

static int on_record(void *ctx, const struct lx_rec *r, size_t size)
{
	/* Answered when peeked at, as the recorder does: nothing for the model. */
	if (r->type == LX_REC_CFI_WANT)
		return 0;
	return stream__add_record(ctx, r, size);
}

/* The unwinder's rows, loaded as the recorder loads them, so that the user stacks recorded are
 * the ones a recording has. */
static struct cfi_loader *cfi;

static int on_peek(void *ctx, const struct lx_rec *r, size_t size)
{
	if (cfi && r->type == LX_REC_CFI_WANT && size >= sizeof(struct lx_cfi_want))
		cfi_loader__want(cfi, (const struct lx_cfi_want *)r);
	if (cfi && r->type == LX_REC_MMAP && size >= sizeof(struct lx_mmap))
		cfi_loader__mapped(cfi, (const struct lx_mmap *)r, false);
	return 0;
}

static int on_lost(void *ctx, uint32_t cpu, uint64_t ts, uint64_t n)
{
	return stream__add_lost(ctx, cpu, ts, n);
}

/* The stack after a record's fixed part: switch, wakeup, fork and sample records (lxtrace.h)
 * carry theirs after 24 bytes. */
static const struct lx_stack *record_stack(const struct lx_rec *r, size_t size)
{
	_Static_assert(sizeof(struct lx_switch) == 24 && sizeof(struct lx_wakeup) == 24 &&
		       sizeof(struct lx_fork) == 24 && sizeof(struct lx_sample) == 24,
		       "records with stacks");
	bool may = r->type == LX_REC_SWITCH || r->type == LX_REC_WAKEUP ||
		   r->type == LX_REC_WAKEUP_NEW || r->type == LX_REC_FORK || r->type == LX_REC_SAMPLE;

	if (!may || size < 24 + sizeof(struct lx_stack))
		return NULL;
	return (const void *)((const char *)r + 24);
}

static void rebase(struct stream *s, uint64_t start)
{
	for (size_t i = 0; i < s->n; i++) {
		struct stream_entry *e = &s->v[i];

		if (e->rec)
			((struct lx_rec *)e->rec)->ts = e->rec->ts - start + STREAM_T0;
		else
			e->ts = e->ts - start + STREAM_T0;
	}
	s->end = s->end - start + STREAM_T0;
	s->start = STREAM_T0;
}

struct ksym_line {
	uint64_t addr;
	size_t order;		/* line number in kallsyms */
	char *text;
	bool keep;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_order(const void *a, const void *b)
{
	const struct ksym_line *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* Marks the lines a lookup of addr finds: the last text symbol at or below it, with every
 * line of that address. v is sorted by address. */
static void mark(struct ksym_line *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	for (size_t i = lo; i-- > 0 && v[i].addr == v[lo - 1].addr;)
		v[i].keep = true;
}

/* The kallsyms lines that the stream's kernel addresses (and each address - 1, as return
 * addresses are looked up) resolve to, in kallsyms order. */
static int save_kallsyms(const struct stream *s, const char *path)
{
	struct ksym_line *v = NULL;
	size_t n = 0, cap = 0, lcap = 0;
	char *line = NULL;
	FILE *in, *out;
	int err = 0;

	in = fopen("/proc/kallsyms", "re");
	if (!in)
		return -errno;
	while (!err && getline(&line, &lcap, in) > 0) {
		char type;

		if (sscanf(line, "%*x %c", &type) != 1 || !strchr("tTwW", type))
			continue;
		if (n == cap) {
			struct ksym_line *nv = realloc(v, (cap = cap ? 2 * cap : 65536) * sizeof(*v));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[n] = (struct ksym_line){ .addr = strtoull(line, NULL, 16), .order = n,
					   .text = strdup(line) };
		err = v[n++].text ? 0 : -ENOMEM;
	}
	free(line);
	fclose(in);
	qsort(v, n, sizeof(*v), cmp_addr);
	for (size_t i = 0; !err && i < s->n; i++) {
		const struct lx_stack *st = s->v[i].rec ? record_stack(s->v[i].rec, s->v[i].size) : NULL;

		for (unsigned k = 0; st && k < st->nkern; k++) {
			mark(v, n, st->pc[k]);
			mark(v, n, st->pc[k] - 1);
		}
	}
	qsort(v, n, sizeof(*v), cmp_order);
	out = err ? NULL : fopen(path, "we");
	if (!err && !out)
		err = -errno;
	for (size_t i = 0; out && i < n; i++)
		if (v[i].keep)
			fputs(v[i].text, out);
	if (out && fclose(out))
		err = -EIO;
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
	return err;
}

/* The threads model__start would create for this target, as its /proc scan finds them now. */
static int save_threads(struct target *t, const char *path)
{
	struct procscan_thread *v = NULL;
	size_t n = 0;
	FILE *f;
	int err = procscan__threads("/proc", &v, &n);

	if (err)
		return err;
	f = fopen(path, "we");
	if (!f) {
		free(v);
		return -errno;
	}
	for (size_t i = 0; i < n; i++)
		if (target__keep(t, &v[i]))
			fprintf(f, "%u %u %c %d %llu %s\n", v[i].pid, v[i].tid, v[i].state, v[i].syscall,
				(unsigned long long)(v[i].tid == v[i].pid ?
							     procscan__resident("/proc", v[i].pid) : 0),
				v[i].comm);
	free(v);
	return fclose(f) ? -EIO : 0;
}

static int new_cfi_loader(struct capture *cap)
{
	struct cfi_loader_opts o = { .sz = sizeof(o) };
	int err = capture__unwind_maps(cap, &o.maps);

	if (err)
		return err;
	cfi = cfi_loader__new(&o);
	return cfi ? 0 : -errno;
}

static void usage(void)
{
	fprintf(stderr, "usage: capture-stream [-F HZ] [--usdt PATH]... PREFIX -- COMMAND [ARGS...]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "usdt", required_argument, NULL, 'u' },
		{ "freq", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	struct stream s = { 0 };
	struct target *t = NULL;
	struct launch *cmd = NULL;
	struct usdt_files *usdt = NULL;
	struct capture *cap = NULL;
	const char *prefix;
	char path[4096];
	unsigned hz = 499;
	int opt, err = 0, status = 0, done = 0;

	while ((opt = getopt_long(argc, argv, "+u:F:", longopts, NULL)) != -1) {
		if (opt == 'F') {
			hz = (unsigned)atoi(optarg);
		} else if (opt == 'u') {
			continue;	/* added below, once the set exists */
		} else {
			usage();
			return 2;
		}
	}
	if (optind + 3 > argc || strcmp(argv[optind + 1], "--")) {
		usage();
		return 2;
	}
	prefix = argv[optind];

	t = target__new_pids();
	cmd = t ? launch__new(argv + optind + 2, true) : NULL;
	usdt = usdt_files__new();
	err = cmd && usdt ? target__add_pid(t, launch__pid(cmd)) : -ENOMEM;
	optind = 1;
	while (!err && (opt = getopt_long(argc, argv, "+u:F:", longopts, NULL)) != -1)
		if (opt == 'u')
			err = usdt_files__add(usdt, optarg);
	if (!err)
		err = usdt_files__add_annotated(usdt, launch__path(cmd));
	if (err)
		goto out;

	cap = capture__new(&(struct capture_opts){
		.sz = sizeof(struct capture_opts),
		.ring_bytes = 16 << 20,
		.syscalls = true,
		.annotations = usdt_files__count(usdt) > 0,
		.self_tgid = (uint32_t)getpid(),
		.sample_hz = hz,
		.stack_kern = true,
		.stack_user = true,
		.on_record = on_record,
		.on_peek = on_peek,
		.on_lost = on_lost,
		.ctx = &s,
		.target_mode = LX_TARGET_PIDS,
	});
	err = cap ? capture__load(cap) : -errno;
	if (!err)
		err = capture__add_target(cap, launch__pid(cmd));
	if (!err)
		err = new_cfi_loader(cap);
	s.ncpus = (uint32_t)libbpf_num_possible_cpus();
	s.start = now_ns();
	if (!err)
		err = capture__attach(cap);
	if (!err)
		err = capture__sample(cap);
	for (size_t i = 0; !err && i < usdt_files__count(usdt); i++)
		err = capture__attach_usdt(cap, -1, usdt_files__path(usdt, i));
	snprintf(path, sizeof(path), "%s.proc", prefix);
	if (!err)
		err = save_threads(t, path);
	if (!err)
		err = launch__release(cmd);
	while (!err && !done) {
		err = capture__poll(cap);
		if (!err) {
			done = launch__wait(cmd, false, &status);
			err = done < 0 ? done : 0;
		}
	}
	s.end = now_ns();
	if (!err)
		err = capture__drain(cap, s.end, UINT64_MAX);
	if (err)
		goto out;
	rebase(&s, s.start);
	snprintf(path, sizeof(path), "%s.stream", prefix);
	err = stream__save(&s, path);
	snprintf(path, sizeof(path), "%s.kallsyms", prefix);
	if (!err)
		err = save_kallsyms(&s, path);
	if (!err)
		fprintf(stderr, "capture-stream: %zu entries from a run that exited %d\n", s.n, status);
out:
	if (err)
		fprintf(stderr, "capture-stream: %s\n", strerror(-err));
	cfi_loader__free(cfi);
	capture__free(cap);
	usdt_files__free(usdt);
	launch__free(cmd);
	target__free(t);
	stream__free(&s);
	return err ? 1 : 0;
}
