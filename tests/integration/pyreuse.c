/* pyreuse.c - a Python process's pid taken by another user's process while the recorder reads
 * it: the recorder reads a Python process's memory by pid (its code objects' names, when a
 * stack's Python frames come), and must never read the process that took the pid in its
 * place (user/stacks/python.c, peek).
 *
 * Played as a hostile user would, made deterministic: the owner, nobody's python3, is
 * recorded with -p; the recorder is stopped (SIGSTOP) while the owner sleeps in a function of
 * its own and exits, so that the stack naming it waits in the ring; then root's python3 is
 * started at the owner's pid (clone3 with set_tid: no fork churn to wait for) with the same
 * function at the same address, under another name; then the recorder goes on. Its frame must
 * not be named from the victim's memory. */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "tests/integration/itest.h"

#define PYTHON "/usr/bin/python3"
#define NOBODY 65534
/* Names of one length: their processes lay their memory out alike. */
#define OWNER_FN "lx_owner_nobody"
#define VICTIM_FN "lx_secret_root_"

struct reuser {
	pid_t pid;
	int in, out;	/* its stdin and stdout */
};

static struct reuser owner = { 0, -1, -1 }, victim = { 0, -1, -1 };

static void reuser_end(struct reuser *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	if (r->in >= 0)
		close(r->in);
	if (r->out >= 0)
		close(r->out);
	*r = (struct reuser){ 0, -1, -1 };
}

static void pyreuse_fini(void)
{
	if (it.rec)
		kill(recorder__pid(it.rec), SIGCONT);
	reuser_end(&owner);
	reuser_end(&victim);
	itest_fini();
}

TestSuite(pyreuse, .fini = pyreuse_fini, .timeout = 240);

/* clone3's arguments up to set_tid (CLONE_ARGS_SIZE_VER1). */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size;
};

/* Starts pyspin.py reuse NAME as uid, its address space not randomized, at pid want (0: any
 * pid). False with errno set. */
static bool reuser_start(struct reuser *r, const char *name, uid_t uid, pid_t want)
{
	static char script[PATH_MAX];
	char *const argv[] = { PYTHON, "-S", script, "reuse", (char *)name, NULL };
	char *const envp[] = { "PYTHONHASHSEED=0", NULL };
	struct clone3_args a = { .exit_signal = SIGCHLD };
	pid_t tid = want;
	int in[2], out[2];
	long pid;

	snprintf(script, sizeof(script), "%s", record__workload_path("pyspin.py"));
	if (pipe2(in, O_CLOEXEC))
		return false;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return false;
	}
	if (want) {
		a.set_tid = (uint64_t)(uintptr_t)&tid;
		a.set_tid_size = 1;
	}
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || personality(ADDR_NO_RANDOMIZE) < 0 ||
		    setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(126);
		execve(PYTHON, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*r = (struct reuser){ pid > 0 ? (pid_t)pid : 0, in[1], out[0] };
	return pid > 0;
}

/* The address of the code object r reported, or 0 when it did not within 60 s. */
static unsigned long long reuser_code(const struct reuser *r)
{
	char buf[4096];
	size_t len = 0;

	for (int waited = 0; waited < 60000 && len < sizeof(buf) - 1;) {
		struct pollfd pfd = { r->out, POLLIN, 0 };
		const char *at;
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0) {
			waited += 100;
			continue;
		}
		n = read(r->out, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		at = strstr(buf, "stat code ");
		if (at && strchr(at, '\n'))
			return strtoull(at + 10, NULL, 10);
	}
	return 0;
}

/* Whether process pid holds a BPF map named name in which key is. */
static bool holds_in_map(pid_t pid, const char *name, uint32_t key)
{
	char dir[64], path[PATH_MAX], line[128];
	bool found = false;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	while (d && !found && (de = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = de->d_name[0] == '.' ? NULL : fopen(path, "r");
		while (f && !found && fgets(line, sizeof(line), f)) {
			struct bpf_map_info info = { 0 };
			uint32_t len = sizeof(info);
			uint8_t value[256];
			unsigned id;
			int fd;

			if (sscanf(line, "map_id: %u", &id) != 1 || (fd = bpf_map_get_fd_by_id(id)) < 0)
				continue;
			found = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name) &&
				info.value_size <= sizeof(value) &&
				!bpf_map_lookup_elem(fd, &key, value);
			close(fd);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* Whether every thread of process pid is stopped. */
static bool all_stopped(pid_t pid)
{
	char dir[64], path[PATH_MAX], stat[512];
	bool stopped = true, any = false;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		const char *state;
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[n] = '\0';
		state = strrchr(stat, ')');
		any = true;
		stopped &= state && state[1] == ' ' && (state[2] == 'T' || state[2] == 't');
	}
	if (d)
		closedir(d);
	return any && stopped;
}

/* Whether the file at path holds the bytes s. */
static bool file_holds(const char *path, const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	bool found;

	cr_assert(f, "cannot open %s: %s", path, strerror(errno));
	for (char buf[65536]; !feof(f);) {
		size_t n = fread(buf, 1, sizeof(buf), f);

		text = realloc(text, len + n + 1);
		cr_assert(text);
		memcpy(text + len, buf, n);
		len += n;
	}
	fclose(f);
	found = memmem(text, len, s, strlen(s)) != NULL;
	free(text);
	return found;
}

Test(pyreuse, pid_taken_by_another_users_process_is_never_read)
{
	unsigned long long owner_code, victim_code;
	char pidarg[16];
	pid_t rec, pid;
	int status = -1;

	itest_require_root();
	if (access(PYTHON, X_OK))
		cr_skip_test("%s is not installed", PYTHON);
	cr_assert(reuser_start(&owner, OWNER_FN, NOBODY, 0), "cannot start the owner: %s",
		  strerror(errno));
	owner_code = reuser_code(&owner);
	cr_assert(owner_code, "the owner did not report its function's code object");
	pid = owner.pid;
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	itest_start((const char *[]){ "-p", pidarg, "-d", "60", NULL });
	rec = recorder__pid(it.rec);
	/* Its thread given to the walk: the stack it will sleep at carries its Python frames. */
	for (int i = 0; i < 600 && !holds_in_map(rec, "py_threads", (uint32_t)pid); i++)
		usleep(100 * 1000);
	cr_assert(holds_in_map(rec, "py_threads", (uint32_t)pid),
		  "the recorder did not give the owner's thread to the walk in 60 s");
	cr_assert_eq(kill(rec, SIGSTOP), 0);
	for (int i = 0; i < 600 && !all_stopped(rec); i++)
		usleep(10 * 1000);
	cr_assert(all_stopped(rec), "the recorder did not stop");
	/* The owner sleeps in its function, recorded with its frames but not read yet, and
	 * exits; its pid goes to root's process, the same function at the same address. */
	cr_assert_eq(write(owner.in, "go\n", 3), 3);
	cr_assert_eq(waitpid(owner.pid, &status, 0), owner.pid);
	owner.pid = 0;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the owner ended with %#x",
		  status);
	cr_assert(reuser_start(&victim, VICTIM_FN, 0, pid),
		  "cannot start root's process at pid %d: %s", (int)pid, strerror(errno));
	victim_code = reuser_code(&victim);
	cr_assert_eq(kill(rec, SIGCONT), 0);
	/* The only target has exited: the recorder stops by itself. */
	itest_stop(0, 0);
	reuser_end(&victim);
	cr_assert_eq(victim_code, owner_code, "root's function is at %#llx, not at the owner's "
		     "%#llx: the test cannot set its trap", victim_code, owner_code);
	itest_load();
	cr_assert(!file_holds(recorder__path(it.rec), VICTIM_FN),
		  "root's function's name, read at the pid nobody's process had, is in the trace");
	cr_assert(!strstr(recorder__stderr(it.rec), VICTIM_FN));
	/* Not vacuous: the owner's frame came, and was left unnamed. */
	cr_assert_geq(itest_summary_count_before("with a frame not named"), 1,
		      "no stack of the owner's with a frame not named:\n%s",
		      recorder__stderr(it.rec));
}
