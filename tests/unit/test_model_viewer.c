/* test_model_viewer.c - the model's init phase as a person reads it in both Go viewers' goroutine
 * tables: threads asleep from before the recording to its end are grouped under their program,
 * never waiting for a CPU (docs/viewing.md). */
#include <asm/unistd_64.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/httpget.h"
#include "tests/lib/viewer.h"
#include "tests/unit/test_model_util.h"

#define T0 1000000000ull
#define RECORDING_NS (10 * 1000000000ull)
#define VIEWER_TIMEOUT_MS (60 * 1000)

static char *get(struct viewer *v, const char *ver, const char *page, long deadline)
{
	char why[512], *body = viewer__get(v, page, deadline, why, sizeof(why));

	cr_assert(body, "Go %s viewer, %s: %s (log in %s)", ver, page, why, viewer__log(v));
	return body;
}

/* The id of group name on Go 1.19's Goroutines page (its start PC), 0 when it is not there. */
static uint64_t group_id(const char *page, const char *name)
{
	static const char href[] = "<a href=\"/goroutine?id=";
	char found[64];
	uint64_t id;

	for (const char *p = strstr(page, href); p; p = strstr(p + 1, href))
		if (sscanf(p + strlen(href), "%" SCNu64 "\">%63[^<]</a>", &id, found) == 2 &&
		    !strcmp(found, name))
			return id;
	return 0;
}

/* The longest Scheduler wait bar on Go 1.19's page of a goroutine group, in % of the longest
 * goroutine's time; 0 without any. */
static double sched_wait_bar(const char *page)
{
	static const char span[] = "<span style=\"width:";
	double most = 0, pct;
	char cls[32];

	for (const char *p = strstr(page, span); p; p = strstr(p + 1, span))
		if (sscanf(p + strlen(span), "%lf%%\" class=\"%31[^\"]", &pct, cls) == 2 &&
		    !strcmp(cls, "sched-time") && pct > most)
			most = pct;
	return most;
}

/* A process's two threads asleep in a futex and uninterruptibly in a read, and a shell waiting
 * for its child, through a 10 s recording: each program a group of its threads in both
 * viewers; in 1.19 no nameless group and no Scheduler wait to see (it was all 10 s: its tables name
 * a goroutine by its first GoStart and count it runnable from its creation until then). */
Test(model_viewer, asleep_throughout_in_the_goroutine_tables)
{
	static const char *const versions[] = { "1.19", "1.23" };
	long deadline = http_now_ms() + VIEWER_TIMEOUT_MS;
	char *proc = mt_proc_new(), why[512];
	struct mt t;

	mt_proc_thread(proc, 700, 700, "sleeper", 'S', __NR_futex);
	mt_proc_thread(proc, 700, 701, "sleeper", 'D', __NR_pread64);
	mt_proc_thread(proc, 710, 710, "sh", 'S', __NR_wait4);
	mt_open(&t, 1, MODEL_SYSCALLS_BLOCKING, proc, T0);
	mt_finish(&t, T0 + RECORDING_NS);
	for (size_t i = 0; i < sizeof(versions) / sizeof(*versions); i++) {
		const char *ver = versions[i];
		struct viewer *v = viewer__start(ver, t.path, why, sizeof(why));
		char *page, *group, url[64];
		uint64_t id;

		cr_assert(v, "%s", why);
		page = get(v, ver, "/goroutines", deadline);
		cr_expect_eq(viewer__group_count(ver, page, "sleeper"), 2, "Go %s: group sleeper", ver);
		cr_expect_eq(viewer__group_count(ver, page, "sh"), 1, "Go %s: group sh", ver);
		cr_expect_eq(viewer__group_count(ver, page, "lxtrace"), 1, "Go %s: group lxtrace", ver);
		if (!strcmp(ver, "1.23")) {
			cr_expect(!strstr(page, "(Inactive, no stack trace sampled)"),
				  "Go 1.23: a thread asleep throughout has no stack");
		} else {
			cr_expect(!strstr(page, "\"></a> N="), "Go 1.19: a nameless group");
			id = group_id(page, "sleeper");
			cr_assert_neq(id, 0, "Go 1.19: no link to group sleeper");
			snprintf(url, sizeof(url), "/goroutine?id=%" PRIu64, id);
			group = get(v, ver, url, deadline);
			/* 1 ns, from its creation to its start one tick later. */
			cr_expect_lt(sched_wait_bar(group), 0.005, "Go 1.19 %s: a thread waits for "
				     "a CPU %.2f%% of the recording", url, sched_wait_bar(group));
			free(group);
		}
		free(page);
		viewer__stop(v);
	}
	mt_close(&t, false);
	mt_proc_free(proc);
}
