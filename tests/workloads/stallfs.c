/* stallfs.c - a FUSE filesystem whose server stops answering on a signal: the filesystem of
 * issue 23's "a stalled filesystem freezes it", for the tests of lib/file_worker.h.
 *
 * usage: stallfs FILE MOUNTPOINT OP [MODE]
 * Serves a copy of FILE (read at start) as MOUNTPOINT/BASENAME, owned by root, mode 0755 (what a
 * server claims costs it nothing: the file looks like one only root can write), in the
 * foreground, many threads. OP is the request that changes on a signal: "open" or "read".
 * SIGUSR1: each later OP request never gets its answer (the thread that took it sleeps until
 * the process dies); SIGUSR2: each fails with EIO. MODE "stall" or "eio" starts so. Prints
 * "pid PID" once the filesystem is served (workload.h's protocol; the file is there then).
 * Unmounted when it dies, however (auto_unmount: fusermount3 watches it). Needs root, /dev/fuse
 * and libfuse3.
 */
#define FUSE_USE_VERSION 31

#include <fcntl.h>
#include <fuse.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "workload.h"

enum mode { SERVE, STALL, FAIL };

static const char *name;	/* "/BASENAME" */
static char *data;
static size_t size;
static bool on_open;		/* OP is "open", else "read" */
static atomic_int mode;

static void on_signal(int sig)
{
	atomic_store(&mode, sig == SIGUSR1 ? STALL : FAIL);
}

/* What an OP request gets: 0 to serve it, or an errno; never returns in STALL. */
static int gate(void)
{
	while (atomic_load(&mode) == STALL)
		usleep(100 * 1000);
	return atomic_load(&mode) == FAIL ? -EIO : 0;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, name))
		return -ENOENT;
	st->st_mode = S_IFREG | 0755;
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, name + 1, NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, name))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return on_open ? gate() : 0;
}

static int fs_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	int err = on_open ? 0 : gate();

	if (err)
		return err;
	if ((size_t)off >= size)
		return 0;
	if (len > size - (size_t)off)
		len = size - (size_t)off;
	memcpy(buf, data + off, len);
	return (int)len;
}

/* Prints the pid once the kernel has the filesystem: FUSE's init is its first request. */
static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	wl_pid();
	fflush(stdout);
	return NULL;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.init = fs_init,
};

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char *fargv[] = { argv[0], "-f", "-o", "fsname=stallfs,auto_unmount", NULL, NULL };
	struct stat st;
	int fd;

	if (argc < 4 || (strcmp(argv[3], "open") && strcmp(argv[3], "read")) ||
	    (argc > 4 && strcmp(argv[4], "stall") && strcmp(argv[4], "eio"))) {
		fprintf(stderr, "usage: stallfs FILE MOUNTPOINT open|read [stall|eio]\n");
		return 2;
	}
	on_open = !strcmp(argv[3], "open");
	if (argc > 4)
		mode = !strcmp(argv[4], "stall") ? STALL : FAIL;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || !(data = malloc((size_t)st.st_size + 1)) ||
	    read(fd, data, (size_t)st.st_size) != st.st_size)
		wl_die(argv[1]);
	close(fd);
	size = (size_t)st.st_size;
	name = strrchr(argv[1], '/') ? strrchr(argv[1], '/') : "/file";
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	fargv[4] = argv[2];
	return fuse_main(5, fargv, &ops, NULL);
}
