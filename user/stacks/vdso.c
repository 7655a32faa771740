/* vdso.c - copies the vDSO this process was given into a memfd (vdso.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/stacks/vdso.h"

/* The size of the [vdso] mapping starting at base, from /proc/self/maps. */
static size_t vdso_size(unsigned long base)
{
	unsigned long start, end;
	char line[512];
	size_t size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base &&
		    strstr(line, "[vdso]")) {
			size = end - start;
			break;
		}
	fclose(f);
	return size;
}

int vdso__open(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	size_t size = base ? vdso_size(base) : 0;
	int fd, err;

	if (!size)
		return -ENOENT;
	fd = memfd_create("lxtrace-vdso", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (write(fd, (const void *)base, size) != (ssize_t)size ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)) {
		err = errno ? -errno : -EIO;
		close(fd);
		return err;
	}
	return fd;
}
