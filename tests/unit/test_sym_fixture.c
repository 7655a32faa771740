/* test_sym_fixture.c - spawns the symbolizer fixtures and parses what they print. */
#include <criterion/criterion.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/test_sym_fixture.h"

void symfix__path(const char *name, char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(out, size, "%s/symfix/%s", dirname(exe), name);
}

void symfix__start(struct symfix *f, const char *name)
{
	char path[PATH_MAX + 64];

	symfix__path(name, path, sizeof(path));
	symfix__start_path(f, path);
}

void symfix__start_path(struct symfix *f, const char *path)
{
	size_t len = 0;
	pid_t parent;
	int fds[2];

	cr_assert_eq(access(path, X_OK), 0, "fixture %s not built", path);
	cr_assert_eq(pipe(fds), 0);
	parent = getpid();
	f->pid = fork();
	cr_assert_geq(f->pid, 0);
	if (f->pid == 0) {
		/* Dies with the test: a test that aborts (a sanitizer's report) never reaches
		 * symfix__stop, and a fixture left running holds the runner's output pipe open. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (len < sizeof(f->line) - 1 && read(fds[0], f->line + len, 1) == 1 &&
	       f->line[len] != '\n')
		len++;
	f->line[len] = '\0';
	close(fds[0]);
	cr_assert_gt(len, 0, "fixture %s printed nothing", path);
}

uint64_t symfix__addr(const struct symfix *f, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(f->line, pat);
	cr_assert_not_null(p, "no %s in \"%s\"", key, f->line);
	return strtoull(p + strlen(pat), NULL, 16);
}

void symfix__stop(struct symfix *f)
{
	if (f->pid <= 0)
		return;
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	f->pid = 0;
}

uint64_t symfix__marker_line(const char *file, const char *marker)
{
	char pat[64], *line = NULL;
	uint64_t lineno = 0, found = 0;
	size_t cap = 0;
	FILE *fp = fopen(file, "r");

	cr_assert_not_null(fp, "cannot open %s", file);
	snprintf(pat, sizeof(pat), "LINE:%s ", marker);
	while (!found && getline(&line, &cap, fp) > 0) {
		lineno++;
		if (strstr(line, pat))
			found = lineno;
	}
	free(line);
	fclose(fp);
	cr_assert_gt(found, 0, "no marker %s in %s", marker, file);
	return found;
}
