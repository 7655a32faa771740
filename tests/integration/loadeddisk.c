/* loadeddisk.c - issue 30: a whole-machine recording on a busy machine (CPU hogs beyond the
 * cores, direct-IO reads of a big file, a cold page cache) while distinct binaries of root's
 * local disk run, as in a build. Opening one of them there took longer than the file worker's
 * wait (lib/file_worker.h), and before, that refused it and every later binary of the disk for
 * the rest of the recording ("read stalled"): their samples read "[unknown] FILE+0x...". A slow
 * disk is not a stalled one: a late binary is asked for again and the stacks in it wait for it,
 * so its samples are named, and the summary names none of root's local files.
 *
 * The binaries are copies of hotspin under /var/tmp (a disk, where /tmp may be memory), each a
 * file of its own, run one after the other by a recorded shell that drops the page cache, the
 * dentries and the inodes before each (drop_caches). Every helper is killed in the teardown.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"

#define COPIES 80
#define HOGS_MAX 8
/* The big file the direct-IO reader reads: the disk's queue stays busy for the recording. */
#define BIG_MIB "512"

static char dir[64];
static struct workload *hogs[HOGS_MAX], *reader;

static void disk_fini(void)
{
	char cmd[128];

	itest_fini();
	for (size_t i = 0; i < HOGS_MAX; i++) {
		workload__free(hogs[i]);
		hogs[i] = NULL;
	}
	workload__free(reader);
	reader = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[0] && system(cmd))
		fprintf(stderr, "loadeddisk: cannot remove %s\n", dir);
	dir[0] = '\0';
}

TestSuite(loadeddisk, .fini = disk_fini, .timeout = 420);

/* The busy machine: four spinning hogs a CPU, and dd reading the big file with
 * O_DIRECT. */
static void load_machine(void)
{
	char big[96], in[112];
	const char *dd[] = { "/bin/dd", "if=/dev/zero", NULL, "bs=1M", "count=" BIG_MIB,
			     "conv=fsync", "status=none", NULL };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	snprintf(big, sizeof(big), "%s/big", dir);
	snprintf(in, sizeof(in), "of=%s", big);
	dd[2] = in;
	cr_assert_eq(run_capture(dd, 120, NULL, NULL), 0, "cannot write %s", big);
	snprintf(in, sizeof(in), "if=%s", big);
	reader = workload__start("/bin/dd", (const char *[]){ in, "of=/dev/null", "bs=1M",
							    "iflag=direct", "status=none", NULL });
	cr_assert(reader, "cannot start dd: %s", strerror(errno));
	for (long i = 0; i < 4 * ncpu && i < HOGS_MAX; i++) {
		hogs[i] = workload__start("hotspin", (const char *[]){ "chain", "300000", NULL });
		cr_assert(hogs[i], "cannot start a hog: %s", strerror(errno));
	}
}

/* Whether a frame of s is the copies' own code, named. */
static bool named(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strncmp(s->frames[i].func, "hot_", 4))
			return true;
	return false;
}

/* Whether a frame of s is an address of a copy that was not named. */
static bool unnamed(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strncmp(s->frames[i].func, "[unknown] hs-", 13))
			return true;
	return false;
}

Test(loadeddisk, a_slow_disk_leaves_no_binary_unnamed)
{
	const struct gt_event *ev;
	size_t n_named = 0, n_unnamed = 0;
	const char *err, *line;
	char path[96], script[256];

	itest_require_root();
	snprintf(dir, sizeof(dir), "/var/tmp/lxtrace-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	for (int i = 0; i < COPIES; i++) {
		snprintf(path, sizeof(path), "%s/hs-%02d", dir, i);
		cr_assert_eq(run_capture((const char *[]){ "/bin/cp", record__workload_path("hotspin"),
							   path, NULL }, 10, NULL, NULL), 0,
			     "cannot copy hotspin to %s", path);
	}
	load_machine();
	/* Each copy from a cold cache, short-lived: the recorder often opens it once it is gone,
	 * through its path, whose directories are read from the disk again. */
	snprintf(script, sizeof(script), "for f in '%s'/hs-*; do sync; "
		 "echo 3 > /proc/sys/vm/drop_caches; \"$f\" chain 20 > /dev/null || exit 1; done",
		 dir);
	itest_start((const char *[]){ "-F", "999", "--", "/bin/sh", "-c", script, NULL });
	/* The command ends the recording: its 80 syncs and cold starts beside the hogs and dd
	 * took more than a minute in the load stage (make test-load), with its load besides, and
	 * the whole test more than the suite's 300 s once. */
	itest_stop_within(0, 0, 240);
	itest_load();
	err = recorder__stderr(it.rec);

	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *proc;

		if (ev[i].type != GT_EV_CPU_SAMPLE)
			continue;
		proc = tq_process(ev[i].stack);
		if (!proc || strncmp(proc, "hs-", 3))
			continue;
		n_named += named(ev[i].stack);
		if (!unnamed(ev[i].stack))
			continue;
		/* The first few, for a failure: where the names are missing. */
		if (n_unnamed++ < 3)
			for (size_t j = 0; j < ev[i].stack->n; j++)
				cr_log_info("loadeddisk: unnamed sample at %llu: %s %s:%llu",
					    (unsigned long long)ev[i].ts, ev[i].stack->frames[j].func,
					    ev[i].stack->frames[j].file,
					    (unsigned long long)ev[i].stack->frames[j].line);
	}
	cr_log_info("loadeddisk: %zu samples in the copies named, %zu not", n_named, n_unnamed);
	cr_assert_geq(n_named + n_unnamed, 50, "too few samples in the copies (%zu):\n%s",
		      n_named + n_unnamed, err);
	cr_expect_geq(n_named * 100, (n_named + n_unnamed) * 95,
		      "%zu of %zu samples in the copies unnamed:\n%s", n_unnamed,
		      n_named + n_unnamed, err);
	/* Root's local binaries are not refused, nor is their disk said to stall. */
	for (line = err; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t len = strcspn(line, "\n");
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
			 line);
		cr_expect(!strstr(buf, "refused files") && !strstr(buf, "read stalled"),
			  "the summary refuses files or says a read stalled: %s\n%s", buf, err);
	}
}
