/* jitspin.c - spins in code it wrote into anonymous executable memory, as a JIT runtime runs
 * its compiled code: every sample of it lands outside any file mapping, so a symbolizer looks
 * its leaf up in the process's perf map (/tmp/perf-PID.map). The tests make that file hostile.
 *
 * Usage: jitspin [MS [LINES]]: spins for MS ms (default 3000) through COPIES copies of one loop,
 * a few ms per call and ROUNDS calls in a row (~50 ms) per copy, so its samples have many
 * distinct leaves. With LINES it keeps its own perf map as a JIT does: first LINES entries for
 * code elsewhere (a node process's map runs to 100 MB and more), then "jitspin_loop_N" for each
 * copy, appended when the copy first runs (the map grows for COPIES * ~50 ms).
 * Reports "stat jit ADDR" (the code's address).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "workload.h"

#define COPIES 64
#define STRIDE 64
#define ROUNDS 10

/* x86-64: loop: dec %rdi; jnz loop; ret */
static const unsigned char code[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Entries for code below the loops' page, ~90 bytes each. */
static FILE *start_perf_map(uintptr_t jit, long lines)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		wl_die(path);
	for (long i = 0; i < lines; i++)
		fprintf(f, "%lx 40 LazyCompile:~handler%07ld /srv/app/node_modules/package/lib/module%04ld.js:%ld\n",
			(unsigned long)(jit - 0x10000000 + (uintptr_t)i * 0x40), i, i % 9973, i % 4099);
	if (fflush(f))
		wl_die(path);
	return f;
}

int main(int argc, char **argv)
{
	long ms = wl_arg(argc, argv, 1, 3000, 1, 3600 * 1000);
	long lines = wl_arg(argc, argv, 2, -1, 0, 100 * 1000 * 1000);
	FILE *map = NULL;
	long long end;
	unsigned char *jit;
	unsigned long n = 0;

	wl_pid();
	wl_tid("jit");
	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit == MAP_FAILED)
		wl_die("mmap");
	for (int i = 0; i < COPIES; i++)
		memcpy(jit + i * STRIDE, code, sizeof(code));
	if (lines >= 0)
		map = start_perf_map((uintptr_t)jit, lines);
	end = now_ms() + ms;
	for (; now_ms() < end; n++) {
		unsigned long copy = n / ROUNDS % COPIES;
		unsigned char *at = jit + copy * STRIDE;

		if (map && n < COPIES * ROUNDS && n % ROUNDS == 0) {
			fprintf(map, "%lx %zx jitspin_loop_%lu\n", (unsigned long)(uintptr_t)at, sizeof(code), copy);
			fflush(map);
		}
		/* A few ms per call: the clock stays out of the samples. */
		((void (*)(long))(void *)at)(10 * 1000 * 1000);
	}
	if (map)
		fclose(map);
	wl_stat("jit", (long long)(uintptr_t)jit);
	return 0;
}
