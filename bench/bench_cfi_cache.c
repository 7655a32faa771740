/* bench_cfi_cache.c - what preparing binaries' unwind rows costs with and without the cache
 * (user/stacks/cfi_cache.h): for each file, its compile (CPU time, as the loader does it), its
 * store, and its rows read back from the cache (CPU and wall time), in an empty private cache
 * directory. The files: those named, or the executable files mapped by the machine's processes.
 *
 * usage: bench_cfi_cache [FILE...]   (as root: only root's files have keys)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "user/stacks/cfi.h"
#include "user/stacks/cfi_cache.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct totals {
	size_t files, keyed, rows;
	uint64_t compile_cpu, keyed_cpu, store_wall, get_cpu, get_wall;
};

static void one(struct disk_cache *c, const char *path, struct totals *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct cfi_table rows = { 0 }, back = { 0 };
	struct cfi_cache_key k;
	uint64_t c0, w0, cpu;
	struct stat st;
	bool settled;
	Elf *elf;
	int err;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	t->files++;
	c0 = cpu_ns();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = !elf ? -EINVAL : cfi__compile(elf, NULL, &rows, NULL);
	if (elf)
		elf_end(elf);
	cpu = cpu_ns() - c0;
	t->compile_cpu += cpu;
	if ((!err || err == -ENOENT) && cfi_cache__key(fd, st.st_dev, st.st_ino, &k, &settled)) {
		t->keyed++;
		t->keyed_cpu += cpu;
		t->rows += rows.n;
		w0 = now_ns();
		cfi_cache__put(c, &k, rows.rows, rows.n);
		t->store_wall += now_ns() - w0;
		w0 = now_ns();
		c0 = cpu_ns();
		if (cfi_cache__get(c, &k, &back) != 1 || back.n != rows.n)
			fprintf(stderr, "bench_cfi_cache: %s: not read back\n", path);
		t->get_cpu += cpu_ns() - c0;
		t->get_wall += now_ns() - w0;
		cfi_table__release(&back);
	}
	cfi_table__release(&rows);
	close(fd);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/lxtrace-bench-cache-XXXXXX", sub[64], line[4096], cmd[128];
	struct totals t = { 0 };
	struct disk_cache *c;
	FILE *list = NULL;

	elf_version(EV_CURRENT);
	if (!mkdtemp(dir))
		return 1;
	snprintf(sub, sizeof(sub), "%s/c", dir);
	c = disk_cache__open(sub, DISK_CACHE_DEFAULT_MAX);
	if (!c) {
		fprintf(stderr, "bench_cfi_cache: %s: %s\n", sub, strerror(errno));
		return 1;
	}
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			one(c, argv[i], &t);
	} else {
		/* One maps file at a time: some may not be readable. */
		list = popen("for f in /proc/[0-9]*/maps; do cat $f 2>/dev/null; done | "
			     "awk '$2 ~ /x/ && $6 ~ /^\\// {print $6}' | sort -u", "r");
		while (list && fgets(line, sizeof(line), list)) {
			line[strcspn(line, "\n")] = '\0';
			one(c, line, &t);
		}
		if (list)
			pclose(list);
	}
	printf("%zu files, %zu with a key (%zu rows)\n", t.files, t.keyed, t.rows);
	printf("compiled:       %.3f s of CPU (all files), %.3f s (the keyed files)\n",
	       t.compile_cpu / 1e9, t.keyed_cpu / 1e9);
	printf("stored:         %.3f s (write, fsync, rename)\n", t.store_wall / 1e9);
	printf("from the cache: %.3f s of CPU, %.3f s (the keyed files)\n", t.get_cpu / 1e9,
	       t.get_wall / 1e9);
	disk_cache__free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? 1 : 0;
}
