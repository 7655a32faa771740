/* threads.c - thread lifetimes: each thread the workload creates is one GoCreate, made by
 * its creator, and one GoEnd.
 *
 * Names: a thread is named at its GoCreate after its creator's program (user/stacks/idents.h),
 * and its other stacks carry "COMM (pid PID)"; an exec starts a new goroutine named after the
 * new program; a rename (pthread_setname_np, a write to its comm) changes the COMM its later
 * stacks carry, not the program it is grouped under. */
#include "tests/integration/itest.h"

#define THREADS 50

TestSuite(threads, .fini = itest_fini, .timeout = 120);

Test(threads, create_and_exit_are_gocreate_and_goend)
{
	const char *role, *ident, *prog;
	pid_t tid, main_tid;
	size_t children = 0;

	itest_record(NULL, "threads", (const char *[]){ "50", NULL }, 60);
	main_tid = itest_tid("main");
	ident = itest_ident("threads");
	prog = itest_program("threads");
	/* The process itself: forked by the test, a new goroutine at its exec, exited after
	 * joining its children. */
	itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_CREATE), main_tid) == 2 &&
		     tq_count(it.trace, TQ_BIT(GT_EV_GO_END), main_tid) == 2, main_tid,
		     "main thread: %zu GoCreate, %zu GoEnd, expected 2 each (fork, exec)",
		     tq_count(it.trace, TQ_BIT(GT_EV_GO_CREATE), main_tid),
		     tq_count(it.trace, TQ_BIT(GT_EV_GO_END), main_tid));
	for (size_t k = 0; workload__thread(it.wl, k, &role, &tid); k++) {
		const struct gt_event *create;
		const char *name;
		size_t i = 0, creates, ends;

		if (tid == main_tid)
			continue;
		children++;
		creates = tq_count(it.trace, TQ_BIT(GT_EV_GO_CREATE), tid);
		ends = tq_count(it.trace, TQ_BIT(GT_EV_GO_END), tid);
		itest_expect(creates == 1 && ends == 1, tid, "%s (tid %d): %zu GoCreate, %zu GoEnd, expected 1 each",
			     role, tid, creates, ends);
		create = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_CREATE), tid);
		itest_expect((uint32_t)create->g == (uint32_t)main_tid, tid,
			     "%s: GoCreate made by goroutine %llu, expected the creator, tid %d",
			     role, (unsigned long long)create->g, main_tid);
		name = tq_outermost(tq_create_stack(it.trace, create));
		itest_expect(name && !strcmp(name, prog), tid, "%s: named '%s', expected '%s'",
			     role, name ? name : "(no new stack)", prog);
	}
	{
		/* The process was forked by this test: its first goroutine is named after its
		 * creator's program; its exec starts the next one, named after its own. */
		const struct gt_event *create;
		const char *name;
		size_t i = 0;

		create = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_CREATE), main_tid);
		name = tq_outermost(tq_create_stack(it.trace, create));
		itest_expect(name && strcmp(name, prog), main_tid,
			     "the forked process is named '%s', expected its creator's program", name ? name : "(no new stack)");
		itest_expect(tq_count_created(it.trace, main_tid, prog) == 1, main_tid,
			     "no goroutine of the exec named '%s'", prog);
	}
	cr_assert_eq(children, THREADS, "workload reported %zu children, expected %d", children, THREADS);
	cr_assert(tq_has_func(it.trace, main_tid, ident), "the creator's stacks do not name it '%s'", ident);
}

/* A shell renames itself through /proc/self/comm and then waits for two children: its waits
 * carry the new name (task_rename), its group stays the program's. Before: "sh (pid N)"
 * throughout, as no rename reached the trace. */
Test(threads, a_thread_renamed_after_its_start_carries_its_new_name)
{
	const struct gt_event *ev;
	char ident[64];
	size_t renamed = 0, old = 0;
	pid_t pid;
	struct workload *w;

	itest_start(NULL);
	w = workload__start("/bin/sh", (const char *[]){ "-c", "printf lxrenamed > /proc/self/comm; "
						      "sleep 0.1; sleep 0.1", NULL });
	cr_assert(w, "cannot start sh: %s", strerror(errno));
	pid = workload__pid(w);
	cr_assert_eq(workload__finish(w, 30), 0);
	workload__free(w);
	itest_stop(SIGINT, 0);
	itest_load();
	snprintf(ident, sizeof(ident), "lxrenamed (pid %d)", (int)pid);
	ev = gt_trace__events(it.trace);
	for (size_t i = 0; i < gt_trace__nevents(it.trace); i++) {
		const char *proc = tq_process(ev[i].stack);

		if (!proc || (uint32_t)tq_subject(&ev[i]) != (uint32_t)pid)
			continue;
		renamed += !strcmp(proc, ident);
		old += !strncmp(proc, "sh (pid ", 8);
	}
	cr_log_info("sh (pid %d): %zu stacks as 'lxrenamed', %zu as 'sh'", (int)pid, renamed, old);
	cr_assert_geq(renamed, 2, "the waits after the rename do not carry '%s' (%zu as sh)", ident,
		      old);
}

/* A non-leader thread execs: its goroutine ends at the exec and creates the next life of the
 * leader's tid, which carries on under the new program's name (docs/model.md, "Exec"). */
Test(threads, non_leader_exec_ends_the_execer)
{
	pid_t execer, pid;
	char name[64];
	const struct gt_event *create;
	size_t i = 0, n;

	itest_record(NULL, "execthread", (const char *[]){ NULL }, 30);
	execer = itest_tid("execer");
	pid = workload__pid(it.wl);
	cr_assert_eq(itest_tid("after"), pid, "after the exec the thread has the pid's tid");
	itest_expect(tq_count(it.trace, TQ_BIT(GT_EV_GO_END), execer) == 1, execer,
		     "exec'er: %zu GoEnd, expected 1", tq_count(it.trace, TQ_BIT(GT_EV_GO_END), execer));
	/* The pid's goroutines: the leader's first life, and the one the exec'er created. */
	n = 0;
	while ((create = tq_next(it.trace, &i, TQ_BIT(GT_EV_GO_CREATE), pid))) {
		if ((uint32_t)create->g == (uint32_t)execer && create->args[0] >> 32)
			n++;
		i++;
	}
	itest_expect(n == 1, pid, "%zu later lives of tid %d created by the exec'er, expected 1", n,
		     (int)pid);
	snprintf(name, sizeof(name), "execthread");
	cr_assert_eq(tq_count_created(it.trace, pid, name), 1, "no goroutine of tid %d named '%s'",
		     (int)pid, name);
}
