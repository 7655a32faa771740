/* autogroup.c - a session's share of the CPUs under the kernel's scheduling by session
 * (autogroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/autogroup.h"

/* Reads the small file root/name into buf (NUL-terminated); its length or -errno. */
static int read_small(const char *root, const char *name, char *buf, size_t size)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return (int)n;
}

static int write_nice(const char *root, int nice)
{
	char path[256], text[16];
	int fd, len, err = 0;

	snprintf(path, sizeof(path), "%s/self/autogroup", root);
	len = snprintf(text, sizeof(text), "%d", nice);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)len) != len)
		err = -errno;
	close(fd);
	return err;
}

int autogroup__raise(struct autogroup *g, const char *proc_root, int nice)
{
	const char *root = proc_root ? proc_root : "/proc";
	char buf[128];
	const char *at;
	int was, err;

	*g = (struct autogroup){ 0 };
	/* "1\n" when the kernel groups by session; absent without CONFIG_SCHED_AUTOGROUP. */
	if (read_small(root, "sys/kernel/sched_autogroup_enabled", buf, sizeof(buf)) <= 0 ||
	    buf[0] != '1')
		return 0;
	/* "/autogroup-46691 nice 0" */
	if (read_small(root, "self/autogroup", buf, sizeof(buf)) <= 0 ||
	    !(at = strstr(buf, " nice ")) || sscanf(at + 6, "%d", &was) != 1)
		return 0;
	if (was <= nice)
		return 0;
	err = write_nice(root, nice);
	if (err)
		return err;
	g->raised = true;
	g->was = was;
	return 0;
}

void autogroup__restore(struct autogroup *g, const char *proc_root)
{
	if (g->raised)
		(void)write_nice(proc_root ? proc_root : "/proc", g->was);	/* nothing to do else */
	g->raised = false;
}
