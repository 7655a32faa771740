/* test_model_annotate.c - the model on annotation records: user events land on the calling
 * thread while it runs, task ids of different processes never collide in the file, and
 * whatever a program (or a lost record) does wrong with tasks and regions is repaired and
 * counted, never written in a form the Go parsers reject. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/tquery.h"
#include "tests/unit/test_model_util.h"

#define T0 1000000000ull
#define CUT "\u2026"

/* Two single-threaded processes, 100 and 200, runnable at start on CPUs the model learns. */
static void open_two(struct mt *t, char **root)
{
	*root = mt_proc_new();
	mt_proc_thread(*root, 100, 100, "alpha", 'R', -1);
	mt_proc_thread(*root, 200, 200, "beta", 'R', -1);
	mt_open(t, 2, MODEL_SYSCALLS_BLOCKING, *root, T0);
}

static const struct gt_event *nth_user(const struct gt_trace *tr, enum gt_type ty, size_t n)
{
	const struct gt_event *ev = gt_trace__events(tr);

	for (size_t i = 0; i < gt_trace__nevents(tr); i++)
		if (ev[i].type == ty && n-- == 0)
			return &ev[i];
	return NULL;
}

Test(model_annotate, processes_with_the_same_task_ids)
{
	const struct gt_event *a, *b;
	struct mt t;
	char *root;

	open_two(&t, &root);
	mt_user(&t, T0 + 10, 0, 100, 100, LX_REC_TASK_BEGIN, 1, 0, "job", NULL, 0);
	mt_user(&t, T0 + 20, 1, 200, 200, LX_REC_TASK_BEGIN, 1, 0, "job", NULL, 0);
	mt_user(&t, T0 + 30, 0, 100, 100, LX_REC_REGION_BEGIN, 1, 0, "step", NULL, 0);
	mt_user(&t, T0 + 40, 0, 100, 100, LX_REC_LOG, 1, 0, "k", "v", 0);
	mt_user(&t, T0 + 50, 0, 100, 100, LX_REC_REGION_END, 1, 0, "step", NULL, 0);
	mt_user(&t, T0 + 60, 1, 200, 200, LX_REC_TASK_END, 1, 0, NULL, NULL, 0);
	mt_user(&t, T0 + 70, 0, 100, 100, LX_REC_TASK_END, 1, 0, NULL, NULL, 0);
	mt_finish(&t, T0 + 100);

	cr_assert_eq(mt_repairs(&t.st), 0);
	cr_assert_eq(t.st.kinds[MODEL_KIND_ANNOTATION], 7);
	a = nth_user(t.trace, GT_EV_USER_TASK_CREATE, 0);
	b = nth_user(t.trace, GT_EV_USER_TASK_CREATE, 1);
	cr_assert(a && b && a->args[0] && b->args[0] && a->args[0] != b->args[0],
		  "both processes' task 1 must get their own trace ids");
	cr_assert_eq((uint32_t)a->g, 100);
	cr_assert_eq((uint32_t)b->g, 200);
	cr_assert_eq(nth_user(t.trace, GT_EV_USER_REGION, 0)->args[0], a->args[0]);
	cr_assert_eq(nth_user(t.trace, GT_EV_USER_LOG, 0)->args[0], a->args[0]);
	cr_assert_eq(nth_user(t.trace, GT_EV_USER_TASK_END, 0)->args[0], b->args[0]);
	cr_assert_eq(nth_user(t.trace, GT_EV_USER_TASK_END, 1)->args[0], a->args[0]);
	for (size_t i = 0; i < gt_trace__nevents(t.trace); i++) {
		const struct gt_event *e = &gt_trace__events(t.trace)[i];

		if (e->type >= GT_EV_USER_TASK_CREATE && e->type <= GT_EV_USER_LOG)
			cr_assert(e->stack && e->g, "user event %u without a running G or a stack", e->type);
	}
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_annotate, region_nesting_is_repaired)
{
	struct mt t;
	char *root;

	open_two(&t, &root);
	/* Ends the outer region while the inner is open: the inner one is ended first. */
	mt_user(&t, T0 + 10, 0, 100, 100, LX_REC_REGION_BEGIN, 0, 0, "outer", NULL, 0);
	mt_user(&t, T0 + 20, 0, 100, 100, LX_REC_REGION_BEGIN, 0, 0, "inner", NULL, 0);
	mt_user(&t, T0 + 30, 0, 100, 100, LX_REC_REGION_END, 0, 0, "outer", NULL, 0);
	/* An end with nothing open: its begin predates the trace, which both parsers accept. */
	mt_user(&t, T0 + 40, 0, 100, 100, LX_REC_REGION_END, 0, 0, "older", NULL, 0);
	/* An end that matches none of the open regions: dropped. */
	mt_user(&t, T0 + 50, 0, 100, 100, LX_REC_REGION_BEGIN, 0, 0, "open", NULL, 0);
	mt_user(&t, T0 + 60, 0, 100, 100, LX_REC_REGION_END, 0, 0, "other", NULL, 0);
	mt_finish(&t, T0 + 100);

	cr_assert_eq(t.st.repairs[MODEL_REPAIR_REGION_NESTING], 2);
	cr_assert_eq(mt_count(t.trace, GT_EV_USER_REGION), 6, "3 begins, 2 ends and the older end");
	mt_close(&t, false);
	mt_proc_free(root);
}

/* A region open while the writer forgets its name (many other names over a small string table)
 * still ends: the end finds it by content, and is written with the begin's name. */
Test(model_annotate, a_region_outlives_its_name_in_the_writer)
{
	const struct gt_event *begin, *end;
	struct gt_writer_stats ws;
	char *root = mt_proc_new(), name[32];
	struct mt t;

	mt_proc_thread(root, 100, 100, "alpha", 'R', -1);
	mt_open_with(&t, 1, MODEL_SYSCALLS_BLOCKING, root, T0, NULL, 4096);
	mt_user(&t, T0 + 10, 0, 100, 100, LX_REC_REGION_BEGIN, 0, 0, "long", NULL, 0);
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "log-key-%u", i);
		mt_user(&t, T0 + 20 + i, 0, 100, 100, LX_REC_LOG, 0, 0, name, "v", 0);
	}
	gt_writer__stats(t.w, &ws);
	cr_assert_gt(ws.strings_forgotten, 1000, "the writer must have forgotten the name");
	mt_user(&t, T0 + 5000, 0, 100, 100, LX_REC_REGION_END, 0, 0, "long", NULL, 0);
	mt_finish(&t, T0 + 6000);

	cr_assert_eq(mt_repairs(&t.st), 0);
	begin = nth_user(t.trace, GT_EV_USER_REGION, 0);
	end = nth_user(t.trace, GT_EV_USER_REGION, 1);
	cr_assert(begin && end && begin->args[1] == 0 && end->args[1] == 1);
	cr_assert_eq(end->args[2], begin->args[2], "the end names the begin's string");
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_annotate, bad_task_records_are_counted)
{
	struct mt t;
	char *root;

	open_two(&t, &root);
	mt_user(&t, T0 + 10, 0, 100, 100, LX_REC_TASK_BEGIN, 5, 0, "a", NULL, 0);
	mt_user(&t, T0 + 20, 0, 100, 100, LX_REC_TASK_BEGIN, 5, 0, "b", NULL, 0);	/* reuse */
	mt_user(&t, T0 + 30, 0, 100, 100, LX_REC_TASK_END, 0, 0, NULL, NULL, 0);	/* background */
	mt_user(&t, T0 + 40, 0, 100, 100, LX_REC_TASK_BEGIN, 0, 0, "c", NULL, 0);	/* id 0 */
	mt_user(&t, T0 + 50, 0, 100, 100, LX_REC_LOG, 1ull << 50, 0, "k", "v", 0);	/* too large */
	/* The end of a task begun before the trace gets an id of its own. */
	mt_user(&t, T0 + 60, 0, 100, 100, LX_REC_TASK_END, 9, 0, NULL, NULL, 0);
	mt_finish(&t, T0 + 100);

	cr_assert_eq(t.st.repairs[MODEL_REPAIR_TASK_REUSE], 1);
	cr_assert_eq(t.st.repairs[MODEL_REPAIR_BAD_RECORD], 3);
	cr_assert_eq(mt_count(t.trace, GT_EV_USER_TASK_CREATE), 2);
	cr_assert_eq(mt_count(t.trace, GT_EV_USER_TASK_END), 1);
	cr_assert_eq(mt_count(t.trace, GT_EV_USER_LOG), 0);
	mt_close(&t, false);
	mt_proc_free(root);
}

Test(model_annotate, cut_and_unreadable_strings_are_marked)
{
	const struct gt_event *e;
	char name[64];
	struct mt t;
	char *root;

	open_two(&t, &root);
	mt_user(&t, T0 + 10, 0, 100, 100, LX_REC_LOG, 0, 0, "cat", "message", LX_USER_NAME_CUT | LX_USER_MSG_CUT);
	mt_user(&t, T0 + 20, 0, 100, 100, LX_REC_REGION_BEGIN, 0, 0, "", NULL, LX_USER_NAME_FAULT);
	mt_user(&t, T0 + 30, 0, 100, 100, LX_REC_REGION_END, 0, 0, "", NULL, 0);
	mt_user(&t, T0 + 40, 0, 100, 100, LX_REC_LOG, 0, 0, "", "", 0);
	mt_user(&t, T0 + 50, 0, 100, 100, LX_REC_LOG, 0, 0, "cat", "", LX_USER_MSG_FAULT);
	mt_finish(&t, T0 + 100);

	e = nth_user(t.trace, GT_EV_USER_LOG, 0);
	cr_assert(e && e->msg_len == strlen("message" CUT) && !memcmp(e->msg, "message" CUT, e->msg_len));
	cr_assert_str_eq(gt_trace__string(t.trace, e->args[1]), "cat" CUT);
	snprintf(name, sizeof(name), "%s", gt_trace__string(t.trace, nth_user(t.trace, GT_EV_USER_REGION, 0)->args[2]));
	cr_assert_str_eq(name, "(unreadable)");
	/* "(unreadable)" begin and "(empty)" end do not match: the end is dropped. */
	cr_assert_eq(t.st.repairs[MODEL_REPAIR_REGION_NESTING], 1);
	cr_assert_eq(mt_count(t.trace, GT_EV_USER_REGION), 1);
	e = nth_user(t.trace, GT_EV_USER_LOG, 1);
	cr_assert(e && e->msg_len == 0);
	cr_assert_str_eq(gt_trace__string(t.trace, e->args[1]), "(empty)");
	/* An unreadable message reads as one, like an unreadable name; an empty one stays empty. */
	e = nth_user(t.trace, GT_EV_USER_LOG, 2);
	cr_assert(e && e->msg_len == strlen("(unreadable)") && !memcmp(e->msg, "(unreadable)", e->msg_len));
	mt_close(&t, false);
	mt_proc_free(root);
}
