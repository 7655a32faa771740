/* goparse.c - runs the real Go 1.19 and Go 1.23 trace parsers (`trace -d`) over a file and
 * reports their verdict and, for 1.19, how many events of each type they printed.
 *
 * The tool binaries are run directly (not through the `go` wrapper, which costs a second
 * process and masks panics' exit status). Their output can be large, so stdout is parsed
 * line by line as it streams; stderr keeps only its first error line. A parser that hangs
 * is killed after a timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/goparse.h"

#define TOOL_119 "/usr/lib/go-1.19/pkg/tool/linux_amd64/trace"
#define GOROOT_119 "/usr/lib/go-1.19"
#define TOOL_123 "/usr/lib/go-1.23/pkg/tool/linux_amd64/trace"
#define GOROOT_123 "/usr/lib/go-1.23"
#define TIMEOUT_MS (180 * 1000)
#define LINE_MAX_LEN 4096

/* Splits a stream into lines; a line longer than the buffer is cut, the rest dropped. */
struct lines {
	char buf[LINE_MAX_LEN];
	size_t len;
	bool overflow;
	void (*fn)(struct goparse_result *r, const char *line, bool is_119);
};

static void on_stdout(struct goparse_result *r, const char *line, bool is_119)
{
	char name[64];
	int n = 0;

	/* 1.23 prints some events over several lines; continuation lines are indented. */
	if (!is_119) {
		if (line[0] && line[0] != ' ' && line[0] != '\t')
			r->events++;
		return;
	}
	/* 1.19: "TS NAME p=P g=G off=OFF ARGS..."; a UserLog message may hold newlines, so a
	 * line that does not look like this continues the previous event. */
	if (sscanf(line, "%*d %63s p=%n", name, &n) != 1 || !n)
		return;
	for (unsigned t = 0; t < GT_EV_COUNT; t++) {
		if (!strcmp(gt_specs[t].name, name)) {
			r->counts[t]++;
			r->events++;
			return;
		}
	}
}

static bool is_log_noise(const char *line)
{
	/* 1.19 logs progress on stderr even when all is well. */
	return !line[0] || strstr(line, "Parsing trace...");
}

static void on_stderr(struct goparse_result *r, const char *line, bool is_119)
{
	if (is_log_noise(line) || r->error[0])
		return;
	snprintf(r->error, sizeof(r->error), "%s", line);
}

static void feed(struct lines *l, struct goparse_result *r, const char *data, size_t n, bool is_119)
{
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			l->buf[l->len] = '\0';
			l->fn(r, l->buf, is_119);
			l->len = 0;
			l->overflow = false;
		} else if (l->len < sizeof(l->buf) - 1) {
			l->buf[l->len++] = data[i];
		} else {
			l->overflow = true;
		}
	}
}

static void finish(struct lines *l, struct goparse_result *r, bool is_119)
{
	if (l->len) {
		l->buf[l->len] = '\0';
		l->fn(r, l->buf, is_119);
		l->len = 0;
	}
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run(const char *tool, const char *goroot, const char *flag, const char *path,
	       struct goparse_result *out, bool is_119)
{
	struct lines *lo = NULL, *le = NULL;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status, err = 0;
	long deadline = now_ms() + TIMEOUT_MS;
	bool timed_out = false;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	lo = calloc(1, sizeof(*lo));
	le = calloc(1, sizeof(*le));
	if (!lo || !le) {
		err = -ENOMEM;
		goto out;
	}
	lo->fn = on_stdout;
	le->fn = on_stderr;
	if (access(tool, X_OK)) {
		err = -errno;
		goto out;
	}
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (!pid) {
		char *argv[] = { (char *)tool, (char *)flag, (char *)path, NULL };

		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		setenv("GOROOT", goroot, 1);
		/* The parsers need no browser; make sure none is ever started. */
		setenv("BROWSER", "true", 1);
		execv(tool, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;

	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		long left = deadline - now_ms();
		char buf[65536];
		int n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			timed_out = true;
			break;
		}
		n = poll(fds, 2, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			kill(pid, SIGKILL);
			err = -errno;
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t r;

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(fds[i].fd, buf, sizeof(buf));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(i ? pe[0] : po[0]);
				if (i)
					pe[0] = -1;
				else
					po[0] = -1;
				open_fds--;
				continue;
			}
			feed(i ? le : lo, out, buf, (size_t)r, is_119);
		}
	}
	finish(lo, out, is_119);
	finish(le, out, is_119);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err = err ? err : -errno;
			goto out;
		}
	}
	out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (timed_out)
		snprintf(out->error, sizeof(out->error), "timed out after %d s", TIMEOUT_MS / 1000);
	else if (out->status == 127 && !out->error[0])
		snprintf(out->error, sizeof(out->error), "could not execute %s", tool);
	else if (out->status && !out->error[0])
		snprintf(out->error, sizeof(out->error), "exit status %d", out->status);
	out->ok = !out->status && !out->error[0] && !timed_out;
out:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	free(lo);
	free(le);
	return err;
}

int goparse_119(const char *path, struct goparse_result *out)
{
	return run(TOOL_119, GOROOT_119, "-d", path, out, true);
}

int goparse_123(const char *path, struct goparse_result *out)
{
	return run(TOOL_123, GOROOT_123, "-d=1", path, out, false);
}

bool goparse_both_ok(const char *path, char *why, size_t whylen)
{
	struct goparse_result *r = malloc(sizeof(*r));
	bool ok = false;
	int err;

	if (!r) {
		snprintf(why, whylen, "goparse: out of memory");
		return false;
	}
	err = goparse_119(path, r);
	if (err || !r->ok) {
		snprintf(why, whylen, "go 1.19 trace -d %s: %s", path, err ? strerror(-err) : r->error);
		goto out;
	}
	err = goparse_123(path, r);
	if (err || !r->ok) {
		snprintf(why, whylen, "go 1.23 trace -d=1 %s: %s", path, err ? strerror(-err) : r->error);
		goto out;
	}
	ok = true;
	if (whylen)
		why[0] = '\0';
out:
	free(r);
	return ok;
}
