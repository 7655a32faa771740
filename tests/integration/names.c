/* names.c - the frames of a real program's blocking stacks, libc's included, against what gdb
 * prints for the same threads: function names without symbol versions, source paths as the
 * line table gives them (docs/symbolize.md, "Symbol versions" and "Source paths"). */
#include <stdlib.h>

#include "tests/integration/itest.h"

#define GDB "/usr/bin/gdb"

TestSuite(names, .fini = itest_fini, .timeout = 240);

/* For every thread, every frame gdb shows, leaf first: "FRAME|lwp|type|pc|func|file|line".
 * A real frame's name is its minimal symbol (`info symbol`, what lxtrace names by: the symbol
 * table's), an inlined one's is its DWARF name; a caller's pc is its return address less one,
 * as lxtrace looks it up. */
static const char gdb_script[] =
	"import gdb\n"
	"for t in gdb.selected_inferior().threads():\n"
	"    t.switch()\n"
	"    f, leaf = gdb.newest_frame(), True\n"
	"    while f is not None:\n"
	"        pc = f.pc() if leaf else f.pc() - 1\n"
	"        name = f.name()\n"
	"        if f.type() == gdb.NORMAL_FRAME:\n"
	"            s = gdb.execute('info symbol %#x' % pc, to_string=True)\n"
	"            name = s.split(' + ')[0].split(' in section ')[0]\n"
	"        sal = f.find_sal()\n"
	"        file = sal.symtab.filename if sal.symtab else ''\n"
	"        print('FRAME|%d|%d|%#x|%s|%s|%d' %\n"
	"              (t.ptid[1], f.type(), pc, name, file, sal.line))\n"
	"        leaf, f = False, f.older()\n";

struct gdb_frame {
	int type;
	unsigned long long pc, line;
	char func[256], file[512];
};

/* gdb's frames of thread lwp, leaf first, without the tail-call frames it infers from DWARF
 * call-site records (nothing on the stack is left of them for an unwinder to find). */
static size_t gdb_frames(const char *out, pid_t lwp, struct gdb_frame *f, size_t max)
{
	size_t n = 0;

	for (const char *l = strstr(out, "FRAME|"); l && n < max; l = strstr(l + 1, "FRAME|")) {
		int tid, len = 0;

		/* gdb.TAILCALL_FRAME is 3. */
		if (sscanf(l, "FRAME|%d|%d|%llx|%255[^|]|%511[^|]|%llu%n", &tid, &f[n].type,
			   &f[n].pc, f[n].func, f[n].file, &f[n].line, &len) == 6 && len &&
		    tid == lwp && f[n].type != 3)
			n++;
	}
	return n;
}

/* Whether lxtrace's file is gdb's: the same, or gdb's relative name under an absolute
 * compilation directory, which lxtrace joins (a program built from relative source names). */
static bool same_file(const char *ours, const char *gdbs)
{
	size_t a = strlen(ours), b = strlen(gdbs);

	if (!strcmp(ours, gdbs))
		return true;
	return gdbs[0] != '/' && gdbs[0] != '.' && ours[0] == '/' && a > b &&
	       ours[a - b - 1] == '/' && !strcmp(ours + a - b, gdbs);
}

/* The last blocking stack of tid with gdb's leaf pc, and where that frame is in it. */
static const struct gt_stack *last_stack(uint32_t tid, uint64_t leaf_pc, size_t *at)
{
	uint64_t mask = TQ_BIT(GT_EV_GO_BLOCK) | TQ_BIT(GT_EV_GO_BLOCK_SYNC) |
			TQ_BIT(GT_EV_GO_BLOCK_COND) | TQ_BIT(GT_EV_GO_BLOCK_SELECT) |
			TQ_BIT(GT_EV_GO_SYSCALL);
	const struct gt_stack *last = NULL;
	const struct gt_event *e;
	size_t i = 0;

	while ((e = tq_next(it.trace, &i, mask, tid))) {
		i++;
		for (size_t j = 0; e->stack && j < e->stack->n; j++)
			if (e->stack->frames[j].pc == leaf_pc) {
				last = e->stack;
				*at = j;
			}
	}
	return last;
}

/* Compares thread lwp's last blocking stack with gdb's frames of it, frame by frame: no name
 * keeps a symbol version, and a frame on gdb's line is in gdb's file. Two choices of gdb's
 * are not lxtrace's and are only counted in *differ: among aliases of one address, which
 * minimal symbol names it (gdb: fgets, lxtrace the global _IO_fgets over the weak fgets), and
 * among line table rows of one address, which row gives the line (gdb prefers is_stmt rows:
 * ./libio/libioP.h:947 where libdw's row says ./libio/fileops.c:516). Sets *seen when a frame
 * is func, or is at file:line as gdb has it. */
static void like_gdb(pid_t lwp, const char *bt, const char *func, const char *file,
		     bool *seen, size_t *differ)
{
	static struct gdb_frame g[128];
	const struct gt_stack *s;
	size_t n = gdb_frames(bt, lwp, g, 128), at = 0, k;

	cr_assert_geq(n, 3, "gdb showed %zu frames of %d", n, (int)lwp);
	s = last_stack((uint32_t)lwp, g[0].pc, &at);
	if (!s)
		tq_dump(it.trace, (uint32_t)lwp, 60, stderr);
	cr_assert(s, "no blocking stack of %d with gdb's leaf %#llx", (int)lwp, g[0].pc);
	for (k = 0; k < n && at + k < s->n; k++) {
		const struct gt_rframe *f = &s->frames[at + k];
		bool on_line = f->line == g[k].line;

		cr_log_info("%d #%zu lxtrace %s %s:%llu | gdb %s %s:%llu", (int)lwp, k, f->func,
			    f->file, (unsigned long long)f->line, g[k].func, g[k].file, g[k].line);
		cr_expect_null(strchr(f->func, '@'), "%d #%zu: %s", (int)lwp, k, f->func);
		cr_expect(!on_line || same_file(f->file, g[k].file), "%d #%zu %s: lxtrace %s:%llu, "
			  "gdb %s:%llu", (int)lwp, k, g[k].func, f->file,
			  (unsigned long long)f->line, g[k].file, g[k].line);
		*differ += strcmp(f->func, g[k].func) != 0 || !on_line;
		*seen |= (func && !strcmp(f->func, func) && !strcmp(g[k].func, func)) ||
			 (file && on_line && !strcmp(f->file, file) && !strcmp(g[k].file, file));
	}
	cr_expect_eq(k, n, "%d: lxtrace's stack has %zu of gdb's %zu frames", (int)lwp, k, n);
}

/* tgroup's waiter blocks in pthread_cond_wait, its main thread in fgets on a pipe (through
 * _IO_getline_info); gdb attaches to both once lxtrace recorded their blocking stacks. */
Test(names, blocking_frames_are_named_as_gdb_names_them)
{
	char script[] = "/tmp/lxtrace-names-XXXXXX.py", pidarg[32];
	bool cond_wait = false, getline_file = false;
	size_t differ = 0;
	struct workload *wl;
	char *bt = NULL;
	pid_t pid, waiter = 0;
	int fd, rc;

	if (access(GDB, X_OK))
		cr_skip_test("needs %s (scripts/deps.sh installs it)", GDB);
	fd = mkstemps(script, 3);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, gdb_script, strlen(gdb_script)), (ssize_t)strlen(gdb_script));
	close(fd);
	itest_start(NULL);
	wl = workload__start("tgroup", (const char *[]){ "1", "0", NULL });
	cr_assert(wl, "cannot start tgroup: %s", strerror(errno));
	pid = workload__pid(wl);
	usleep(1500 * 1000);	/* both threads blocked, their stacks recorded */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	rc = run_capture((const char *[]){ GDB, "-batch", "-nx", "-p", pidarg, "-x", script, NULL },
			 60, &bt, NULL);
	unlink(script);
	workload__send(wl, "go\n");
	workload__finish(wl, 10);
	waiter = workload__tid(wl, "early");
	workload__free(wl);
	itest_stop(SIGINT, 0);
	itest_load();
	cr_assert(rc == 0 && bt && strstr(bt, "FRAME|"), "gdb failed (%d):\n%s", rc, bt ? bt : "");
	cr_assert_gt(waiter, 0, "tgroup reported no waiter thread");
	if (!strstr(bt, "./libio/"))
		cr_skip_test("gdb shows no libc source (libc6-dbg, scripts/deps.sh): nothing to "
			     "match");
	like_gdb(waiter, bt, "pthread_cond_wait", NULL, &cond_wait, &differ);
	like_gdb(pid, bt, NULL, "./libio/iogetline.c", &getline_file, &differ);
	cr_expect(cond_wait, "the waiter has no frame that both name pthread_cond_wait");
	cr_expect(getline_file, "main has no frame that both put in ./libio/iogetline.c");
	cr_log_info("%zu frames named or lined otherwise than gdb does", differ);
	free(bt);
}
