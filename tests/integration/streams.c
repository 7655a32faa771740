/* streams.c - build/tests/capture-stream, the recorder of the golden tests' fixtures, still
 * records what they need: a command's stream with its switches and syscall entries, the
 * threads the model's start would create, and the kallsyms lines of its kernel addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/itest.h"
#include "tests/lib/stream.h"

static char prefix[64];

/* Removes the fixture files, whatever the test did. */
static void remove_fixture(void)
{
	char path[128];

	for (const char *ext = "stream\0proc\0kallsyms\0"; *ext; ext += strlen(ext) + 1) {
		snprintf(path, sizeof(path), "%s.%s", prefix, ext);
		unlink(path);
	}
}

TestSuite(streams, .fini = remove_fixture, .timeout = 60);

Test(streams, capture_stream_writes_a_fixture)
{
	char tool[4096], script[4200], path[128], *err = NULL, line[512];
	/* sysloop alone may never leave its CPU while traced (its last switch comes after it left
	 * the targets), and so carry no kernel stack: the shell waiting for it always does. */
	const char *argv[] = { tool, prefix, "--", "/bin/sh", "-c", script, NULL };
	size_t switches = 0, syscalls = 0, lines = 0;
	struct stream s;
	int status;
	FILE *f;

	if (geteuid())
		cr_skip_test("needs root");
	/* Both give static storage, overwritten by the next call. */
	snprintf(tool, sizeof(tool), "%s", record__build_path("tests/capture-stream"));
	snprintf(script, sizeof(script), "%s 2000; true", record__workload_path("sysloop"));
	snprintf(prefix, sizeof(prefix), "/tmp/lxtrace-stream-%d", (int)getpid());
	status = run_capture(argv, 30, NULL, &err);
	cr_assert_eq(status, 0, "capture-stream exited %d: %s", status, err ? err : "");
	snprintf(path, sizeof(path), "%s.stream", prefix);
	cr_assert_eq(stream__load(&s, path), 0);
	cr_expect_gt(s.ncpus, 0);
	cr_expect_gt(s.end, s.start);
	for (size_t i = 0; i < s.n; i++) {
		if (!s.v[i].rec)
			continue;
		cr_expect_geq(s.v[i].rec->ts, s.start, "times start at the recording's start");
		switches += s.v[i].rec->type == LX_REC_SWITCH;
		syscalls += s.v[i].rec->type == LX_REC_SYSCALL;
	}
	cr_expect_gt(switches, 0);
	cr_expect_geq(syscalls, 2000, "every getppid of the command is an entry");
	stream__free(&s);
	snprintf(path, sizeof(path), "%s.proc", prefix);
	f = fopen(path, "re");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	cr_expect_eq(lines, 1, "the command's one thread, waiting to be let go");
	snprintf(path, sizeof(path), "%s.kallsyms", prefix);
	f = fopen(path, "re");
	cr_assert_not_null(f);
	cr_expect(fgets(line, sizeof(line), f), "the stream's kernel addresses have symbols");
	fclose(f);
	free(err);
}
