/* autogroup.c - a session's share of the CPUs under the kernel's scheduling by session
 * (autogroup.h). */
#include <errno.h>
#include <stdio.h>

#include "lib/autogroup.h"

static FILE *open_at(const char *root, const char *name, const char *mode)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root ? root : "/proc", name);
	return fopen(path, mode);
}

/* The session's nice in *nice, as /proc/self/autogroup says it ("/autogroup-46691 nice 0"),
 * when the kernel groups by session ("1" in sched_autogroup_enabled); false otherwise. */
static bool session_nice(const char *root, int *nice)
{
	FILE *f = open_at(root, "sys/kernel/sched_autogroup_enabled", "re");
	int on = 0, n = 0;

	if (f) {
		n = fscanf(f, "%d", &on);
		fclose(f);
	}
	if (n != 1 || on != 1 || !(f = open_at(root, "self/autogroup", "re")))
		return false;
	n = fscanf(f, "%*s nice %d", nice);
	fclose(f);
	return n == 1;
}

static int write_nice(const char *root, int nice)
{
	FILE *f = open_at(root, "self/autogroup", "we");
	int err;

	if (!f)
		return -errno;
	err = fprintf(f, "%d", nice) < 0 ? -errno : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int autogroup__raise(struct autogroup *g, const char *proc_root, int nice)
{
	int was, err;

	*g = (struct autogroup){ 0 };
	if (!session_nice(proc_root, &was) || was <= nice)
		return 0;
	err = write_nice(proc_root, nice);
	if (err)
		return err;
	g->raised = true;
	g->was = was;
	return 0;
}

void autogroup__restore(struct autogroup *g, const char *proc_root)
{
	if (g->raised)
		(void)write_nice(proc_root, g->was);	/* nothing to do else */
	g->raised = false;
}
