/* test_trigger.c - --trigger expressions: what parses into what, the one-line errors, matching
 * with filters, and the message that marks a firing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "user/proc/syscalls.h"
#include "user/flight/trigger.h"

static struct trigger parse_ok(const char *s)
{
	struct trigger t;
	char err[256] = "";

	cr_assert_eq(trigger__parse(s, &t, err, sizeof(err)), 0, "%s: %s", s, err);
	cr_assert_str_eq(t.text, s);
	return t;
}

static void parse_bad(const char *s, const char *want)
{
	struct trigger t;
	char err[256] = "";

	cr_assert_eq(trigger__parse(s, &t, err, sizeof(err)), -EINVAL, "%s parsed", s);
	cr_expect(strstr(err, want), "%s: error '%s' does not say '%s'", s, err, want);
	cr_expect_null(strchr(err, '\n'), "one line");
}

Test(trigger, parses_kinds_units_and_filters)
{
	struct trigger t;

	t = parse_ok("sched-latency>50ms");
	cr_expect_eq(t.kind, TRIGGER_SCHED_LATENCY);
	cr_expect_eq(t.over_ns, 50000000);
	cr_expect_eq(t.nr, -1);
	cr_expect_eq(t.pid, 0);
	cr_expect_str_eq(t.comm, "");

	t = parse_ok("syscall>200ms");
	cr_expect_eq(t.kind, TRIGGER_SYSCALL);
	cr_expect_eq(t.nr, -1);

	t = parse_ok("syscall:read>1.5s,comm=worker,pid=42");
	cr_expect_eq(t.kind, TRIGGER_SYSCALL);
	cr_expect_eq(t.nr, syscalls__nr("read"));
	cr_expect_eq(t.over_ns, 1500000000);
	cr_expect_str_eq(t.comm, "worker");
	cr_expect_eq(t.pid, 42);

	t = parse_ok("offcpu>1s,pid=7");
	cr_expect_eq(t.kind, TRIGGER_OFFCPU);
	cr_expect_eq(t.over_ns, 1000000000);
	cr_expect_eq(t.pid, 7);

	cr_expect_eq(parse_ok("offcpu>250us").over_ns, 250000);
	cr_expect_eq(parse_ok("offcpu>900ns").over_ns, 900);
	/* 15 characters: the longest comm there is. */
	cr_expect_str_eq(parse_ok("offcpu>1s,comm=abcdefghijklmno").comm, "abcdefghijklmno");
}

Test(trigger, bad_expressions_say_what_is_wrong)
{
	parse_bad("sched-latency", "expected KIND>DURATION");
	parse_bad("latency>50ms", "'latency' is not sched-latency, syscall, syscall:NAME or offcpu");
	parse_bad("syscall:nosuch>1s", "'nosuch' is not a syscall name");
	parse_bad("sched-latency>", "a duration must follow '>'");
	parse_bad("sched-latency>50", "needs a unit");
	parse_bad("sched-latency>50min", "'min' in '50min' is not a unit");
	parse_bad("sched-latency>fast", "is not a duration");
	parse_bad("sched-latency>-5ms", "is not a duration");
	parse_bad("sched-latency>0ms", "must be above 0");
	parse_bad("sched-latency>nanms", "is not a duration");
	parse_bad("offcpu>1s,user=root", "'user=root' is not a filter");
	parse_bad("offcpu>1s,", "'' is not a filter");
	parse_bad("offcpu>1s,comm=", "comm= needs a thread name");
	parse_bad("offcpu>1s,comm=abcdefghijklmnop", "longer than 15 characters");
	parse_bad("offcpu>1s,comm=a,comm=b", "comm= given twice");
	parse_bad("offcpu>1s,pid=0", "'0' is not a process id");
	parse_bad("offcpu>1s,pid=12x", "'12x' is not a process id");
	parse_bad("offcpu>1s,pid=-3", "'-3' is not a process id");
	parse_bad("offcpu>1s,pid=99999999", "is not a process id");
	parse_bad("offcpu>1s,pid=1,pid=2", "pid= given twice");
}

Test(trigger, too_long_expression_is_refused)
{
	char s[300];

	memset(s, 'a', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	parse_bad(s, "longer than 127 characters");
}

Test(trigger, matches_kind_threshold_syscall_and_filters)
{
	struct trigger any = parse_ok("syscall>200ms");
	struct trigger rd = parse_ok("syscall:read>200ms,comm=reader,pid=10");
	struct trigger lat = parse_ok("sched-latency>50ms");
	int read_nr = syscalls__nr("read"), write_nr = syscalls__nr("write");

	cr_expect(trigger__match(&any, TRIGGER_SYSCALL, write_nr, 200000001, 1, "x"));
	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, write_nr, 200000000, 1, "x"),
		      "strictly above the threshold");
	cr_expect_not(trigger__match(&any, TRIGGER_OFFCPU, -1, 900000000, 1, "x"));
	cr_expect(trigger__match(&rd, TRIGGER_SYSCALL, read_nr, 300000000, 10, "reader"));
	cr_expect_not(trigger__match(&rd, TRIGGER_SYSCALL, write_nr, 300000000, 10, "reader"));
	cr_expect_not(trigger__match(&rd, TRIGGER_SYSCALL, read_nr, 300000000, 11, "reader"));
	cr_expect_not(trigger__match(&rd, TRIGGER_SYSCALL, read_nr, 300000000, 10, "writer"));
	cr_expect(trigger__match(&lat, TRIGGER_SCHED_LATENCY, -1, 60000000, 99, "any"));
}

Test(trigger, plain_syscall_leaves_out_waits_that_a_name_can_ask_for)
{
	struct trigger any = parse_ok("syscall>1ms");
	struct trigger futex = parse_ok("syscall:futex>1ms");
	int futex_nr = syscalls__nr("futex"), poll_nr = syscalls__nr("epoll_wait");

	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, futex_nr, 5000000, 1, "x"));
	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, poll_nr, 5000000, 1, "x"));
	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, syscalls__nr("nanosleep"), 5000000, 1, "x"));
	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, -1, 5000000, 1, "x"));
	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, syscalls__nr("accept4"), 5000000, 1, "x"));
	cr_expect_not(trigger__match(&any, TRIGGER_SYSCALL, syscalls__nr("wait4"), 5000000, 1, "x"));
	cr_expect(trigger__match(&any, TRIGGER_SYSCALL, syscalls__nr("fsync"), 5000000, 1, "x"));
	/* Shown as GoBlockSelect when it waits for a pipe or socket, yet asked for data. */
	cr_expect(trigger__match(&any, TRIGGER_SYSCALL, syscalls__nr("read"), 5000000, 1, "x"));
	cr_expect(trigger__match(&any, TRIGGER_SYSCALL, syscalls__nr("recvfrom"), 5000000, 1, "x"));
	cr_expect(trigger__match(&futex, TRIGGER_SYSCALL, futex_nr, 5000000, 1, "x"));
}

Test(trigger, describes_a_firing)
{
	struct trigger rd = parse_ok("syscall>200ms");
	struct trigger lat = parse_ok("sched-latency>50ms");
	char buf[200];

	trigger__describe(&rd, syscalls__nr("read"), 301234567, 124, 123, "reader", buf,
			  sizeof(buf));
	cr_expect_str_eq(buf, "syscall read 301.2 ms > 200.0 ms: tid 124 reader (pid 123)");
	trigger__describe(&lat, -1, 1500000000, 7, 7, "stall", buf, sizeof(buf));
	cr_expect_str_eq(buf, "sched-latency 1.50 s > 50.0 ms: tid 7 stall (pid 7)");
	trigger__what(&rd, syscalls__nr("read"), 301234567, buf, sizeof(buf));
	cr_expect_str_eq(buf, "syscall read 301.2 ms > 200.0 ms");
	cr_expect_str_eq(trigger__kind_name(TRIGGER_OFFCPU), "offcpu");
}
