/* viewer.c - starts a Go trace viewer on a file and reads its pages (viewer.h). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/httpget.h"
#include "tests/lib/record.h"
#include "tests/lib/viewer.h"

struct viewer {
	pid_t pid;
	char addr[32];
	char log[64];
};

/* A TCP port that was free a moment ago, for the viewer's -http flag; -1 on failure. */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

struct viewer *viewer__start(const char *version, const char *path, char *why, size_t whylen)
{
	char goroot[64], tool[128], flag[64];
	struct viewer *v = calloc(1, sizeof(*v));
	int port = free_port(), rc;

	if (!v || port < 0) {
		snprintf(why, whylen, "viewer: %s", !v ? "out of memory" : "no free TCP port");
		free(v);
		return NULL;
	}
	rc = record__tmpfile(v->log, sizeof(v->log), ".log");
	if (rc) {
		snprintf(why, whylen, "viewer: temp file: %s", strerror(-rc));
		free(v);
		return NULL;
	}
	snprintf(goroot, sizeof(goroot), "/usr/lib/go-%s", version);
	snprintf(tool, sizeof(tool), "%s/pkg/tool/linux_amd64/trace", goroot);
	snprintf(flag, sizeof(flag), "-http=127.0.0.1:%d", port);
	snprintf(v->addr, sizeof(v->addr), "127.0.0.1:%d", port);
	v->pid = fork();
	if (v->pid < 0) {
		snprintf(why, whylen, "viewer: fork: %s", strerror(errno));
		unlink(v->log);
		free(v);
		return NULL;
	}
	if (!v->pid) {
		int fd = open(v->log, O_WRONLY | O_TRUNC);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		setenv("GOROOT", goroot, 1);
		setenv("BROWSER", "true", 1);
		execl(tool, tool, flag, path, (char *)NULL);
		_exit(127);
	}
	return v;
}

char *viewer__get(struct viewer *v, const char *page, long deadline, char *why, size_t whylen)
{
	char *body = NULL;

	while (http_get(v->addr, page, deadline, &body, why, whylen)) {
		int status;

		if (!strstr(why, "Connection refused") || http_now_ms() >= deadline)
			return NULL;
		if (waitpid(v->pid, &status, WNOHANG) == v->pid) {
			v->pid = 0;
			snprintf(why, whylen, "the viewer exited before serving %s (log in %s)", page, v->log);
			return NULL;
		}
		usleep(100 * 1000);
	}
	return body;
}

long viewer__group_count(const char *version, const char *page, const char *name)
{
	char needle[128];
	const char *p;
	long n;

	if (!strcmp(version, "1.19")) {
		snprintf(needle, sizeof(needle), "\">%s</a> N=", name);
		p = strstr(page, needle);
		return p && sscanf(p + strlen(needle), "%ld", &n) == 1 ? n : -1;
	}
	snprintf(needle, sizeof(needle), "\">%s</a></code></td>", name);
	p = strstr(page, needle);
	return p && sscanf(p + strlen(needle), " <td>%ld", &n) == 1 ? n : -1;
}

const char *viewer__log(const struct viewer *v)
{
	return v->log;
}

void viewer__stop(struct viewer *v)
{
	if (!v)
		return;
	if (v->pid > 0) {
		kill(v->pid, SIGKILL);
		waitpid(v->pid, NULL, 0);
	}
	if (!getenv("LXTRACE_TEST_KEEP"))
		unlink(v->log);
	free(v);
}
