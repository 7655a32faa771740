/* test_model_util.c - synthetic record streams for the model tests (see test_model_util.h). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go123/writer.h"
#include "tests/lib/goparse.h"
#include "tests/unit/test_model_util.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "cannot create %s", path);
	fputs(text, f);
	fclose(f);
}

char *mt_proc_new(void)
{
	char *root = strdup("/tmp/lxtrace-proc-XXXXXX");

	cr_assert_not_null(mkdtemp(root));
	return root;
}

void mt_proc_thread(const char *root, uint32_t pid, uint32_t tid, const char *comm, char state,
		    int syscall)
{
	char path[512], text[512];

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task/%u", root, pid, tid);
	cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s", path);
	snprintf(path, sizeof(path), "%s/%u/task/%u/stat", root, pid, tid);
	snprintf(text, sizeof(text), "%u (%s) %c 1 %u %u 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0\n",
		 tid, comm, state, pid, pid);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/%u/task/%u/syscall", root, pid, tid);
	if (syscall >= 0)
		snprintf(text, sizeof(text), "%d 0x3 0x7ffd 0x10 0x0 0x0 0x0 0x7ffd0 0x7f00\n", syscall);
	else
		snprintf(text, sizeof(text), "running\n");
	write_file(path, text);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

void mt_proc_free(char *root)
{
	if (!root)
		return;
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
}

void mt_open(struct mt *t, uint32_t ncpus, enum model_syscalls mode, const char *proc_root,
	     uint64_t ts)
{
	mt_open_with(t, ncpus, mode, proc_root, ts, NULL, 0);
}

void mt_open_with(struct mt *t, uint32_t ncpus, enum model_syscalls mode, const char *proc_root,
		  uint64_t ts, const struct model_opts *base, size_t table_budget)
{
	char *empty = NULL;
	struct model_opts mo = { .sz = sizeof(mo) };

	if (base)
		mo = *base;
	mo.ncpus = ncpus;
	mo.syscalls = mode;

	memset(t, 0, sizeof(*t));
	strcpy(t->path, "/tmp/lxtrace-model-XXXXXX");
	t->fd = mkstemp(t->path);
	cr_assert_geq(t->fd, 0);
	if (base && base->writer2) {
		/* The go1.23 encoder: the caller's flag, a writer of ours. */
		t->w2 = go123_writer__new(&(struct go123_writer_opts){
			.sz = sizeof(struct go123_writer_opts), .fd = t->fd, .nprocs = ncpus + 1,
			.frequency = 1000000000 });
		cr_assert_not_null(t->w2);
		mo.writer2 = t->w2;
	} else {
		t->w = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts),
								.fd = t->fd, .nprocs = ncpus + 1,
								.frequency = 1000000000,
								.table_budget = table_budget });
		cr_assert_not_null(t->w);
		mo.writer = t->w;
	}
	if (!proc_root)
		proc_root = empty = mt_proc_new();
	mo.proc_root = proc_root;
	t->m = model__new(&mo);
	cr_assert_not_null(t->m);
	cr_assert_eq(model__start(t->m, ts), 0);
	mt_proc_free(empty);
}

static void feed(struct mt *t, const void *r, size_t size)
{
	int err = model__record(t->m, r, size);

	cr_assert_eq(err, 0, "model__record: %s", strerror(-err));
}

void mt_switch(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t prev, uint32_t next,
	       uint8_t prev_state, int16_t prev_syscall)
{
	struct lx_switch s = {
		.h = { .ts = ts, .tid = prev, .cpu = cpu, .type = LX_REC_SWITCH },
		.next_tid = next, .prev_state = prev_state, .prev_syscall = prev_syscall,
	};

	feed(t, &s, sizeof(s));
}

void mt_switch_to(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t prev, uint8_t prev_state,
		  int16_t prev_syscall, uint8_t kind)
{
	struct lx_switch s = {
		.h = { .ts = ts, .tid = prev, .cpu = cpu, .type = LX_REC_SWITCH, .flags = kind },
		.prev_state = prev_state, .prev_syscall = prev_syscall,
	};

	feed(t, &s, sizeof(s));
}

void mt_occupant(struct mt *t, uint64_t ts, uint16_t cpu, uint8_t kind, uint32_t pid,
		 const char *comm, bool name_only)
{
	struct lx_occupant o = {
		.h = { .ts = ts, .cpu = cpu, .type = LX_REC_OCCUPANT,
		       .flags = name_only ? LX_OCC_NAME_ONLY : 0 },
		.pid = pid, .kind = kind,
	};

	snprintf(o.comm, sizeof(o.comm), "%s", comm);
	feed(t, &o, sizeof(o));
}

static void wake(struct mt *t, uint8_t type, uint64_t ts, uint16_t cpu, uint32_t tid)
{
	struct lx_wakeup w = { .h = { .ts = ts, .tid = tid, .cpu = cpu, .type = type }, .target_cpu = cpu };

	feed(t, &w, sizeof(w));
}

void mt_wakeup(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid)
{
	wake(t, LX_REC_WAKEUP, ts, cpu, tid);
}

void mt_wakeup_new(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid)
{
	wake(t, LX_REC_WAKEUP_NEW, ts, cpu, tid);
}

void mt_enqueue(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid)
{
	struct lx_rec r = { .ts = ts, .tid = tid, .cpu = cpu, .type = LX_REC_ENQUEUE };

	feed(t, &r, sizeof(r));
}

void mt_fork(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t parent, uint32_t child, uint32_t child_pid)
{
	struct lx_fork f = { .h = { .ts = ts, .tid = child, .cpu = cpu, .type = LX_REC_FORK },
			     .parent_tid = parent, .child_pid = child_pid };

	feed(t, &f, sizeof(f));
}

void mt_exec(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t pid, const char *comm)
{
	mt_exec_from(t, ts, cpu, tid, tid, pid, comm);
}

void mt_exec_from(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t old_tid,
		  uint32_t pid, const char *comm)
{
	struct lx_exec e = { .h = { .ts = ts, .tid = tid, .cpu = cpu, .type = LX_REC_EXEC }, .pid = pid,
			     .old_tid = old_tid };

	memcpy(e.comm, comm, strnlen(comm, sizeof(e.comm)));
	feed(t, &e, sizeof(e));
}

void mt_exit(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid)
{
	struct lx_rec r = { .ts = ts, .tid = tid, .cpu = cpu, .type = LX_REC_EXIT };

	feed(t, &r, sizeof(r));
}

void mt_syscall(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, int nr)
{
	struct lx_syscall s = { .h = { .ts = ts, .tid = tid, .cpu = cpu, .type = LX_REC_SYSCALL }, .nr = nr };

	feed(t, &s, sizeof(s));
}

void mt_sysret(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid)
{
	struct lx_syscall s = { .h = { .ts = ts, .tid = tid, .cpu = cpu, .type = LX_REC_SYSCALL_EXIT },
				.nr = -1 };

	feed(t, &s, sizeof(s));
}

void mt_user(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t pid, uint8_t type,
	     uint64_t task, uint64_t parent, const char *name, const char *msg, uint8_t flags)
{
	struct lx_user_log l = { .u = {
		.h = { .ts = ts, .tid = tid, .cpu = cpu, .type = type },
		.task = task, .parent = parent, .pid = pid, .flags = flags,
	} };

	snprintf(l.u.name, sizeof(l.u.name), "%s", name ? name : "");
	snprintf(l.msg, sizeof(l.msg), "%s", msg ? msg : "");
	feed(t, &l, type == LX_REC_LOG || type == LX_REC_TRIGGER ? sizeof(l) : sizeof(l.u));
}

void mt_finish(struct mt *t, uint64_t ts)
{
	char why[1200], err[256];
	int rc = model__finish(t->m, ts);

	cr_assert_eq(rc, 0, "model__finish: %s", strerror(-rc));
	model__stats(t->m, &t->st);
	if (t->w2) {
		struct goparse_result r;
		char *text = NULL;

		cr_assert_eq(goparse_123_text(t->path, 1, &r, &text), 0);
		free(text);
		cr_assert(r.ok, "go 1.23 -d=1 %s: %s", t->path, r.error);
		return;
	}
	cr_assert(goparse_both_ok(t->path, why, sizeof(why)), "%s", why);
	rc = gt_trace__load(t->path, &t->trace, err, sizeof(err));
	cr_assert_eq(rc, 0, "decoder: %s", err);
}

void mt_close(struct mt *t, bool keep)
{
	model__free(t->m);
	gt_writer__free(t->w);
	go123_writer__free(t->w2);
	gt_trace__free(t->trace);
	if (t->fd >= 0)
		close(t->fd);
	if (keep || getenv("LXTRACE_TEST_KEEP"))
		fprintf(stderr, "kept %s\n", t->path);
	else
		unlink(t->path);
}

uint64_t mt_repairs(const struct model_stats *st)
{
	uint64_t n = 0;

	for (int i = 0; i < MODEL_REPAIR_COUNT; i++)
		n += st->repairs[i];
	return n;
}

size_t mt_count(const struct gt_trace *tr, enum gt_type ty)
{
	const struct gt_event *ev = gt_trace__events(tr);
	size_t n = 0;

	for (size_t i = 0; i < gt_trace__nevents(tr); i++)
		n += ev[i].type == ty;
	return n;
}
