/* attack.c - an ordinary local user against root's recording of the whole machine.
 *
 * The attacker is uid ATTACKER_UID (no passwd entry needed): a forked child drops to it with
 * setresuid and does what any user can. It runs JIT code (tests/workloads/jitspin) so that
 * its samples are looked up in its perf map, and makes that map a FIFO, a symlink to
 * /dev/zero, to a root-only file whose lines have a perf map's shape, to a 1 GiB sparse file,
 * or its own 1 GiB sparse file. A `-d 3` recording meanwhile must end within 1 s of its
 * duration, lose nothing, name every refused map in its summary, never show the secret, and
 * stay under 100 MB. The output file: the attacker's symlink to a root file, his own file
 * that he holds open, and a second recording to a path in use are all refused, with the file
 * at the path left as it was.
 */
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <dlfcn.h>

#include "tests/integration/itest.h"
#include "tests/lib/schedstat.h"
#include "tests/lib/tfile.h"

#define ATTACKER_UID 61234
#define NATTACKERS 5
#define SECRET "LXSECRET-7f3a9c"
/* What the attack may add to the peak RSS of the same recording of the same program without
 * it. Reading any of the maps as far as lxtrace would read one (SYM_PERFMAP_MAX_BYTES, 512
 * MiB) is far above it. Both recordings are of the five processes alone (-p): a whole-machine
 * recording's RSS follows what else the machine runs (its binaries read, the records queued
 * while the recorder falls behind), which on a busy machine moved by more than the bound
 * between two recordings a few seconds apart. */
#define MAX_RSS_GROWTH_KB (64 * 1024)

static char dir[64];
static pid_t attackers[NATTACKERS];

/* Ends the attackers' processes and removes their maps. */
static void stop_attackers(void)
{
	char path[64];

	for (int i = 0; i < NATTACKERS; i++) {
		if (!attackers[i])
			continue;
		kill(attackers[i], SIGKILL);
		waitpid(attackers[i], NULL, 0);
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)attackers[i]);
		unlink(path);
		attackers[i] = 0;
	}
}

static void attack_fini(void)
{
	char cmd[128];

	itest_fini();
	stop_attackers();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[0] && system(cmd))
		fprintf(stderr, "attack: cannot remove %s\n", dir);
	dir[0] = '\0';
}

TestSuite(attack, .fini = attack_fini, .timeout = 120);

/* The test's directory: world-writable and sticky like /tmp, so the attacker can work in it. */
static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lxtrace-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(dir, 01777), 0);
}

static void become_attacker(void)
{
	if (setgroups(0, NULL) || setresgid(ATTACKER_UID, ATTACKER_UID, ATTACKER_UID) ||
	    setresuid(ATTACKER_UID, ATTACKER_UID, ATTACKER_UID)) {
		dprintf(STDERR_FILENO, "attack: cannot drop to uid %d: %s\n", ATTACKER_UID,
			strerror(errno));
		_exit(126);
	}
}

/* A child that becomes the attacker and runs fn(arg), then exits with its status. */
static int as_attacker(int (*fn)(const char *arg), const char *arg)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		become_attacker();
		_exit(fn(arg));
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The attacker's own process: makes /tmp/perf-PID.map as `how` says ("none": no map), then
 * runs JIT code for ms milliseconds under the same pid. */
static pid_t start_jit_attacker(const char *how, const char *target, int ms)
{
	char path[96], arg[16];
	pid_t pid = fork();
	int fd;

	cr_assert_geq(pid, 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	become_attacker();
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	if (!strcmp(how, "none"))
		fd = 0;
	else if (!strcmp(how, "fifo"))
		fd = mkfifo(path, 0666);
	else if (!strcmp(how, "symlink"))
		fd = symlink(target, path);
	else if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0)
		fd = ftruncate(fd, 1ll << 30);	/* his own sparse file */
	if (fd < 0) {
		dprintf(STDERR_FILENO, "attack: cannot make %s (%s): %s\n", path, how, strerror(errno));
		_exit(126);
	}
	snprintf(arg, sizeof(arg), "%d", ms);
	snprintf(path, sizeof(path), "%s/jitspin", dir);
	dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
	execl(path, "jitspin", arg, (char *)NULL);
	_exit(127);
}

/* The JIT workload, copied where the attacker can run it (the build may be in a root-only
 * home). */
static void copy_jitspin(void)
{
	const char *argv[] = { "/bin/cp", record__workload_path("jitspin"), NULL, NULL };
	char to[96];

	snprintf(to, sizeof(to), "%s/jitspin", dir);
	argv[2] = to;
	cr_assert_eq(run_capture(argv, 10, NULL, NULL), 0, "cannot copy jitspin to %s", to);
	cr_assert_eq(chmod(to, 0755), 0);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int err = tfile_write(path, text, mode);

	cr_assert_eq(err, 0, "create %s: %s", path, strerror(-err));
}

/* Whether the file at path holds the bytes of s. */
static bool file_contains(const char *path, const char *s)
{
	struct stat st;
	bool found;
	char *all;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(fstat(fd, &st), 0);
	all = malloc((size_t)st.st_size + 1);
	cr_assert_not_null(all);
	cr_assert_eq(read(fd, all, (size_t)st.st_size), st.st_size);
	close(fd);
	found = memmem(all, (size_t)st.st_size, s, strlen(s)) != NULL;
	free(all);
	return found;
}

/* Records with ropts beside the attack, stopped (SIGINT) once 3 s have passed and each of the
 * first n attackers has had 100 ms of CPU in it (a busy machine may give them none in 3 s, and
 * an attacker never sampled attacks nothing): the recorder must end and exit 0. A stall shows
 * as its stop timing out (60 s); how soon it ends, and whether the attack cost records, is
 * bench/hostile.sh's and bench/load.sh's to measure: a busy machine makes any bound here a
 * guess, and loses records of its own (the callers ask that they are counted). Returns its
 * stderr. */
static const char *record_while_attacked(const char *const *ropts, int n)
{
	long long base[NATTACKERS];
	const char *err;
	int ran = 0;

	itest_start(ropts);
	for (int i = 0; i < n; i++)
		base[i] = schedstat__cpu_ms(attackers[i]);
	for (int w = 0; w < 600 && (w < 30 || ran < n); w++) {
		usleep(100 * 1000);
		ran = 0;
		for (int i = 0; i < n; i++)
			ran += schedstat__cpu_ms(attackers[i]) >= base[i] + 100;
	}
	cr_assert_eq(ran, n, "%d of %d attackers had 100 ms of CPU in a minute", ran, n);
	cr_assert_eq(recorder__stop(it.rec, SIGINT, 60), 0, "the recorder did not end in 60 s");
	err = recorder__stderr(it.rec);
	cr_assert_eq(recorder__status(it.rec), 0, "status %d:\n%s", recorder__status(it.rec), err);
	return err;
}

/* "-p" and the attackers' pids, in args (room for NATTACKERS pids). */
static const char *const *attackers_only(char *pids, size_t size, const char **args)
{
	size_t len = 0;

	for (int i = 0; i < NATTACKERS; i++)
		len += (size_t)snprintf(pids + len, size - len, "%s%d", i ? "," : "", (int)attackers[i]);
	args[0] = "-p";
	args[1] = pids;
	args[2] = NULL;
	return args;
}

Test(attack, hostile_perf_maps_neither_stall_nor_grow_nor_leak)
{
	char secret[128], sparse[128], text[8192] = "", map[64], pids[NATTACKERS * 12];
	const char *err, *args[3];
	size_t len = 0;
	long base_kb;
	int fd, i = 0;

	itest_require_root();
	make_dir();
	copy_jitspin();
	/* The same program without maps, recorded the same way: what the attack adds is the
	 * difference. Spinning until they are stopped: a busy machine's start alone may take
	 * seconds. */
	for (i = 0; i < NATTACKERS; i++)
		attackers[i] = start_jit_attacker("none", NULL, 600000);
	usleep(300 * 1000);
	record_while_attacked(attackers_only(pids, sizeof(pids), args), NATTACKERS);
	base_kb = recorder__maxrss_kb(it.rec);
	itest_fini();
	stop_attackers();
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	for (int l = 0; l < 100; l++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "0 7fffffffffff %s-%d\n", SECRET, l);
	write_file(secret, text, 0600);
	snprintf(sparse, sizeof(sparse), "%s/sparse", dir);
	fd = open(sparse, O_WRONLY | O_CREAT, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1ll << 30), 0);
	close(fd);

	i = 0;
	attackers[i++] = start_jit_attacker("fifo", NULL, 600000);
	attackers[i++] = start_jit_attacker("symlink", "/dev/zero", 600000);
	attackers[i++] = start_jit_attacker("symlink", secret, 600000);
	attackers[i++] = start_jit_attacker("symlink", sparse, 600000);
	attackers[i++] = start_jit_attacker("sparse", NULL, 600000);
	usleep(300 * 1000);

	err = record_while_attacked(attackers_only(pids, sizeof(pids), args), NATTACKERS);
	cr_expect_lt(recorder__maxrss_kb(it.rec), base_kb + MAX_RSS_GROWTH_KB,
		     "peak RSS %ld KiB, %ld KiB without the attack:\n%s", recorder__maxrss_kb(it.rec),
		     base_kb, err);
	for (i = 0; i < NATTACKERS; i++) {
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)attackers[i]);
		cr_expect(strstr(err, map), "the summary does not name %s:\n%s", map, err);
	}
	cr_expect_not(file_contains(recorder__path(it.rec), SECRET), "the secret is in the trace");
	itest_load();
	itest_expect_losses_counted();
}

/* The attacker runs a program whose one function has 60,000 rows of CFI (tests/lib/tfile.h):
 * compiling them would take the reader 6.5 s of CPU, with the rings unread. The reader gives a
 * compile 30 ms, the worker the file's own budget. */
Test(attack, costly_unwind_tables_do_not_stall_the_recording)
{
	char src[96], bin[96], cmd[320];
	const char *err;

	itest_require_root();
	make_dir();
	snprintf(src, sizeof(src), "%s/spin.s", dir);
	snprintf(bin, sizeof(bin), "%s/spin", dir);
	cr_assert_eq(tfile_costly_cfi(src, 60000), 0);
	snprintf(cmd, sizeof(cmd), "gcc -o %s %s && chown %d %s", bin, src, ATTACKER_UID, bin);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	attackers[0] = fork();
	cr_assert_geq(attackers[0], 0);
	if (!attackers[0]) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		become_attacker();
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	usleep(300 * 1000);

	/* -v: the unwind rows' line counts the file. */
	err = record_while_attacked((const char *[]){ "-F", "999", "-v", NULL }, 1);
	cr_expect(strstr(err, " 1 too costly,"), "the summary does not count the file:\n%s", err);
	itest_load();
	itest_expect_losses_counted();
}

static int make_symlink(const char *target)
{
	char link[128];

	snprintf(link, sizeof(link), "%s/x.trace", dir);
	return symlink(target, link) ? 1 : 0;
}

Test(attack, an_output_symlink_is_refused_and_its_target_untouched)
{
	char target[128], path[128];
	struct stat st;

	itest_require_root();
	make_dir();
	snprintf(target, sizeof(target), "%s/rootfile", dir);
	write_file(target, "root's own\n", 0644);
	cr_assert_eq(as_attacker(make_symlink, target), 0);
	snprintf(path, sizeof(path), "%s/x.trace", dir);
	/* Under sudo by the attacker, too: the file would be given to him. */
	setenv("SUDO_UID", "61234", 1);
	setenv("SUDO_GID", "61234", 1);
	itest_expect_refused(path, NULL, "symbolic link");
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	cr_assert_eq(stat(target, &st), 0);
	cr_expect_eq(st.st_uid, 0);
	cr_expect_eq(st.st_mode & 07777, 0644);
	cr_expect_eq(st.st_size, 11, "the target was written: %lld bytes", (long long)st.st_size);
}

static int make_dir_link(const char *target)
{
	char link[128];

	snprintf(link, sizeof(link), "%s/d", dir);
	return symlink(target, link) ? 1 : 0;
}

/* `lxtrace CMD -o out in` (pprof: with --cpu): its status, with its stderr in *err
 * (malloc'd). */
static int file_cmd(const char *cmd, const char *out, const char *in, char **err)
{
	bool pprof = !strcmp(cmd, "pprof");
	const char *argv[] = { record__build_path("lxtrace"), cmd, "-o", out, in,
			       pprof ? "--cpu" : NULL, NULL };

	return run_capture(argv, 60, NULL, err);
}

/* cut -o, repair -o and pprof -o write by the recorder's rules (output_file.h): before, cut and
 * repair opened OUT with O_TRUNC, so an attacker's 0666 file received root's trace of the
 * machine, and a link on the way to OUT was followed. */
Test(attack, cut_and_repair_outputs_follow_the_recorders_rules)
{
	static const char *const cmds[] = { "cut", "repair", "pprof" };
	char in[128], rootdir[128], via[128], theirs[128], ok[128], *err = NULL;
	struct stat st;

	itest_require_root();
	make_dir();
	snprintf(in, sizeof(in), "%s/in.trace", dir);
	cr_assert_eq(run_capture((const char *[]){ record__build_path("lxtrace"), "record", "-F", "0",
						   "-d", "0.3", "-o", in, NULL }, 60, NULL, NULL), 0);
	snprintf(rootdir, sizeof(rootdir), "%s/rootdir", dir);
	cr_assert_eq(mkdir(rootdir, 0700), 0);
	cr_assert_eq(as_attacker(make_dir_link, rootdir), 0);
	snprintf(via, sizeof(via), "%s/d/x.trace", dir);
	snprintf(theirs, sizeof(theirs), "%s/theirs.trace", dir);
	write_file(theirs, "", 0666);
	cr_assert_eq(chown(theirs, ATTACKER_UID, ATTACKER_UID), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cr_expect_neq(file_cmd(cmds[i], via, in, &err), 0, "%s -o through a link: exit 0",
			      cmds[i]);
		cr_expect(err && strstr(err, "symbolic link"), "%s: %s", cmds[i], err ? err : "");
		free(err);
		cr_expect_neq(stat(via, &st), 0, "%s wrote through the attacker's link", cmds[i]);
		cr_expect_neq(file_cmd(cmds[i], theirs, in, &err), 0, "%s -o another user's file: "
			      "exit 0", cmds[i]);
		cr_expect(err && strstr(err, "another user"), "%s: %s", cmds[i], err ? err : "");
		free(err);
		cr_assert_eq(stat(theirs, &st), 0);
		cr_expect_eq(st.st_size, 0, "%s wrote into the attacker's file", cmds[i]);
		snprintf(ok, sizeof(ok), "%s/%s.trace", dir, cmds[i]);
		cr_expect_eq(file_cmd(cmds[i], ok, in, NULL), 0, "%s -o a new file failed", cmds[i]);
		cr_expect(!stat(ok, &st) && st.st_size > 16 && (st.st_mode & 0777) == 0600,
			  "%s: %s is not a 0600 file of its output", cmds[i], ok);
	}
}

#define TRUNC_ROUNDS 50

/* The attacker's rounds: a fresh copy of the library (arg) beside it, dlopen'ed, its spin run
 * for 0-90 ms (samples in it, so that its DWARF is read), then cut to nothing while mapped. */
static int truncate_mapped(const char *lib)
{
	char copy[192], buf[65536];
	ssize_t n;

	for (int round = 0; round < TRUNC_ROUNDS; round++) {
		void (*spin)(long);
		void *h;
		int in, out;

		snprintf(copy, sizeof(copy), "%s.%d.so", lib, round);
		in = open(lib, O_RDONLY);
		out = open(copy, O_WRONLY | O_CREAT | O_EXCL, 0755);
		if (in < 0 || out < 0)
			return 2;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				return 3;
		close(in);
		close(out);
		h = dlopen(copy, RTLD_NOW);
		spin = h ? (void (*)(long))dlsym(h, "spin") : NULL;
		if (!spin)
			return 4;
		spin(random() % 90);
		if (truncate(copy, 0))
			return 5;
		/* Unmapped here: touching it now would kill the attacker, not lxtrace. */
		unlink(copy);
	}
	return 0;
}

/* A user truncates libraries with DWARF while they are mapped and sampled: the recorder, which
 * reads them through libelf's and libdw's mappings, died of SIGBUS (2 of 2 runs in issue 23).
 * Another user's file is now read from a private copy (lib/foreign_file.h). */
Test(attack, libraries_truncated_while_mapped_do_not_kill_the_recorder)
{
	char src[160], lib[160], cmd[1024];
	const char *err;

	itest_require_root();
	make_dir();
	/* 3,000 functions with their DWARF (about 1 MB), and one that spins. */
	snprintf(src, sizeof(src), "%s/big.c", dir);
	snprintf(lib, sizeof(lib), "%s/libbig.so", dir);
	snprintf(cmd, sizeof(cmd), "{ for i in $(seq 3000); do echo \"int f$i(int x) { return x * $i "
		 "+ 1; }\"; done; echo '#include <time.h>'; echo 'void spin(long ms) { struct timespec "
		 "a, b; clock_gettime(CLOCK_MONOTONIC, &a); do clock_gettime(CLOCK_MONOTONIC, &b); "
		 "while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms); }'; } "
		 "> %s && gcc -g -O1 -shared -fPIC -o %s %s && chown %d %s", src, lib, src, ATTACKER_UID,
		 lib);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	itest_start((const char *[]){ "-F", "999", NULL });
	cr_assert_eq(as_attacker(truncate_mapped, lib), 0, "the attacker's rounds failed");
	itest_stop(SIGINT, 0);
	err = recorder__stderr(it.rec);
	cr_expect(strstr(err, "records lost:"), "no summary:\n%s", err);
	itest_load();
}

#define EVIL_NAME "x\033[2J\nrecords lost:  0 (ring buffer full)"

static int run_evil(const char *path)
{
	execl(path, "sleep", "0.3", (char *)NULL);
	return 127;
}

/* A program named to clear root's screen and forge a summary line: neither the summary nor
 * `lxtrace dump` prints the name raw (lib/escape.h). Before: dump split the frame at the
 * newline and sent the escape sequence. */
Test(attack, a_hostile_program_name_reaches_no_terminal_raw)
{
	char path[160], trace[128], *out = NULL;
	const char *err;

	itest_require_root();
	make_dir();
	snprintf(path, sizeof(path), "%s/" EVIL_NAME, dir);
	cr_assert_eq(run_capture((const char *[]){ "/bin/cp", "/bin/sleep", path, NULL }, 10, NULL,
				 NULL), 0);
	cr_assert_eq(chown(path, ATTACKER_UID, ATTACKER_UID), 0);
	itest_start(NULL);
	/* Three times: a reader starved on a busy machine loses records, an exec among them. */
	for (int k = 0; k < 3; k++)
		cr_assert_eq(as_attacker(run_evil, path), 0);
	itest_stop(SIGINT, 0);
	err = recorder__stderr(it.rec);
	cr_expect(!strchr(err, '\033') && !strstr(err, "\nrecords lost:  0 (ring"),
		  "the summary prints the name raw:\n%s", err);
	snprintf(trace, sizeof(trace), "%s", recorder__path(it.rec));
	cr_assert_eq(run_capture((const char *[]){ record__build_path("lxtrace"), "dump", trace,
						   NULL }, 120, &out, NULL), 0);
	cr_assert(out);
	cr_expect(!strchr(out, '\033') && !strstr(out, "\nrecords lost:  0 (ring"),
		  "dump prints the name raw");
	/* The exec's path, or where its record was lost the 15 bytes of the thread's name. */
	cr_expect(strstr(out, "x\\x1b[2J\\x0arecords"), "dump does not show the name escaped");
	free(out);
}

Test(attack, a_file_of_another_user_is_not_taken_over)
{
	char path[128], buf[16];
	struct stat st;
	int held;

	itest_require_root();
	make_dir();
	snprintf(path, sizeof(path), "%s/x.trace", dir);
	/* The attacker's file, mode 0666, which he holds open to read whatever lands in it. */
	write_file(path, "", 0666);
	cr_assert_eq(chown(path, ATTACKER_UID, ATTACKER_UID), 0);
	held = open(path, O_RDONLY);
	cr_assert_geq(held, 0);
	itest_expect_refused(path, NULL, "another user");
	cr_assert_eq(fstat(held, &st), 0);
	cr_expect_eq(st.st_size, 0, "%lld bytes reached the attacker's file", (long long)st.st_size);
	cr_expect_eq(pread(held, buf, sizeof(buf), 0), 0);
	close(held);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_uid, ATTACKER_UID);
	cr_expect_eq(st.st_mode & 07777, 0666);
}

Test(attack, a_second_recording_to_one_path_fails_and_the_first_file_is_valid)
{
	struct stat st;

	itest_start(NULL);
	itest_expect_refused(recorder__path(it.rec), NULL, "another recording");
	itest_run("sleeper", (const char *[]){ "20", NULL }, 30);
	itest_stop(SIGINT, 0);
	itest_load();
	cr_assert_eq(stat(recorder__path(it.rec), &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600);
}

Test(attack, the_trace_goes_to_the_sudo_user)
{
	const char *argv[] = { record__build_path("lxtrace"), "record", "-d", "0.5", "-o", NULL, NULL };
	char path[128];
	struct stat st;
	char *err = NULL;
	int status;

	itest_require_root();
	make_dir();
	snprintf(path, sizeof(path), "%s/x.trace", dir);
	argv[5] = path;
	setenv("SUDO_UID", "61234", 1);
	setenv("SUDO_GID", "61235", 1);
	status = run_capture(argv, 30, NULL, &err);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	cr_assert_eq(status, 0, "status %d:\n%s", status, err);
	free(err);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_uid, 61234);
	cr_expect_eq(st.st_gid, 61235);
	cr_expect_eq(st.st_mode & 07777, 0600);
	itest_load_file(path);
}
