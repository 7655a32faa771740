/* hot.c - symbolizer fixture: an inlined call chain that prints its own code addresses.
 *
 * hot_outer -> hot_middle -> hot_inner (always inlined into hot_middle) -> probe. One line
 * "name=0xADDR ..." on stdout, then it waits to be killed. Lines the tests check carry
 * LINE:NAME markers, which the tests look up in this file rather than hard-coding numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static void *probe_ret, *middle_ret;

__attribute__((noinline)) static int probe(int x)
{
	probe_ret = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static inline __attribute__((always_inline)) int hot_inner(int x)
{
	return probe(x * 2) + 3; /* LINE:inner_call */
}

__attribute__((noinline)) static int hot_middle(int x)
{
	middle_ret = __builtin_return_address(0);
	return hot_inner(x + 5) * 7; /* LINE:middle_call */
}

__attribute__((noinline)) static int hot_outer(int x)
{
	return hot_middle(x) + 11; /* LINE:outer_call */
}

int main(int argc, char **argv)
{
	/* Anonymous executable memory, as a JIT would map for its code. */
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r = hot_outer(argc);

	printf("probe_ret=%p middle_ret=%p hot_outer=%p getppid=%p jit=%p vdso=%p r=%d\n",
	       probe_ret, middle_ret, (void *)hot_outer, (void *)getppid, jit,
	       (void *)getauxval(AT_SYSINFO_EHDR), r);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}
