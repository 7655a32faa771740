/* test_procstat.c - /proc/PID/stat lines as procscan and the symbolizer read them, through one
 * parser (user/proc/procstat.h): a comm with spaces and parentheses, a long one, the start
 * time at field 22. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "user/proc/procstat.h"

Test(procstat, comm_state_and_start_time)
{
	static const char line[] = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 113 0 0 0 1 2 0 0 20 0 1 "
				   "0 987654 12345678 100 18446744073709551615\n";
	struct procstat ps;

	cr_assert_eq(procstat__parse(line, &ps), 0);
	cr_expect_str_eq(ps.comm, "a (b) c");
	cr_expect_eq(ps.state, 'S');
	cr_expect(ps.has_starttime);
	cr_expect_eq(ps.starttime, 987654ull);
	cr_expect_eq(ps.fields[0], 'S');
}

Test(procstat, long_comm_is_cut_and_bad_lines_refused)
{
	static const char line[] = "7 (0123456789abcdefghij) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 "
				   "1 1\n";
	struct procstat ps;

	cr_assert_eq(procstat__parse(line, &ps), 0);
	cr_expect_eq(strlen(ps.comm), LX_COMM_LEN - 1);
	cr_expect_eq(ps.starttime, 5ull);
	cr_expect_eq(procstat__parse("7 (x R 1", &ps), -EINVAL);
	cr_expect_eq(procstat__parse("7 (x) R 1 2 3", &ps), 0);
	cr_expect(!ps.has_starttime, "no field 22");
	cr_expect_eq(procstat__parse("7 (x)", &ps), -EINVAL);
}
