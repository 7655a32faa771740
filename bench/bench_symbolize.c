/* bench_symbolize.c - cost of symbolizing user stacks: µs per stack of FRAMES distinct frames,
 * cold (binaries' DWARF not read yet), warm (new addresses, binaries loaded) and cached
 * (addresses seen before), plus the cost of noting a process whose binaries are cached.
 *
 * The addresses are random instructions of this process's own code: libc (with its separate
 * debug file when libc6-dbg is installed), libdw and libstdc++ (symbol tables only on a
 * stock system) and this binary (DWARF), so each stack mixes the cases a real one meets.
 * Every frame but the leaf is looked up as a return address, as for a sampled stack. Last,
 * new addresses of each binary alone show what DWARF costs against a symbol table only.
 *
 * usage: bench_symbolize [STACKS [FRAMES]]
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/rnd.h"
#include "lib/clock.h"
#include "user/stacks/symbolize.h"

#define MAX_TEXTS 8

struct text {
	const char *name;
	uint64_t start, len;
};

static struct text texts[MAX_TEXTS];
static int ntexts;

static int add_text(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "(main)";

	if (strcmp(name, "(main)") && !strstr(name, "libc.so") && !strstr(name, "libdw") &&
	    !strstr(name, "libstdc++"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && ntexts < MAX_TEXTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			texts[ntexts++] = (struct text){ name, info->dlpi_addr + ph->p_vaddr,
							 ph->p_memsz };
	}
	return 0;
}

static uint64_t random_addr(void)
{
	const struct text *t = &texts[rnd((unsigned)ntexts)];

	return t->start + rnd((unsigned)t->len);
}

/* Symbolizes every stack; returns µs per stack, or -1 on error. */
static double run(struct symbolizer *s, const uint64_t *addrs, size_t nstacks, int nframes,
		  size_t *frames_out)
{
	struct sym_frame out[64];
	double t0 = now_ns() / 1e3;

	*frames_out = 0;
	for (size_t i = 0; i < nstacks; i++) {
		for (int j = 0; j < nframes; j++) {
			int n = symbolizer__user(s, getpid(), addrs[i * (size_t)nframes + (size_t)j],
						 j > 0, out, 64);

			if (n < 0)
				return -1;
			*frames_out += (size_t)n;
		}
	}
	return (now_ns() / 1e3 - t0) / (double)nstacks;
}

int main(int argc, char **argv)
{
	size_t nstacks = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, nframes_out;
	int nframes = argc > 2 ? atoi(argv[2]) : 10;
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t *a, *b;
	double cold, warm, cached, note;
	const int notes = 200;

	dl_iterate_phdr(add_text, NULL);
	a = calloc(nstacks * (size_t)nframes, sizeof(*a));
	b = calloc(nstacks * (size_t)nframes, sizeof(*b));
	s = symbolizer__new(NULL);
	if (!nstacks || nframes < 1 || nframes > 64 || !ntexts || !a || !b || !s) {
		fprintf(stderr, "bench_symbolize: bad arguments, no text found or out of memory\n");
		return 1;
	}
	for (int i = 0; i < ntexts; i++)
		printf("text %-50s %8.1f KiB\n", texts[i].name, texts[i].len / 1024.0);
	for (size_t i = 0; i < nstacks * (size_t)nframes; i++) {
		a[i] = random_addr();
		b[i] = random_addr();
	}
	note = now_ns() / 1e3;
	if (symbolizer__note_process(s, getpid())) {
		fprintf(stderr, "bench_symbolize: cannot note pid %d\n", getpid());
		return 1;
	}
	printf("first note (opens the binaries): %.1f µs\n", now_ns() / 1e3 - note);
	note = now_ns() / 1e3;
	for (int i = 0; i < notes; i++)
		symbolizer__note_process(s, getpid());
	printf("note with every binary cached: %.1f µs\n", (now_ns() / 1e3 - note) / notes);

	cold = run(s, a, nstacks, nframes, &nframes_out);
	printf("cold:   %zu stacks x %d addresses -> %zu frames: %.1f µs/stack\n", nstacks, nframes,
	       nframes_out, cold);
	warm = run(s, b, nstacks, nframes, &nframes_out);
	printf("warm:   %zu new stacks: %.1f µs/stack (%.1f ms per thousand)\n", nstacks, warm,
	       warm);
	cached = run(s, a, nstacks, nframes, &nframes_out);
	printf("cached: the first stacks again: %.2f µs/stack\n", cached);
	for (int i = 0; i < ntexts; i++) {
		struct sym_frame out[64];
		double t0 = now_ns() / 1e3;
		const int n = 2000;

		for (int j = 0; j < n; j++)
			if (symbolizer__user(s, getpid(), texts[i].start + rnd((unsigned)texts[i].len),
					     true, out, 64) < 0)
				return 1;
		printf("warm, %s alone: %.1f µs/address\n", texts[i].name, (now_ns() / 1e3 - t0) / n);
	}
	symbolizer__stats(s, &st);
	printf("modules %lu (failed %lu), lookups %lu, cache hits %lu, unknown frames %lu\n",
	       (unsigned long)st.modules, (unsigned long)st.modules_failed,
	       (unsigned long)st.lookups, (unsigned long)st.cache_hits,
	       (unsigned long)st.unknown);
	symbolizer__free(s);
	free(a);
	free(b);
	return cold < 0 || warm < 0 || cached < 0;
}
