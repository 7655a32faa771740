/* launch.c - forks the traced command held at a pipe until the BPF programs see it, then execs it.
 *
 * Two pipes connect lxtrace and the child. `go`: the child blocks reading it; one byte means
 * exec, end of file (lxtrace failed or exited before the release) means exit quietly. `fail`:
 * close-on-exec, so lxtrace reads end of file when the exec succeeded, or the child's errno and
 * the step that failed when it did not.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/sudo_user.h"
#include "user/target/launch.h"

#define PREFIX "lxtrace record: "

enum step { STEP_GROUPS = 1, STEP_GID, STEP_UID, STEP_EXEC };

struct launch_failure {
	int step;	/* enum step */
	int err;	/* errno */
};

struct launch {
	char path[PATH_MAX];	/* the program exec'd */
	char *name;		/* argv[0] as given, for messages */
	pid_t pid;		/* 0 once reaped */
	int go_fd, fail_fd;	/* our ends; -1 once closed */
	bool released;
};

static bool executable(const char *path, int *err)
{
	struct stat st;

	if (stat(path, &st)) {
		*err = errno;
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		*err = EISDIR;
		return false;
	}
	if (access(path, X_OK)) {
		*err = errno;
		return false;
	}
	return true;
}

/* What execvp would run: name itself when it holds a '/', else the first executable
 * DIR/name of $PATH. The errno of the best failure otherwise (EACCES over ENOENT). */
static int resolve(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p;
	int err = ENOENT, e;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return executable(out, &e) ? 0 : -e;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int dirlen = (int)(end - p);

		/* An empty PATH entry is the current directory. */
		snprintf(out, len, "%.*s%s%s", dirlen, p, dirlen ? "/" : "", name);
		if (executable(out, &e))
			return 0;
		if (e == EACCES)
			err = EACCES;
		if (!*end)
			break;
		p = end;
	}
	return -err;
}

/* As the user who ran sudo: supplementary groups, then gid, then uid (after which we could
 * not change groups any more). */
static int drop_privileges(struct launch_failure *f)
{
	char why[128];
	uid_t uid;
	gid_t gid;
	struct passwd *pw;

	f->step = STEP_GROUPS;
	/* Both or neither: a uid without its group is no user to become. */
	if (sudo_user__ids(&uid, &gid, why, sizeof(why)))
		return -1;
	if (uid == (uid_t)-1 || gid == (gid_t)-1)
		return 0;
	pw = getpwuid(uid);
	if (pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL))
		return -1;
	f->step = STEP_GID;
	if (setgid(gid))
		return -1;
	f->step = STEP_UID;
	return setuid(uid);
}

static void child(struct launch *l, char *const argv[], bool as_root, int go, int fail)
{
	struct launch_failure f = { 0 };
	char byte;

	if (read(go, &byte, 1) != 1)
		_exit(LAUNCH_CANNOT_RUN);
	close(go);
	if (as_root || !drop_privileges(&f)) {
		f.step = STEP_EXEC;
		execv(l->path, argv);
	}
	f.err = errno;
	if (write(fail, &f, sizeof(f)) < 0)
		_exit(LAUNCH_CANNOT_RUN);
	_exit(LAUNCH_CANNOT_RUN);
}

struct launch *launch__new(char *const argv[], bool as_root)
{
	struct launch *l = calloc(1, sizeof(*l));
	int go[2] = { -1, -1 }, fail[2] = { -1, -1 }, err;

	if (!l)
		return NULL;
	l->go_fd = l->fail_fd = -1;
	l->name = strdup(argv[0]);
	if (!l->name) {
		err = -ENOMEM;
		goto out;
	}
	err = resolve(argv[0], l->path, sizeof(l->path));
	if (err) {
		fprintf(stderr, PREFIX "%s: %s\n", argv[0], strerror(-err));
		goto out;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(fail, O_CLOEXEC)) {
		err = -errno;
		fprintf(stderr, PREFIX "starting %s: %s\n", argv[0], strerror(-err));
		goto out;
	}
	fflush(NULL);
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		l->pid = 0;
		fprintf(stderr, PREFIX "starting %s: %s\n", argv[0], strerror(-err));
		goto out;
	}
	if (l->pid == 0) {
		close(go[1]);
		close(fail[0]);
		child(l, argv, as_root, go[0], fail[1]);
	}
	l->go_fd = go[1];
	l->fail_fd = fail[0];
	go[1] = fail[0] = -1;
out:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (fail[i] >= 0)
			close(fail[i]);
	}
	if (err) {
		launch__free(l);
		errno = -err;
		return NULL;
	}
	return l;
}

pid_t launch__pid(const struct launch *l)
{
	return l->pid;
}

const char *launch__path(const struct launch *l)
{
	return l->path;
}

int launch__release(struct launch *l)
{
	static const char *const steps[] = {
		[STEP_GROUPS] = "setting the groups of SUDO_UID",
		[STEP_GID] = "setting SUDO_GID",
		[STEP_UID] = "setting SUDO_UID",
		[STEP_EXEC] = NULL,
	};
	struct launch_failure f;
	ssize_t n;

	l->released = true;
	n = write(l->go_fd, "x", 1);
	close(l->go_fd);
	l->go_fd = -1;
	if (n != 1) {
		int err = -errno;

		fprintf(stderr, PREFIX "starting %s: %s\n", l->name, strerror(-err));
		return err;
	}
	do
		n = read(l->fail_fd, &f, sizeof(f));
	while (n < 0 && errno == EINTR);
	close(l->fail_fd);
	l->fail_fd = -1;
	if (n != sizeof(f))
		return 0;	/* end of file: exec'd */
	if (f.step > 0 && f.step < STEP_EXEC)
		fprintf(stderr, PREFIX "%s: %s: %s\n", l->name, steps[f.step], strerror(f.err));
	else
		fprintf(stderr, PREFIX "%s: %s\n", l->name, strerror(f.err));
	return -f.err;
}

int launch__wait(struct launch *l, bool block, int *status)
{
	int wstatus;
	pid_t r;

	if (!l->pid)
		return -ECHILD;
	do
		r = waitpid(l->pid, &wstatus, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	l->pid = 0;
	*status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	return 1;
}

void launch__signal(struct launch *l, int sig)
{
	if (l->pid)
		kill(l->pid, sig);
}

void launch__free(struct launch *l)
{
	int status;

	if (!l)
		return;
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->fail_fd >= 0)
		close(l->fail_fd);
	if (l->pid && l->released)
		kill(l->pid, SIGTERM);
	if (l->pid)
		launch__wait(l, true, &status);
	free(l->name);
	free(l);
}
