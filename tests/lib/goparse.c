/* goparse.c - runs the real go1.19 and go1.23 trace parsers (`trace -d`) over a file and
 * reports their verdict and, for 1.19, how many events of each type they printed (1.23's
 * printout kept whole on request); and runs
 * each version's viewer and fetches its pages, which can crash on files the parser takes.
 *
 * The tool binaries are run directly (not through the `go` wrapper, which costs a second
 * process and masks panics' exit status). Their output can be large, so stdout is parsed
 * line by line as it streams; stderr keeps only its first error line. A tool that hangs is
 * killed after a timeout.
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
#include "tests/lib/httpget.h"

#define TOOL_119 "/usr/lib/go-1.19/pkg/tool/linux_amd64/trace"
#define GOROOT_119 "/usr/lib/go-1.19"
#define TOOL_123 "/usr/lib/go-1.23/pkg/tool/linux_amd64/trace"
#define GOROOT_123 "/usr/lib/go-1.23"
#define TIMEOUT_MS (180 * 1000)
#define LINE_MAX_LEN 4096
/* What Go 1.23's viewer logs once its timelines are built and it serves pages. */
#define LISTENING "Trace viewer is listening on http://"

enum mode { PARSE_119, PARSE_123, RAW_123, VIEWS_119, VIEWS_123 };

struct job {
	enum mode mode;
	struct goparse_result *r;
	char addr[64];		/* VIEWS_123: host:port, once the viewer listens */
	bool capture;		/* goparse_123_text: keep what the parser prints in text */
	char *text;
	size_t tlen, tcap;
	bool tfull;
};

/* Keeps line in j's text, up to GOPARSE_TEXT_MAX bytes (then the text is marked cut). */
static void keep_line(struct job *j, const char *line)
{
	size_t n = strlen(line);
	char *t;

	if (j->tfull || j->tlen + n + 2 > GOPARSE_TEXT_MAX) {
		j->tfull = true;
		return;
	}
	if (j->tlen + n + 2 > j->tcap) {
		size_t cap = j->tcap ? j->tcap : 65536;

		while (cap < j->tlen + n + 2)
			cap *= 2;
		t = realloc(j->text, cap);
		if (!t) {
			j->tfull = true;
			return;
		}
		j->text = t;
		j->tcap = cap;
	}
	memcpy(j->text + j->tlen, line, n);
	j->tlen += n;
	j->text[j->tlen++] = '\n';
	j->text[j->tlen] = '\0';
}

/* Splits a stream into lines; a line longer than the buffer is cut, the rest dropped. */
struct lines {
	char buf[LINE_MAX_LEN];
	size_t len;
	void (*fn)(struct job *j, const char *line);
};

static void on_stdout(struct job *j, const char *line)
{
	char name[64];
	int n = 0;

	switch (j->mode) {
	case PARSE_123:
	case RAW_123:
		/* 1.23 prints some events over several lines; continuation lines are indented. */
		if (line[0] && line[0] != ' ' && line[0] != '\t')
			j->r->events++;
		if (j->capture)
			keep_line(j, line);
		return;
	case VIEWS_119:
	case VIEWS_123:
		return;
	case PARSE_119:
		break;
	}
	/* 1.19: "TS NAME p=P g=G off=OFF ARGS..."; a UserLog message may hold newlines, so a
	 * line that does not look like this continues the previous event. */
	if (sscanf(line, "%*d %63s p=%n", name, &n) != 1 || !n)
		return;
	for (unsigned t = 0; t < GT_EV_COUNT; t++) {
		if (!strcmp(gt_specs[t].name, name)) {
			j->r->counts[t]++;
			j->r->events++;
			return;
		}
	}
}

/* Progress lines the tools log when all is well. Anything else on stderr is an error. */
static bool is_log_noise(const struct job *j, const char *line)
{
	static const char *const viewer[] = {
		"Preparing trace for viewer...", "Splitting trace for viewer...", "processed...",
		"Opening browser.", "Parsing trace...", "Splitting trace...",
	};

	if (!line[0])
		return true;
	if (j->mode == PARSE_119)
		return strstr(line, "Parsing trace...");
	if (j->mode == VIEWS_119 || j->mode == VIEWS_123) {
		for (size_t i = 0; i < sizeof(viewer) / sizeof(viewer[0]); i++)
			if (strstr(line, viewer[i]))
				return true;
	}
	return false;
}

static void on_stderr(struct job *j, const char *line)
{
	const char *l = j->mode == VIEWS_119 || j->mode == VIEWS_123 ? strstr(line, LISTENING) :
			NULL;

	if (l) {
		snprintf(j->addr, sizeof(j->addr), "%s", l + strlen(LISTENING));
		return;
	}
	if (is_log_noise(j, line) || j->r->error[0])
		return;
	snprintf(j->r->error, sizeof(j->r->error), "%s", line);
}

static void feed(struct lines *l, struct job *j, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			l->buf[l->len] = '\0';
			l->fn(j, l->buf);
			l->len = 0;
		} else if (l->len < sizeof(l->buf) - 1) {
			l->buf[l->len++] = data[i];
		}
	}
}

static void finish(struct lines *l, struct job *j)
{
	if (l->len) {
		l->buf[l->len] = '\0';
		l->fn(j, l->buf);
		l->len = 0;
	}
}

/* Once the viewer listens (1.23 built its proc timeline before), the pages a person opens
 * first are fetched: the index, the timeline's JSON (which must hold events), the goroutine
 * list, the user tasks and regions; then the viewer is stopped. */
static void fetch_views(struct job *j, pid_t pid, long deadline)
{
	static const char *const pages_119[] = {
		"/", "/jsontrace", "/goroutines", "/usertasks", "/userregions", NULL,
	};
	static const char *const pages_123[] = {
		"/", "/trace?view=proc", "/jsontrace?view=proc", "/jsontrace?view=thread",
		"/goroutines", "/usertasks", "/userregions", NULL,
	};
	const char *const *pages = j->mode == VIEWS_119 ? pages_119 : pages_123;

	for (size_t i = 0; pages[i] && !j->r->error[0]; i++) {
		char *body = NULL;

		if (http_get(j->addr, pages[i], deadline, &body, j->r->error, sizeof(j->r->error)))
			break;
		if (!strncmp(pages[i], "/jsontrace", 10) && !strstr(body, "\"traceEvents\""))
			snprintf(j->r->error, sizeof(j->r->error), "%s: no traceEvents", pages[i]);
		free(body);
	}
	kill(pid, SIGKILL);
}

/* Starts `tool flag path` with its stdout and stderr on the pipes po and pe, whose read ends
 * stay open for the caller (the write ends are closed here). */
static int spawn(const char *tool, const char *goroot, const char *flag, const char *path,
		 int po[2], int pe[2], pid_t *pid)
{
	if (access(tool, X_OK))
		return -errno;
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		return -errno;
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (!*pid) {
		char *argv[] = { (char *)tool, (char *)flag, (char *)path, NULL };

		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		setenv("GOROOT", goroot, 1);
		/* The tools need no browser; make sure none is ever started. */
		setenv("BROWSER", "true", 1);
		execv(tool, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	return 0;
}

static int run(const char *tool, const char *goroot, const char *flag, const char *path,
	       struct goparse_result *out, enum mode mode, char **text)
{
	struct job j = { .mode = mode, .r = out, .capture = text != NULL };
	struct lines *lo = NULL, *le = NULL;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status, err = 0;
	long deadline = http_now_ms() + TIMEOUT_MS;
	bool timed_out = false, stopped = false;
	pid_t pid = 0;

	memset(out, 0, sizeof(*out));
	lo = calloc(1, sizeof(*lo));
	le = calloc(1, sizeof(*le));
	if (!lo || !le) {
		err = -ENOMEM;
		goto out;
	}
	lo->fn = on_stdout;
	le->fn = on_stderr;
	err = spawn(tool, goroot, flag, path, po, pe, &pid);
	if (err)
		goto out;

	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		long left = deadline - http_now_ms();
		char buf[65536];
		int n;

		if (j.addr[0] && !stopped) {
			fetch_views(&j, pid, deadline);
			stopped = true;
		}
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
			feed(i ? le : lo, &j, buf, (size_t)r);
		}
	}
	finish(lo, &j);
	finish(le, &j);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err = err ? err : -errno;
			goto out;
		}
	}
	out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (stopped && out->status == 128 + SIGKILL)
		out->status = 0;	/* we stopped the viewer */
	if (timed_out)
		snprintf(out->error, sizeof(out->error), "timed out after %d s", TIMEOUT_MS / 1000);
	else if (out->status == 127 && !out->error[0])
		snprintf(out->error, sizeof(out->error), "could not execute %s", tool);
	else if (out->status && !out->error[0])
		snprintf(out->error, sizeof(out->error), "exit status %d", out->status);
	else if ((mode == VIEWS_119 || mode == VIEWS_123) && !stopped && !out->error[0])
		snprintf(out->error, sizeof(out->error), "the viewer exited without serving");
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
	if (text && !err && j.tfull && !out->error[0]) {
		snprintf(out->error, sizeof(out->error), "printed more than %d bytes", GOPARSE_TEXT_MAX);
		out->ok = false;
	}
	if (text && !err && !j.text)
		j.text = strdup("");
	if (text && !err)
		*text = j.text;
	else
		free(j.text);
	return err ? err : text && !*text ? -ENOMEM : 0;
}

int goparse_119(const char *path, struct goparse_result *out)
{
	return run(TOOL_119, GOROOT_119, "-d", path, out, PARSE_119, NULL);
}

int goparse_123(const char *path, struct goparse_result *out)
{
	return run(TOOL_123, GOROOT_123, "-d=1", path, out, PARSE_123, NULL);
}

int goparse_123_text(const char *path, int level, struct goparse_result *out, char **text)
{
	*text = NULL;
	if (level != 1 && level != 2)
		return -EINVAL;
	return run(TOOL_123, GOROOT_123, level == 1 ? "-d=1" : "-d=2", path, out,
		   level == 1 ? PARSE_123 : RAW_123, text);
}

int goparse_123_views(const char *path, struct goparse_result *out)
{
	return run(TOOL_123, GOROOT_123, "-http=127.0.0.1:0", path, out, VIEWS_123, NULL);
}

int goparse_119_views(const char *path, struct goparse_result *out)
{
	return run(TOOL_119, GOROOT_119, "-http=127.0.0.1:0", path, out, VIEWS_119, NULL);
}

typedef int check_fn(const char *path, struct goparse_result *out);

/* Runs c119 then c123 on path; on a failure writes which one (named what119/what123) said what. */
static bool both(const char *path, char *why, size_t whylen, check_fn *c119, const char *what119,
		 check_fn *c123, const char *what123)
{
	struct goparse_result *r = malloc(sizeof(*r));
	check_fn *checks[2] = { c119, c123 };
	const char *what[2] = { what119, what123 };
	bool ok = true;

	if (!r) {
		snprintf(why, whylen, "goparse: out of memory");
		return false;
	}
	for (int i = 0; i < 2 && ok; i++) {
		int err = checks[i](path, r);

		ok = !err && r->ok;
		if (!ok)
			snprintf(why, whylen, "%s %s: %s", what[i], path, err ? strerror(-err) : r->error);
	}
	if (ok && whylen)
		why[0] = '\0';
	free(r);
	return ok;
}

bool goparse_views_ok(const char *path, char *why, size_t whylen)
{
	return both(path, why, whylen, goparse_119_views, "go 1.19 viewer on", goparse_123_views,
		    "go 1.23 viewer on");
}

bool goparse_both_ok(const char *path, char *why, size_t whylen)
{
	return both(path, why, whylen, goparse_119, "go 1.19 trace -d", goparse_123,
		    "go 1.23 trace -d=1");
}
