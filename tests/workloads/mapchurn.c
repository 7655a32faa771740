/* mapchurn.c - changes its executable mappings as a JIT runtime or a browser does, thousands
 * of them: maps one page of its own binary's code N times (PROT_EXEC, each its own VMA), runs
 * the code in each, unmaps every other one and maps another page of code (another function) at
 * each address so freed, runs that, unmaps the rest of the first copies, and then spins in the
 * new code at the last reused address. A tracer that keeps a process's mappings must follow each
 * change, and cheaply.
 *
 * Usage: mapchurn [N [MS]]: N mappings (default 64), then MS ms (default 2000) of spinning in
 * spin_b at a reused address, ms of its own CPU time (as many samples on a busy machine). Reports "stat churn_us" (the mapping changes alone, for
 * bench/mmaps.sh) and "stat reused ADDR".
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "workload.h"

#define PAGE 4096UL

/* Each on a page of its own, which is what gets mapped again; leaves without calls, so that
 * their code runs at any address. */
static __attribute__((noinline, aligned(4096))) long spin_a(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("");
	return n;
}

static __attribute__((noinline, aligned(4096))) long spin_b(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("");
	return n;
}

/* The offset in the binary of the code at addr, from /proc/self/maps. */
static off_t file_offset(const void *addr)
{
	unsigned long start, end, off, a = (unsigned long)(uintptr_t)addr;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		wl_die("/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 && a >= start && a < end) {
			fclose(f);
			return (off_t)(a - start + off);
		}
	}
	fprintf(stderr, "mapchurn: %p is in no mapping\n", addr);
	exit(1);
}

typedef long (*spin_fn)(long);

static spin_fn at(unsigned char *page, const void *func)
{
	return (spin_fn)(void *)(page + ((uintptr_t)func & (PAGE - 1)));
}

/* The thread's CPU time so far, in ns. */
static long long cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 64, 2, 1000000);
	long ms = wl_arg(argc, argv, 2, 2000, 0, 3600 * 1000);
	off_t off_a = file_offset((void *)spin_a) & ~(off_t)(PAGE - 1);
	off_t off_b = file_offset((void *)spin_b) & ~(off_t)(PAGE - 1);
	unsigned char **pages = calloc(n, sizeof(*pages)), *reused = NULL;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	long long t0, end;

	if (!pages || fd < 0)
		wl_die("mapchurn");
	wl_pid();
	wl_tid("churn");
	t0 = wl_now_ns() / 1000;
	/* Top-down, each below the last at the same offset: no two merge into one VMA. */
	for (long i = 0; i < n; i++) {
		pages[i] = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off_a);
		if (pages[i] == MAP_FAILED)
			wl_die("mmap");
		at(pages[i], (void *)spin_a)(10);
	}
	for (long i = 0; i < n; i += 2)
		if (munmap(pages[i], PAGE))
			wl_die("munmap");
	for (long i = 0; i < n; i += 2) {
		reused = mmap(pages[i], PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE,
			      fd, off_b);
		if (reused != pages[i])
			wl_die("mmap at a freed address");
		at(reused, (void *)spin_b)(10);
	}
	/* As a JIT frees the code it replaced: the rest of spin_a's copies go. */
	for (long i = 1; i < n; i += 2)
		if (munmap(pages[i], PAGE))
			wl_die("munmap");
	wl_stat("churn_us", wl_now_ns() / 1000 - t0);
	wl_stat("reused", (long long)(uintptr_t)reused);
	end = cpu_ns() + ms * 1000000;
	while (cpu_ns() < end)
		at(reused, (void *)spin_b)(1000000);
	return 0;
}
