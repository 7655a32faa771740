/* busy.c - a busy machine for a test (busy.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/busy.h"

#define MAX_PARTS 260

/* Each part leads its own process group, which the churn's programs join. */
static pid_t parts[MAX_PARTS];
static size_t nparts;

/* Every coreutils program answers --version and does nothing else. */
static const char churn_script[] =
	"progs=$(dpkg -L coreutils 2>/dev/null | grep '^/usr/bin/.' | sort)\n"
	"[ -n \"$progs\" ] || progs='/bin/true /bin/ls /bin/cat /bin/date'\n"
	"while :; do for p in $progs; do \"$p\" --version >/dev/null 2>&1; done; done\n";

static int start_part(bool churn)
{
	pid_t pid;

	if (nparts >= MAX_PARTS)
		return -E2BIG;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (churn)
			execl("/bin/sh", "sh", "-c", churn_script, (char *)NULL);
		for (;;)
			__asm__ volatile("");
	}
	setpgid(pid, pid);
	parts[nparts++] = pid;
	return 0;
}

int busy__start(size_t nhogs, bool churn)
{
	int err = 0;

	for (size_t i = 0; !err && i < nhogs; i++)
		err = start_part(false);
	if (!err && churn)
		err = start_part(true);
	if (err)
		busy__stop();
	return err;
}

void busy__stop(void)
{
	for (size_t i = 0; i < nparts; i++)
		kill(-parts[i], SIGKILL);
	for (size_t i = 0; i < nparts; i++)
		waitpid(parts[i], NULL, 0);
	nparts = 0;
}
