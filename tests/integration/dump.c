/* dump.c - `lxtrace dump` prints every event of a real recording, one line each (stack
 * frames indented below), and exits 0. */
#include <stdlib.h>

#include "tests/integration/itest.h"

TestSuite(dump, .fini = itest_fini, .timeout = 120);

Test(dump, prints_every_event_of_a_recording)
{
	const char *argv[] = { NULL, "dump", NULL, NULL };
	size_t lines = 0, sleeps = 0;
	char *out = NULL, *err = NULL;
	int status;

	itest_record(NULL, "sleeper", (const char *[]){ "3", NULL }, 30);
	argv[0] = record__build_path("lxtrace");
	argv[2] = recorder__path(it.rec);
	status = run_capture(argv, 60, &out, &err);
	cr_assert_eq(status, 0, "lxtrace dump exited %d: %s", status, err ? err : "");
	for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (*l != ' ' && *l != '\n')
			lines++;
	}
	cr_assert_eq(lines, gt_trace__nevents(it.trace), "dump printed %zu event lines for %zu events",
		     lines, gt_trace__nevents(it.trace));
	for (char *l = out; l && (l = strstr(l, " GoSleep")); l++)
		sleeps++;
	cr_assert_geq(sleeps, 3, "dump shows %zu GoSleep, the workload slept 3 times", sleeps);
	free(out);
	free(err);
}
