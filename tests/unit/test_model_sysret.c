/* test_model_sysret.c - the model pairs syscall entries with their returns (model_opts.sysrets,
 * --syscalls=all): in the go1.23 file a syscall lasts from its entry to its return, or to
 * its thread's block in it; a return that never came is repaired at the next entry and
 * counted, and a return with no entry open is ignored, never made into a syscall. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/goparse.h"
#include "tests/unit/test_model_util.h"

#define T0 1000000000ull
#define TID 100
/* Go 1.23's -d=1 lines where TID's goroutine enters and leaves a syscall. */
#define BEGIN "GoID=100 Running->Syscall"
#define END "GoID=100 Syscall->"

/* Thread TID runs on CPU 0 from T0 + 10, in a go1.23 file with syscall returns. */
static void open_v2(struct mt *t, char **root, bool sysrets)
{
	struct model_opts base = { .sz = sizeof(base), .writer2 = (struct go123_writer *)&base,
				   .sysrets = sysrets };

	*root = mt_proc_new();
	mt_proc_thread(*root, TID, TID, "alpha", 'R', -1);
	mt_open_with(t, 2, MODEL_SYSCALLS_ALL, *root, T0, &base, 0);
	mt_switch(t, T0 + 10, 0, 0, TID, LX_PREV_RUNNABLE, -1);
}

/* Go 1.23's -d=1 text of the file: its events one a line. */
static char *events_of(struct mt *t)
{
	struct goparse_result r;
	char *text = NULL;

	cr_assert_eq(goparse_123_text(t->path, 1, &r, &text), 0);
	cr_assert(r.ok, "go 1.23 -d=1: %s", r.error);
	return text;
}

/* The time of the n-th (from 0) line of the text holding both what and tid=TID's M. */
static long long nth_time(const char *text, const char *what, int n)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');
		const char *hit = strstr(l, what);
		const char *at = strstr(l, "Time=");

		if (!hit || !at || (end && hit > end) || n-- > 0)
			continue;
		return atoll(at + 5);
	}
	return -1;
}

Test(model_sysret, entry_and_return_pair)
{
	struct mt t;
	char *root, *text;
	long long b0, e0, b1, e1;

	open_v2(&t, &root, true);
	mt_syscall(&t, T0 + 1000, 0, TID, 0);
	mt_sysret(&t, T0 + 4000, 0, TID);
	mt_syscall(&t, T0 + 10000, 0, TID, 1);
	mt_sysret(&t, T0 + 10500, 0, TID);
	mt_finish(&t, T0 + 20000);
	text = events_of(&t);
	b0 = nth_time(text, BEGIN, 0);
	e0 = nth_time(text, END, 0);
	b1 = nth_time(text, BEGIN, 1);
	e1 = nth_time(text, END, 1);
	cr_assert(b0 >= 0 && e0 >= 0 && b1 >= 0 && e1 >= 0, "%s", text);
	cr_expect_eq(e0 - b0, 3000, "first syscall: %lld ns\n%s", e0 - b0, text);
	cr_expect_eq(e1 - b1, 500, "second syscall: %lld ns", e1 - b1);
	cr_expect_eq(t.st.kinds[MODEL_KIND_SYSCALL], 2);
	cr_expect_eq(t.st.kinds[MODEL_KIND_SYSRET], 2);
	cr_expect_eq(mt_repairs(&t.st), 0);
	free(text);
	mt_close(&t, false);
	mt_proc_free(root);
}

/* The first return is lost: the syscall ends at the next entry, counted; a return after the
 * thread's last one ended pairs with nothing. */
Test(model_sysret, missing_return_is_repaired)
{
	struct mt t;
	char *root, *text;

	open_v2(&t, &root, true);
	mt_syscall(&t, T0 + 1000, 0, TID, 0);
	mt_syscall(&t, T0 + 5000, 0, TID, 1);
	mt_sysret(&t, T0 + 6000, 0, TID);
	mt_sysret(&t, T0 + 7000, 0, TID);
	mt_finish(&t, T0 + 20000);
	text = events_of(&t);
	cr_expect_eq(nth_time(text, END, 0) - nth_time(text, BEGIN, 0), 4000, "%s", text);
	/* Begun after the end: 1 ns later, each event having a time of its own. */
	cr_expect_eq(nth_time(text, END, 1) - nth_time(text, BEGIN, 1), 999);
	cr_expect_eq(nth_time(text, END, 2), -1, "a return with no entry: %s", text);
	cr_expect_eq(t.st.repairs[MODEL_REPAIR_NO_SYSRET], 1);
	cr_expect_eq(t.st.ignored, 1);
	free(text);
	mt_close(&t, false);
	mt_proc_free(root);
}

/* A thread that sleeps in its syscall leaves the syscall as it blocks, with the syscall's name
 * as the reason; its return later is nothing more. One still in a syscall when the recording
 * ends is left in it: the file ends there. */
Test(model_sysret, block_ends_the_syscall)
{
	struct mt t;
	char *root, *text;

	open_v2(&t, &root, true);
	mt_syscall(&t, T0 + 1000, 0, TID, 35);	/* nanosleep */
	mt_switch(&t, T0 + 3000, 0, TID, 0, LX_PREV_SLEEP, 35);
	mt_wakeup(&t, T0 + 50000, 1, TID);
	mt_switch(&t, T0 + 50100, 0, 0, TID, LX_PREV_RUNNABLE, -1);
	mt_sysret(&t, T0 + 50200, 0, TID);
	mt_syscall(&t, T0 + 60000, 0, TID, 0);
	mt_finish(&t, T0 + 70000);
	text = events_of(&t);
	cr_expect_eq(nth_time(text, END, 0) - nth_time(text, BEGIN, 0), 2000,
		     "%s", text);
	cr_expect_neq(strstr(text, "nanosleep"), NULL, "the block keeps its reason: %s", text);
	cr_expect_eq(nth_time(text, BEGIN, 1) - nth_time(text, BEGIN, 0), 59000, "%s", text);
	cr_expect_eq(nth_time(text, END, 1), -1, "%s", text);
	cr_expect_eq(mt_repairs(&t.st), 0);
	free(text);
	mt_close(&t, false);
	mt_proc_free(root);
}

/* Without returns in the records (sysrets false: a stream recorded before them) an entry is
 * a syscall of no length, as before. */
Test(model_sysret, without_returns_no_length)
{
	struct mt t;
	char *root, *text;

	open_v2(&t, &root, false);
	mt_syscall(&t, T0 + 1000, 0, TID, 0);
	mt_sysret(&t, T0 + 4000, 0, TID);
	mt_finish(&t, T0 + 20000);
	text = events_of(&t);
	cr_expect_leq(nth_time(text, END, 0) - nth_time(text, BEGIN, 0), 1, "%s", text);
	cr_expect_eq(t.st.ignored, 1);
	free(text);
	mt_close(&t, false);
	mt_proc_free(root);
}
