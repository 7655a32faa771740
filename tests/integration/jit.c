/* jit.c - JIT code named from perf maps as perf names it: a JVM that writes its map only as it
 * exits (-XX:+DumpPerfMapAtExit, "0x" numbers), after every stack of its code was written, and
 * one that writes it when jcmd asks, halfway. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/integration/itest.h"
#include "user/flight/flight.h"

#define JAVA "/usr/bin/java"
#define JAVAC "/usr/bin/javac"
#define JCMD "/usr/bin/jcmd"
#define HOT "long HotJit.hotLeaf(long)"
#define MAIN "void HotJit.main(java.lang.String[])"
#define MAX_ENTRIES 65536

static char dir[32];

/* The class's directory goes even when an assertion failed. */
static void jit_fini(void)
{
	char path[64];

	if (dir[0]) {
		snprintf(path, sizeof(path), "%s/HotJit.java", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/HotJit.class", dir);
		unlink(path);
		rmdir(dir);
		dir[0] = '\0';
	}
	itest_fini();
}

TestSuite(jit, .fini = jit_fini, .timeout = 240);

/* A loop the JIT compiles: most of the samples are in hotLeaf's compiled code, or in main's,
 * where it is inlined. A count of calls, not a time: on a loaded machine it still spins long
 * enough on a CPU for its code to be compiled and sampled. */
static const char source[] =
	"public class HotJit {\n"
	"    static long hotLeaf(long x) {\n"
	"        for (int i = 0; i < 1000; i++) { x ^= x << 13; x ^= x >>> 7; x ^= x << 17; }\n"
	"        return x;\n"
	"    }\n"
	"    public static void main(String[] a) {\n"
	"        long x = 1;\n"
	"        for (long n = Long.parseLong(a[0]); n > 0; n--)\n"
	"            x = hotLeaf(x);\n"
	"        System.out.println(x == 42 ? \"\" : \"spun\");\n"
	"    }\n"
	"}\n";

static struct { unsigned long start, size; } entries[MAX_ENTRIES];
static size_t nentries;

/* The map's entries, as perf reads them (strtoul takes the 0x). */
static void read_map(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	cr_assert_not_null(f, "the JVM wrote no %s", path);
	while (nentries < MAX_ENTRIES && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %lx", &entries[nentries].start, &entries[nentries].size) == 2)
			nentries++;
	fclose(f);
}

static bool in_map(unsigned long addr)
{
	for (size_t i = 0; i < nentries; i++)
		if (addr - entries[i].start < entries[i].size)
			return true;
	return false;
}

/* The pid of the JVM: the process frame of its samples, "COMM (pid PID)" under "java". */
static int jvm_pid(const struct gt_stack *s)
{
	const char *proc = tq_process(s), *at;
	int pid = 0;

	if (!proc || strcmp(tq_outermost(s), "java") || !(at = strstr(proc, " (pid ")))
		return 0;
	return sscanf(at, " (pid %d)", &pid) == 1 ? pid : 0;
}

/* Writes HotJit.java into a new directory, dir, and compiles it there. */
static void compile(void)
{
	char src[64];
	int fd;

	if (access(JAVA, X_OK) || access(JAVAC, X_OK) || access(JCMD, X_OK))
		cr_skip_test("skipped: no JDK (" JAVA ", " JAVAC ", " JCMD "; Debian: "
			     "openjdk-17-jdk-headless, which scripts/deps.sh installs)");
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-jit-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/HotJit.java", dir);
	fd = open(src, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, source, sizeof(source) - 1), (ssize_t)sizeof(source) - 1);
	close(fd);
	cr_assert_eq(run_capture((const char *[]){ JAVAC, "-d", dir, src, NULL }, 120, NULL, NULL),
		     0, "javac %s failed", src);
}

/* The output of `lxtrace ARGS... FILE`, which must succeed; the caller frees. */
static char *tool(const char *file, const char *const *args)
{
	const char *argv[8] = { record__build_path("lxtrace") };
	char *out = NULL, *err = NULL;
	size_t n = 1;
	int rc;

	for (; *args && n < 6; args++)
		argv[n++] = *args;
	argv[n] = file;
	rc = run_capture(argv, 120, &out, &err);
	cr_assert_eq(rc, 0, "lxtrace %s failed (%d): %s", argv[1], rc, err ? err : "");
	free(err);
	cr_assert_not_null(out);
	return out;
}

/* The offline tools, which read the file in one pass, show the names the map gave at the
 * stop for every sample, as the viewers do: `pprof --folded` and `dump` count as many samples
 * in hotLeaf and main as the whole file's definitions give (hot, in_main), and `report --cpu`
 * names them. */
static void expect_tools_name(const char *file, size_t hot, size_t in_main)
{
	size_t f_hot = 0, f_main = 0, d_hot = 0, d_main = 0;
	char *text = tool(file, (const char *[]){ "pprof", "--cpu", "--folded", NULL }), *line,
	     *save;
	bool sample = false;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *leaf = strrchr(line, ';'), *value = strrchr(line, ' ');

		if (!leaf || !value || value < leaf)
			continue;
		*value = '\0';
		f_hot += !strcmp(leaf + 1, HOT) ? strtoul(value + 1, NULL, 10) : 0;
		f_main += !strcmp(leaf + 1, MAIN) ? strtoul(value + 1, NULL, 10) : 0;
	}
	free(text);
	text = tool(file, (const char *[]){ "dump", NULL });
	/* An event's line, then its frames indented, the leaf first: "    FUNC FILE:LINE pc=". */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool frame = !strncmp(line, "    ", 4);

		if (frame && sample) {
			d_hot += !strncmp(line + 4, HOT " /tmp/perf-", strlen(HOT) + 11);
			d_main += !strncmp(line + 4, MAIN " /tmp/perf-", strlen(MAIN) + 11);
		}
		sample = !frame && strstr(line, " CPUSample ");
	}
	free(text);
	cr_log_info("jit: pprof --folded: %zu in %s, %zu in %s; dump: %zu and %zu (the whole "
		    "file's definitions: %zu and %zu)", f_hot, HOT, f_main, MAIN, d_hot, d_main, hot,
		    in_main);
	cr_expect_eq(f_hot, hot, "pprof --folded: %zu samples in %s, the file's stacks %zu", f_hot,
		     HOT, hot);
	cr_expect_eq(f_main, in_main, "pprof --folded: %zu samples in %s, the file's stacks %zu",
		     f_main, MAIN, in_main);
	cr_expect_eq(d_hot, hot, "dump: %zu samples in %s, the file's stacks %zu", d_hot, HOT, hot);
	cr_expect_eq(d_main, in_main, "dump: %zu samples in %s, the file's stacks %zu", d_main,
		     MAIN, in_main);
	text = tool(file, (const char *[]){ "report", "--cpu", NULL });
	cr_expect(strstr(text, "HotJit.hotLeaf") || strstr(text, "HotJit.main"), "report --cpu "
		  "names neither hotLeaf nor main:\n%s", text);
	free(text);
}

/* The JVM's samples in it.trace, loaded from file, whose leaf its map holds (those perf names
 * from it): at least 95% named from it, most in hotLeaf or in main, where it is inlined; the
 * offline tools show them named too. Removes the map. */
static void expect_named(const char *file)
{
	size_t samples = 0, named = 0, unnamed = 0, hot = 0, in_main = 0;
	const struct gt_event *ev = gt_trace__events(it.trace);
	char map[64];
	int pid = 0;

	for (size_t i = 0; i < gt_trace__nevents(it.trace) && !pid; i++)
		if (ev[i].type == GT_EV_CPU_SAMPLE)
			pid = jvm_pid(ev[i].stack);
	cr_assert_gt(pid, 0, "no sample of the JVM");
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	read_map(map);
	unlink(map);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const struct gt_stack *s = ev[i].stack;
		unsigned long addr;

		if (ev[i].type != GT_EV_CPU_SAMPLE || jvm_pid(s) != pid)
			continue;
		samples++;
		if (!strcmp(s->frames[0].file, map)) {
			named++;
			hot += !strcmp(s->frames[0].func, HOT);
			in_main += !strcmp(s->frames[0].func, MAIN);
		} else if (sscanf(s->frames[0].func, "[unknown] 0x%lx", &addr) == 1 && in_map(addr)) {
			if (unnamed++ < 3)
				cr_log_info("jit: unnamed leaf %s", s->frames[0].func);
		}
	}
	cr_log_info("jit: %zu samples of the JVM, %zu with the leaf in its map: %zu named (%zu in "
		    "%s, %zu in %s, where it is inlined), %zu not", samples, named + unnamed, named,
		    hot, HOT, in_main, MAIN, unnamed);
	cr_assert_geq(named + unnamed, 100, "only %zu of %zu samples in the JVM's JIT code:\n%s",
		      named + unnamed, samples, recorder__stderr(it.rec));
	cr_assert_geq(named * 100, (named + unnamed) * 95, "%zu of the %zu samples perf names from "
		      "the map are named:\n%s", named, named + unnamed, recorder__stderr(it.rec));
	/* perf: 97% of them in the two, the rest in the interpreter and stubs. */
	cr_assert_geq((hot + in_main) * 2, named, "only %zu of %zu named samples in %s or %s",
		      hot + in_main, named, HOT, MAIN);
	cr_assert(strstr(recorder__stderr(it.rec), "JIT code:"), "the summary does not count "
		  "the stacks named at the end:\n%s", recorder__stderr(it.rec));
	expect_tools_name(file, hot, in_main);
}

Test(jit, jvm_code_named_from_the_map_it_writes_at_exit)
{
	compile();
	itest_start((const char *[]){ "-F", "999", "--", JAVA, "-XX:+UnlockDiagnosticVMOptions",
				      "-XX:+DumpPerfMapAtExit", "-cp", dir, "HotJit", "2000000", NULL });
	itest_stop(0, 0);
	itest_load();
	expect_named(recorder__path(it.rec));
}

/* The go1.23 file, which Go 1.23's parser accepts: at least 95% of the JVM's samples whose leaf
 * its map holds are named, by `pprof --folded` (every sample's stack, leaf last). Removes the
 * map. */
static void expect_go123_named(const char *file)
{
	size_t named = 0, unnamed = 0;
	char *text, *line, *save, map[64];
	struct goparse_result go;
	int pid = 0;

	cr_assert_eq(goparse_123(file, &go), 0, "go 1.23 could not run");
	cr_assert(go.ok, "go 1.23 trace -d=1 refuses %s: %s", file, go.error);
	text = tool(file, (const char *[]){ "pprof", "--cpu", "--folded", NULL });
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *leaf = strrchr(line, ';'), *value = strrchr(line, ' ');
		unsigned long addr;
		int p;

		if (!leaf || !value || value < leaf || sscanf(line, "java;java (pid %d)", &p) != 1)
			continue;
		if (!pid) {
			pid = p;
			snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
			read_map(map);
			unlink(map);
		}
		*value = '\0';
		if (!strcmp(leaf + 1, HOT) || !strcmp(leaf + 1, MAIN))
			named += strtoul(value + 1, NULL, 10);
		else if (sscanf(leaf + 1, "[unknown] 0x%lx", &addr) == 1 && in_map(addr))
			unnamed += strtoul(value + 1, NULL, 10);
	}
	free(text);
	cr_log_info("jit: go1.23: %s: %zu samples in %s or %s, %zu in the map unnamed", file,
		    named, HOT, MAIN, unnamed);
	cr_assert_gt(pid, 0, "no sample of the JVM");
	cr_assert_geq(named + unnamed, 100, "only %zu samples in the JVM's JIT code",
		      named + unnamed);
	cr_expect_geq(named * 100, (named + unnamed) * 95, "%zu of the %zu samples in the map are "
		      "named", named, named + unnamed);
}

/* A go1.23 file, whose generations' stack tables are in the file for good before the map is
 * written: the recorder copies the file with the stacks named at the end (format/go123/restack.h),
 * which Go 1.23's parser accepts (itest_stop), and the tools name at least 95% of the JVM's
 * samples whose leaf the map holds, by `pprof --folded` (every sample's stack, leaf last). */
Test(jit, jvm_code_named_in_a_go123_file_from_the_map_it_writes_at_exit)
{
	compile();
	itest_start((const char *[]){ "--format=go1.23", "-F", "999", "--", JAVA,
				      "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
				      "-cp", dir, "HotJit", "2000000", NULL });
	itest_stop(0, 0);
	cr_assert(strstr(recorder__stderr(it.rec), "written by a copy of the go1.23 file"),
		  "the summary does not say the file was copied with the names:\n%s",
		  recorder__stderr(it.rec));
	expect_go123_named(recorder__path(it.rec));
}

/* The pid of the JVM whose command line holds the argument arg (not the recorder's, which holds
 * it too), 0 when none. */
static pid_t jvm_with_arg(const char *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pid = 0;

	cr_assert_not_null(d);
	while (!pid && (e = readdir(d))) {
		char path[300], cmd[4096];
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, cmd, sizeof(cmd) - 1);
		close(fd);
		cmd[n > 0 ? n : 0] = '\0';
		for (ssize_t i = 0; i < n && !strcmp(cmd, JAVA); i += (ssize_t)strlen(cmd + i) + 1)
			if (!strcmp(cmd + i, arg))
				pid = atoi(e->d_name);
	}
	closedir(d);
	return pid;
}

/* CPU seconds process pid has run, from /proc/PID/stat (utime + stime); -1 when gone. */
static double cpu_seconds(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Asks the JVM running HotJit from dir for its map (jcmd PID Compiler.perfmap) once it has run
 * 2 s of CPU, about a third of its work: hotLeaf and main are compiled by then (a count of CPU
 * time, so that a loaded machine changes nothing). */
static void jcmd_perfmap_at_2s(void)
{
	char pidstr[16];
	pid_t pid = 0;
	double cpu = -1;
	int rc;

	for (int i = 0; i < 600 && !pid; i++, usleep(100 * 1000))
		pid = jvm_with_arg(dir);
	cr_assert_gt(pid, 0, "no JVM running HotJit from %s", dir);
	for (int i = 0; i < 1800 && (cpu = cpu_seconds(pid)) >= 0 && cpu < 2; i++)
		usleep(100 * 1000);
	cr_assert_geq(cpu, 0, "the JVM ended before 2 s of CPU");
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	rc = run_capture((const char *[]){ JCMD, pidstr, "Compiler.perfmap", NULL }, 60, NULL, NULL);
	cr_assert_eq(rc, 0, "jcmd %d Compiler.perfmap failed (%d)", (int)pid, rc);
}

/* The map written on request while the JVM runs, once its loop is compiled: the stacks written
 * before are named at the end, those after as they come. */
Test(jit, jvm_code_named_from_the_map_jcmd_asks_for)
{
	compile();
	itest_start((const char *[]){ "-F", "999", "--", JAVA, "-cp", dir, "HotJit", "3000000",
				      NULL });
	jcmd_perfmap_at_2s();
	itest_stop(0, 0);
	itest_load();
	expect_named(recorder__path(it.rec));
}

/* A flight recorder's go1.23 file, triggered by SIGUSR1 after jcmd wrote the map: the stacks
 * written before the map, unnamed then, are named in the file from the map as it stands when
 * the file is written (a copy, format/go123/restack.h), which both parsers accept. */
Test(jit, jvm_code_named_in_a_flight_window_from_the_map_jcmd_asks_for)
{
	char window[4096];
	struct stat st;

	compile();
	itest_start((const char *[]){ "--format=go1.23", "--flight-recorder=60", "-F", "999",
				      "--", JAVA, "-cp", dir, "HotJit", "3000000", NULL });
	jcmd_perfmap_at_2s();
	cr_assert_eq(kill(recorder__pid(it.rec), SIGUSR1), 0);
	flight__file_name(recorder__path(it.rec), 1, window, sizeof(window));
	for (int i = 0; i < 600 && stat(window, &st); i++)
		usleep(100 * 1000);
	cr_assert_eq(stat(window, &st), 0, "no file %s for SIGUSR1 in 60 s", window);
	itest_stop(0, 0);
	cr_assert(strstr(recorder__stderr(it.rec), "files copied with late JIT frames named"),
		  "the summary does not count the file copied with names:\n%s",
		  recorder__stderr(it.rec));
	expect_go123_named(window);
	unlink(window);
}
