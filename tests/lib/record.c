/* record.c - child processes for the integration tests: the recorder, workloads, commands. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/clock.h"
#include "tests/lib/record.h"

/* Loading and attaching the BPF programs takes well under a second on a quiet machine and 9-10 s
 * on one under heavy load (docs/bench.md); a recorder that has not said it is ready in a
 * minute is stuck. How soon it is ready is bench/startup.sh's to measure. */
#define READY_TIMEOUT_MS 60000
/* The descriptor the recorder says it is ready on (--ready-fd). */
#define READY_FD 3
#define MAX_PROGS 256
/* How long programs may linger after the recorder exits before they count as left behind. */
#define PROG_RELEASE_MS 5000
#define MAX_ARGS 64

struct recorder {
	pid_t pid;		/* 0 once reaped */
	int status;
	long maxrss_kb;		/* peak resident memory, once stopped */
	char path[64];		/* the trace */
	char errpath[64];	/* its stderr, a file so it can never block on a full pipe */
	char *err;
	size_t nprogs;
	uint32_t progs[MAX_PROGS];
};

struct wl_thread {
	char role[32];
	pid_t tid;
};

struct wl_stat {
	char key[32];
	long long value;
};

struct workload {
	int status;
	pid_t pid;
	pid_t child;		/* started by workload__start and not reaped yet, else 0 */
	int in_fd;		/* its stdin, -1 once closed */
	char outpath[64];	/* its stdout, a file so it can never block on a full pipe */
	char *out;
	size_t nthreads, nstats;
	struct wl_thread *threads;
	struct wl_stat *stats;
};

static int64_t now_ms(void)
{
	return (int64_t)(now_ns() / 1000000);
}

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

static int decode_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 255;
}

/* Waits for pid up to timeout_ms (< 0: forever); SIGKILLs it after that. Returns its status;
 * *maxrss_kb (if not NULL) gets its peak resident memory. */
static int reap_rusage(pid_t pid, long timeout_ms, long *maxrss_kb)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct rusage ru;
	int wstatus;

	for (;;) {
		pid_t r = wait4(pid, &wstatus, timeout_ms < 0 ? 0 : WNOHANG, &ru);

		if (r == pid && maxrss_kb)
			*maxrss_kb = ru.ru_maxrss;

		if (r == pid)
			return decode_status(wstatus);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && now_ms() >= deadline) {
			kill(pid, SIGKILL);
			timeout_ms = -1;
		} else if (r == 0) {
			sleep_ms(5);
		}
	}
}

static int reap(pid_t pid, long timeout_ms)
{
	return reap_rusage(pid, timeout_ms, NULL);
}

const char *record__build_path(const char *name)
{
	static char path[2 * PATH_MAX];
	char exe[PATH_MAX];
	const char *env = NULL;
	ssize_t n;
	char *slash;

	if (!strcmp(name, "lxtrace"))
		env = getenv("LXTRACE");
	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		n = 0;
	exe[n] = '\0';
	/* <build>/tests/<test binary>: strip two components. */
	for (int i = 0; i < 2; i++) {
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
	}
	snprintf(path, sizeof(path), "%s/%s", exe[0] ? exe : "build", name);
	return path;
}

const char *record__workload_path(const char *name)
{
	static char path[3 * PATH_MAX];
	const char *dir = getenv("LXTRACE_WORKLOADS");

	if (name[0] == '/')
		return name;
	if (!dir || !*dir)
		dir = record__build_path("tests/workloads");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

int record__tmpfile(char *path, size_t len, const char *suffix)
{
	int fd;

	if ((size_t)snprintf(path, len, "/tmp/lxtrace-test-XXXXXX%s", suffix) >= len)
		return -ENAMETOOLONG;
	fd = mkstemps(path, (int)strlen(suffix));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Forks argv with stdin, stdout and stderr on the given fds (-1: /dev/null), and ready_fd (if
 * not -1) as READY_FD. The child gets deathsig when this thread dies, so no test can orphan
 * it. Returns its pid or -errno. */
static pid_t spawn_ready(const char *const *argv, int in_fd, int out_fd, int err_fd, int ready_fd,
			 int deathsig)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* As from a terminal: the runner may hold SIGINT and SIGQUIT ignored (a system()
		 * under way, a background job), which exec would hand on, and a command lxtrace
		 * starts could then not be stopped by the SIGINT lxtrace forwards. */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		/* A recording neither reads nor fills the machine's cache of unwind rows
		 * (docs/stacks.md): a test that wants one sets its own directory. */
		setenv("LXTRACE_CACHE_DIR", "off", 0);
		prctl(PR_SET_PDEATHSIG, deathsig);
		if (getppid() != parent)
			_exit(127);
		dup2(in_fd >= 0 ? in_fd : null, STDIN_FILENO);
		dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO);
		dup2(err_fd >= 0 ? err_fd : null, STDERR_FILENO);
		/* dup2 onto itself would leave its close-on-exec flag. */
		if (ready_fd == READY_FD)
			fcntl(READY_FD, F_SETFD, 0);
		else if (ready_fd >= 0)
			dup2(ready_fd, READY_FD);
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "test: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static pid_t spawn(const char *const *argv, int in_fd, int out_fd, int err_fd, int deathsig)
{
	return spawn_ready(argv, in_fd, out_fd, err_fd, -1, deathsig);
}

/* Reads a whole (small) file; "" when it cannot. Never NULL unless out of memory. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return strdup("");
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

static void note_progs(struct recorder *r)
{
	char dir[64], path[PATH_MAX], line[128];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)r->pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned id;
			bool seen = false;

			if (sscanf(line, "prog_id: %u", &id) != 1)
				continue;
			for (size_t i = 0; i < r->nprogs; i++)
				seen |= r->progs[i] == id;
			if (!seen && r->nprogs < MAX_PROGS)
				r->progs[r->nprogs++] = id;
		}
		fclose(f);
	}
	closedir(d);
}

/* Waits up to timeout_ms for the recorder's line on the read end of its ready pipe: 1 when it
 * came, 0 at end of file (the recorder did not start), -ETIMEDOUT. */
static int wait_ready(int fd, long timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	char buf[64];
	size_t len = 0;

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		len += (size_t)n;
		if (memchr(buf, '\n', len) || len == sizeof(buf) - 1)
			return 1;
	}
}

struct recorder *recorder__start(const char *const *args, char *why, size_t whylen)
{
	const char *argv[MAX_ARGS + 7];
	struct recorder *r = calloc(1, sizeof(*r));
	size_t n = 0;
	int err_fd = -1, ready[2] = { -1, -1 }, ready_rc, saved;
	char ready_arg[16];

	if (why && whylen)
		why[0] = '\0';
	if (!r)
		return NULL;
	if (record__tmpfile(r->path, sizeof(r->path), ".trace") ||
	    record__tmpfile(r->errpath, sizeof(r->errpath), ".stderr"))
		goto fail;
	snprintf(ready_arg, sizeof(ready_arg), "%d", READY_FD);
	argv[n++] = record__build_path("lxtrace");
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = r->path;
	argv[n++] = "--ready-fd";
	argv[n++] = ready_arg;
	for (size_t i = 0; args && args[i] && i < MAX_ARGS; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	err_fd = open(r->errpath, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (err_fd < 0 || pipe2(ready, O_CLOEXEC))
		goto fail;
	/* SIGINT on our death: the recorder's own clean shutdown detaches its programs. */
	r->pid = spawn_ready(argv, -1, err_fd, err_fd, ready[1], SIGINT);
	close(err_fd);
	err_fd = -1;
	close(ready[1]);
	ready[1] = -1;
	if (r->pid < 0) {
		errno = -r->pid;
		r->pid = 0;
		goto fail;
	}
	ready_rc = wait_ready(ready[0], READY_TIMEOUT_MS);
	close(ready[0]);
	ready[0] = -1;
	if (ready_rc != 1) {
		/* End of file: it stops by itself, having said why on stderr. Silent for so long:
		 * stuck. */
		recorder__stop(r, ready_rc ? SIGKILL : 0, READY_TIMEOUT_MS / 1000);
		if (why)
			snprintf(why, whylen, "recorder %s (status %d): %s", ready_rc ? "never said it "
				 "was ready, killed" : "exited before recording", r->status,
				 recorder__stderr(r));
		errno = ready_rc ? ETIMEDOUT : ECHILD;
		goto fail;
	}
	note_progs(r);
	return r;

fail:
	saved = errno;
	if (why && whylen && !why[0])
		snprintf(why, whylen, "cannot start the recorder: %s", strerror(saved));
	for (int i = 0; i < 2; i++)
		if (ready[i] >= 0)
			close(ready[i]);
	if (err_fd >= 0)
		close(err_fd);
	recorder__free(r);
	errno = saved;
	return NULL;
}

int recorder__stop(struct recorder *r, int sig, int timeout_s)
{
	int status;

	if (!r->pid)
		return 0;
	if (sig)
		kill(r->pid, sig);
	status = reap_rusage(r->pid, (long)timeout_s * 1000, &r->maxrss_kb);
	if (status < 0)
		return status;
	r->status = status;
	r->pid = 0;
	free(r->err);
	r->err = slurp(r->errpath);
	return 0;
}

int recorder__status(const struct recorder *r)
{
	return r->status;
}

long recorder__maxrss_kb(const struct recorder *r)
{
	return r->maxrss_kb;
}

const char *recorder__stderr(const struct recorder *r)
{
	return r->err ? r->err : "";
}

const char *recorder__path(const struct recorder *r)
{
	return r->path;
}

pid_t recorder__pid(const struct recorder *r)
{
	return r->pid;
}

size_t recorder__nprogs(const struct recorder *r)
{
	return r->nprogs;
}

static size_t count_live_progs(const struct recorder *r)
{
	size_t left = 0;

	for (size_t i = 0; i < r->nprogs; i++) {
		int fd = bpf_prog_get_fd_by_id(r->progs[i]);

		if (fd >= 0) {
			left++;
			close(fd);
		}
	}
	return left;
}

size_t recorder__leftover_progs(const struct recorder *r)
{
	int64_t deadline = now_ms() + PROG_RELEASE_MS;
	size_t left;

	/* The kernel frees a program from a work queue after its last reference goes. */
	while ((left = count_live_progs(r)) && now_ms() < deadline)
		sleep_ms(20);
	return left;
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	if (r->pid) {
		kill(r->pid, SIGKILL);
		reap(r->pid, -1);
	}
	if (r->path[0])
		unlink(r->path);
	if (r->errpath[0])
		unlink(r->errpath);
	free(r->err);
	free(r);
}

struct capture_buf {
	int fd;			/* -1 once closed */
	char *buf;
	size_t len, cap;
};

/* Reads what is ready on cb->fd into its buffer; closes it (fd = -1) at EOF. */
static int capture_some(struct capture_buf *cb)
{
	ssize_t n;

	if (cb->len + 4096 + 1 > cb->cap) {
		size_t cap = cb->cap * 2 + 4096;
		char *grown = realloc(cb->buf, cap);

		if (!grown)
			return -ENOMEM;
		cb->buf = grown;
		cb->cap = cap;
	}
	n = read(cb->fd, cb->buf + cb->len, cb->cap - cb->len - 1);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		cb->fd = -1;
		return 0;
	}
	cb->len += (size_t)n;
	cb->buf[cb->len] = '\0';
	return 0;
}

/* Reads pid's stdout and stderr pipes together (so neither can fill up and stall it) until
 * both close or the deadline passes, then reaps it (killing it at the deadline). The
 * buffers go to *out and *err (freed when those are NULL). Returns its exit status. */
static int collect(pid_t pid, int out_fd, int err_fd, int timeout_s, char **out, char **err)
{
	int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
	struct capture_buf cbs[2] = { { out_fd, calloc(1, 1), 0, 1 }, { err_fd, calloc(1, 1), 0, 1 } };
	char **dst[2] = { out, err };
	bool late = false;

	while (cbs[0].fd >= 0 || cbs[1].fd >= 0) {
		struct pollfd pfd[2] = { { cbs[0].fd, POLLIN, 0 }, { cbs[1].fd, POLLIN, 0 } };
		int64_t left = deadline - now_ms();

		if (left <= 0 || !cbs[0].buf || !cbs[1].buf) {
			late = true;
			break;
		}
		if (poll(pfd, 2, (int)left) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (pfd[i].revents && capture_some(&cbs[i])) {
				late = true;	/* out of memory: stop reading, kill it */
				cbs[0].fd = cbs[1].fd = -1;
			}
		}
	}
	for (int i = 0; i < 2; i++) {
		if (dst[i])
			*dst[i] = cbs[i].buf;
		else
			free(cbs[i].buf);
	}
	return reap(pid, late ? 0 : 10000);
}

int run_capture(const char *const *argv, int timeout_s, char **out, char **err)
{
	int po[2], pe[2];
	pid_t pid;

	if (out)
		*out = NULL;
	if (err)
		*err = NULL;
	if (pipe2(po, O_CLOEXEC))
		return -errno;
	if (pipe2(pe, O_CLOEXEC)) {
		int e = -errno;

		close(po[0]);
		close(po[1]);
		return e;
	}
	pid = spawn(argv, -1, po[1], pe[1], SIGKILL);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return pid;
	}
	pid = collect(pid, po[0], pe[0], timeout_s, out, err);
	close(po[0]);
	close(pe[0]);
	return pid;
}

static int parse_protocol(struct workload *w)
{
	char *save = NULL, *text = strdup(w->out ? w->out : "");

	if (!text)
		return -ENOMEM;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char word[32];
		long long v;
		int tid;

		if (sscanf(line, "pid %d", &tid) == 1) {
			w->pid = tid;
		} else if (sscanf(line, "tid %31s %d", word, &tid) == 2) {
			struct wl_thread *t = realloc(w->threads, (w->nthreads + 1) * sizeof(*t));

			if (!t)
				break;
			w->threads = t;
			snprintf(t[w->nthreads].role, sizeof(t->role), "%s", word);
			t[w->nthreads++].tid = tid;
		} else if (sscanf(line, "stat %31s %lld", word, &v) == 2) {
			struct wl_stat *s = realloc(w->stats, (w->nstats + 1) * sizeof(*s));

			if (!s)
				break;
			w->stats = s;
			snprintf(s[w->nstats].key, sizeof(s->key), "%s", word);
			s[w->nstats++].value = v;
		}
	}
	free(text);
	return 0;
}

/* A workload not started yet, and its command line in argv (MAX_ARGS + 2 entries). */
static struct workload *workload_new(const char *name, const char *const *args, const char **argv)
{
	struct workload *w = calloc(1, sizeof(*w));
	size_t n = 0;

	if (!w)
		return NULL;
	w->in_fd = -1;
	argv[n++] = record__workload_path(name);
	for (size_t i = 0; args && args[i] && i < MAX_ARGS; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return w;
}

struct workload *workload__start(const char *name, const char *const *args)
{
	const char *argv[MAX_ARGS + 2];
	struct workload *w = workload_new(name, args, argv);
	int pi[2] = { -1, -1 }, out_fd = -1, saved;
	pid_t pid;

	if (!w)
		return NULL;
	if (record__tmpfile(w->outpath, sizeof(w->outpath), ".out") || pipe2(pi, O_CLOEXEC))
		goto fail;
	out_fd = open(w->outpath, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (out_fd < 0)
		goto fail;
	pid = spawn(argv, pi[0], out_fd, STDERR_FILENO, SIGKILL);
	if (pid < 0) {
		errno = -pid;
		goto fail;
	}
	close(pi[0]);
	close(out_fd);
	w->child = w->pid = pid;
	w->in_fd = pi[1];
	return w;
fail:
	saved = errno;
	for (int i = 0; i < 2; i++)
		if (pi[i] >= 0)
			close(pi[i]);
	if (out_fd >= 0)
		close(out_fd);
	workload__free(w);
	errno = saved;
	return NULL;
}

int workload__send(struct workload *w, const char *text)
{
	size_t len = strlen(text);

	if (w->in_fd < 0)
		return -EPIPE;
	if (write(w->in_fd, text, len) != (ssize_t)len)
		return errno ? -errno : -EIO;
	return 0;
}

int workload__finish(struct workload *w, int timeout_s)
{
	int status;

	if (w->in_fd >= 0) {
		close(w->in_fd);
		w->in_fd = -1;
	}
	if (!w->child)
		return 0;
	status = reap(w->child, (long)timeout_s * 1000);
	if (status < 0)
		return status;
	w->child = 0;
	w->status = status;
	free(w->out);
	w->out = slurp(w->outpath);
	if (!w->out)
		return -ENOMEM;
	return parse_protocol(w);
}

struct workload *workload__run(const char *name, const char *const *args, int timeout_s)
{
	const char *argv[MAX_ARGS + 2];
	struct workload *w = workload_new(name, args, argv);
	int po[2], saved;
	pid_t pid;

	if (!w)
		return NULL;
	if (pipe2(po, O_CLOEXEC))
		goto fail;
	/* stderr stays the test's own: a workload's complaint shows in the test log. */
	pid = spawn(argv, -1, po[1], STDERR_FILENO, SIGKILL);
	close(po[1]);
	if (pid < 0) {
		close(po[0]);
		errno = -pid;
		goto fail;
	}
	w->status = collect(pid, po[0], -1, timeout_s, &w->out, NULL);
	close(po[0]);
	if (parse_protocol(w))
		goto fail;
	return w;
fail:
	saved = errno;
	workload__free(w);
	errno = saved;
	return NULL;
}

struct workload *workload__from_output(const char *out, int status)
{
	struct workload *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->in_fd = -1;
	w->status = status;
	w->out = strdup(out ? out : "");
	if (!w->out || parse_protocol(w)) {
		workload__free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

int workload__status(const struct workload *w)
{
	return w->status;
}

pid_t workload__pid(const struct workload *w)
{
	return w->pid;
}

pid_t workload__tid(const struct workload *w, const char *role)
{
	for (size_t i = 0; i < w->nthreads; i++)
		if (!strcmp(w->threads[i].role, role))
			return w->threads[i].tid;
	return 0;
}

bool workload__thread(const struct workload *w, size_t n, const char **role, pid_t *tid)
{
	if (n >= w->nthreads)
		return false;
	*role = w->threads[n].role;
	*tid = w->threads[n].tid;
	return true;
}

long long workload__stat(const struct workload *w, const char *key, long long def)
{
	for (size_t i = 0; i < w->nstats; i++)
		if (!strcmp(w->stats[i].key, key))
			return w->stats[i].value;
	return def;
}

const char *workload__stdout(const struct workload *w)
{
	return w->out ? w->out : "";
}

void workload__free(struct workload *w)
{
	if (!w)
		return;
	if (w->in_fd >= 0)
		close(w->in_fd);
	if (w->child) {
		kill(w->child, SIGKILL);
		reap(w->child, -1);
	}
	if (w->outpath[0])
		unlink(w->outpath);
	free(w->out);
	free(w->threads);
	free(w->stats);
	free(w);
}
