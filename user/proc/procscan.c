/* procscan.c - enumerates threads from proc_root/PID/task/TID/{stat,syscall}. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/grow.h"
#include "user/proc/procscan.h"
#include "user/proc/procstat.h"

static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

static bool parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* fields is stat after "(comm) ": state ppid pgrp session tty_nr tpgid flags ... */
static bool is_kthread(const char *fields)
{
	const unsigned long pf_kthread = 0x00200000;
	const char *p = fields;

	for (int i = 0; i < 6 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p && (strtoul(p, NULL, 10) & pf_kthread);
}

/* dir is proc_root/PID/task/TID or proc_root/TID. */
static int read_thread(const char *dir, struct procscan_thread *t)
{
	char path[4096], buf[1024];
	struct procstat ps;
	int err;

	snprintf(path, sizeof(path), "%s/stat", dir);
	err = read_small(path, buf, sizeof(buf));
	if (!err)
		err = procstat__parse(buf, &ps);
	if (err)
		return err;
	memcpy(t->comm, ps.comm, sizeof(t->comm));
	t->state = ps.state;

	/* "running", "-1 sp pc" (blocked outside a syscall) or "NR args... sp pc". Kernel threads
	 * make no syscalls but read as "0 0x0 ...", which would look like a blocking read. */
	t->syscall = -1;
	if (is_kthread(ps.fields))
		return 0;
	snprintf(path, sizeof(path), "%s/syscall", dir);
	if (!read_small(path, buf, sizeof(buf)) && buf[0] >= '0' && buf[0] <= '9')
		t->syscall = (int32_t)strtol(buf, NULL, 10);
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct procscan_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The name of process pid (proc_root/PID/comm) into out, "" when unreadable. */
static void read_program(const char *proc_root, uint32_t pid, char out[LX_COMM_LEN])
{
	char path[4096], buf[64];
	size_t len;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%u/comm", proc_root, pid);
	if (read_small(path, buf, sizeof(buf)))
		return;
	len = strcspn(buf, "\n");
	if (len >= LX_COMM_LEN)
		len = LX_COMM_LEN - 1;
	memcpy(out, buf, len);
	out[len] = '\0';
}

/* Adds the threads of process pid to *v (growing it). Returns 0 or -ENOMEM. */
static int scan_process(const char *proc_root, uint32_t pid, struct procscan_thread **v, size_t *n,
			size_t *cap)
{
	char path[4096];
	char program[LX_COMM_LEN];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%u/task", proc_root, pid);
	d = opendir(path);
	if (!d)
		return 0;	/* exited meanwhile */
	read_program(proc_root, pid, program);
	while ((de = readdir(d))) {
		struct procscan_thread t = { .pid = pid };

		memcpy(t.program, program, sizeof(program));
		if (!parse_u32(de->d_name, &t.tid))
			continue;
		snprintf(path, sizeof(path), "%s/%u/task/%u", proc_root, pid, t.tid);
		if (read_thread(path, &t))
			continue;
		if (grow_array((void **)v, cap, *n + 1, sizeof(**v), 256)) {
			err = -ENOMEM;
			break;
		}
		(*v)[(*n)++] = t;
	}
	closedir(d);
	return err;
}

int procscan__threads(const char *proc_root, struct procscan_thread **out, size_t *n)
{
	struct procscan_thread *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;
	int err = 0;

	*out = NULL;
	*n = 0;
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		uint32_t pid;

		if (parse_u32(de->d_name, &pid))
			err = scan_process(proc_root, pid, &v, n, &cap);
	}
	closedir(d);
	if (err) {
		free(v);
		*n = 0;
		return err;
	}
	if (*n)		/* v is NULL when no thread was found: qsort may not be given that */
		qsort(v, *n, sizeof(*v), cmp_tid);
	*out = v;
	return 0;
}

int procscan__thread(const char *proc_root, uint32_t tid, struct procscan_thread *out)
{
	char dir[4096], buf[4096];
	const char *tgid;
	int err;

	*out = (struct procscan_thread){ .tid = tid };
	snprintf(dir, sizeof(dir), "%s/%u", proc_root, tid);
	err = read_thread(dir, out);
	if (err)
		return err;
	snprintf(dir, sizeof(dir), "%s/%u/status", proc_root, tid);
	err = read_small(dir, buf, sizeof(buf));
	if (err)
		return err;
	tgid = strstr(buf, "\nTgid:");
	if (!tgid)
		return -EINVAL;
	out->pid = (uint32_t)strtoul(tgid + 6, NULL, 10);
	read_program(proc_root, out->pid, out->program);
	return 0;
}

uint64_t procscan__resident(const char *proc_root, uint32_t pid)
{
	char path[4096], buf[128];
	unsigned long long size, resident;

	snprintf(path, sizeof(path), "%s/%u/statm", proc_root, pid);
	if (read_small(path, buf, sizeof(buf)) || sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return resident;
}
