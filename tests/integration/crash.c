/* crash.c - a recording killed (kill -9) at a random moment under load leaves a file that,
 * once `lxtrace repair` has run, both Go parsers and both viewers open: Go 1.19's viewer
 * panicked before serving a page on 4 of 5 such files (issue 12). The moments are drawn from
 * a seed the log prints; LXTRACE_TEST_SEED=N replays them. */
#include <sys/stat.h>
#include <time.h>

#include "tests/integration/itest.h"

#define ROUNDS 10

TestSuite(crash, .fini = itest_fini, .timeout = 1200);

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

/* Runs `lxtrace repair path`; returns its summary line (malloc'd). */
static char *repair(const char *path)
{
	const char *argv[] = { record__build_path("lxtrace"), "repair", path, NULL };
	char *out = NULL, *err = NULL;
	int status = run_capture(argv, 120, &out, &err);

	cr_assert_eq(status, 0, "lxtrace repair %s: exit %d: %s", path, status, err ? err : "");
	cr_assert(out && strstr(out, path), "lxtrace repair printed no summary: %s", out ? out : "");
	free(err);
	return out;
}

Test(crash, kill9_at_random_moments_then_repair)
{
	const char *seed_env = getenv("LXTRACE_TEST_SEED");
	unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 10) : (unsigned)time(NULL);
	size_t running = 0;

	cr_log_info("crash: seed %u", seed);
	srand(seed);
	for (int i = 0; i < ROUNDS; i++) {
		long delay = rand() % 2000;
		char why[4096], *summary, *again;
		struct stat before;

		itest_start(NULL);
		it.wl = workload__start("stress", (const char *[]){ "6000", "2", "4", NULL });
		cr_assert(it.wl, "cannot start the load: %s", strerror(errno));
		/* The moment is drawn after the first batches reach the file, however long a busy
		 * machine takes for that: a file of a header alone is no trace to repair. */
		for (int w = 0; w < 400 && (stat(recorder__path(it.rec), &before) ||
					   before.st_size <= GT_HEADER_LEN); w++)
			sleep_ms(50);
		sleep_ms(delay);
		itest_stop(SIGKILL, 128 + SIGKILL);
		workload__free(it.wl);
		it.wl = NULL;

		cr_assert_eq(stat(recorder__path(it.rec), &before), 0);
		cr_assert_gt(before.st_size, GT_HEADER_LEN, "round %d: nothing written in 20 s of load",
			     i);
		summary = repair(recorder__path(it.rec));
		cr_log_info("round %d: killed %ld ms after the first batches, at %lld bytes: %s", i,
			    delay, (long long)before.st_size, summary);
		running += strstr(summary, "stopped 0 running") == NULL && strstr(summary, "kept");
		cr_assert(goparse_both_ok(recorder__path(it.rec), why, sizeof(why)), "round %d: %s", i,
			  why);
		cr_assert(goparse_views_ok(recorder__path(it.rec), why, sizeof(why)), "round %d: %s",
			  i, why);
		/* Once is enough. */
		again = repair(recorder__path(it.rec));
		cr_assert(strstr(again, "nothing to do"), "round %d: repaired twice: %s", i, again);
		free(summary);
		free(again);
		itest_fini();
	}
	cr_log_info("%zu of %d files had goroutines running where they were cut", running, ROUNDS);
}
