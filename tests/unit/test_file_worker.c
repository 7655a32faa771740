/* test_file_worker.c - jobs in the file worker (lib/file_worker.h): a descriptor comes back, a
 * job that never ends is given up after the bounded wait and its key's jobs are waited for
 * briefly, then refused at once while enough of them run, a late job's answer goes to the next
 * ask for the same file, a job that says it cannot stall is waited for past the bound, and too
 * many stuck jobs refuse every other. Each test runs in its own process, with its own worker. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/file_worker.h"

TestSuite(file_worker, .timeout = 30);

/* Opens the path it is given. */
static int open_job(struct file_job *job, const void *arg)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Never ends, as a read of a file whose server does not answer. */
static int stuck_job(struct file_job *job, const void *arg)
{
	for (;;)
		pause();
	return -EINTR;
}

/* Opens the path it is given after twice the wait, as a path walk on a loaded disk may. */
static int late_job(struct file_job *job, const void *arg)
{
	usleep((useconds_t)(2 * FILE_WORKER_WAIT_NS / 1000));
	return open_job(job, arg);
}

/* Takes twice the wait, having said it cannot stall. */
static int slow_job(struct file_job *job, const void *arg)
{
	file_job__unbounded(job);
	usleep((useconds_t)(2 * FILE_WORKER_WAIT_NS / 1000));
	return -ENOENT;
}

Test(file_worker, a_descriptor_comes_back_and_errors_pass_through)
{
	struct stat a, b;
	int fd;

	cr_assert_eq(file_worker__start(), 0);
	fd = file_worker__run(open_job, "/proc/self/stat", sizeof("/proc/self/stat"), 0, 0, NULL);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	cr_assert_eq(fstat(fd, &a), 0);
	cr_assert_eq(stat("/proc/self/stat", &b), 0);
	cr_expect_eq(a.st_dev, b.st_dev);
	close(fd);
	cr_expect_eq(file_worker__run(open_job, "/nonexistent", sizeof("/nonexistent"), 0, 0, NULL),
		     -ENOENT);
}

Test(file_worker, a_job_that_never_ends_is_given_up_and_its_key_refused_at_once)
{
	uint64_t t0 = now_ns(), took;
	bool unbounded = true;

	cr_assert_eq(file_worker__run(stuck_job, "", 1, 42, 0, &unbounded), -ETIMEDOUT);
	took = now_ns() - t0;
	cr_expect_geq(took, FILE_WORKER_WAIT_NS);
	cr_expect_lt(took, 10 * FILE_WORKER_WAIT_NS, "waited %.2f s", took / 1e9);
	cr_expect_not(unbounded);
	/* The key is slow now: its jobs are waited for briefly, and refused at once once
	 * FILE_WORKER_KEY_LATE_MAX of them are late. */
	t0 = now_ns();
	for (int i = 1; i < FILE_WORKER_KEY_LATE_MAX; i++)
		cr_expect_eq(file_worker__run(stuck_job, "", 1, 42, (uint64_t)i, NULL), -ETIMEDOUT);
	cr_expect_eq(file_worker__run(open_job, "/proc/self/stat", sizeof("/proc/self/stat"), 42,
				      0, NULL), -ETIMEDOUT);
	cr_expect_lt(now_ns() - t0, FILE_WORKER_WAIT_NS / 2, "the stalled key was waited for");
	cr_expect(file_worker__stalled(42));
	/* Another key is not refused for it. */
	cr_expect_not(file_worker__stalled(43));
	cr_expect_geq(file_worker__run(open_job, "/proc/self/stat", sizeof("/proc/self/stat"), 43,
				       0, NULL), 0);
}

Test(file_worker, a_late_job_answers_the_next_ask_and_frees_its_key)
{
	const char path[] = "/proc/self/stat";
	int fd;

	cr_assert_eq(file_worker__run(late_job, path, sizeof(path), 42, 1, NULL), -ETIMEDOUT);
	/* Late, not refused; meanwhile the key's other files are still read. */
	fd = file_worker__run(open_job, path, sizeof(path), 42, 2, NULL);
	cr_expect_geq(fd, 0, "the slow key is refused: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	while (file_worker__stalled(42))
		usleep(10 * 1000);
	/* Its answer goes to the next job for the same file, which does not run (it would fail). */
	fd = file_worker__run(open_job, "/nonexistent", sizeof("/nonexistent"), 42, 1, NULL);
	cr_expect_geq(fd, 0, "the late job's descriptor was not kept: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
	/* The slow key's other files are waited for again. */
	fd = file_worker__run(open_job, path, sizeof(path), 42, 2, NULL);
	cr_expect_geq(fd, 0, "the slow key is still refused: %s", strerror(-fd));
	if (fd >= 0)
		close(fd);
}

Test(file_worker, a_job_that_cannot_stall_is_waited_for_to_its_end)
{
	bool unbounded = false;

	cr_expect_eq(file_worker__run(slow_job, "", 1, 7, 0, &unbounded), -ENOENT);
	cr_expect(unbounded);
}

Test(file_worker, too_many_stuck_jobs_refuse_every_other)
{
	uint64_t t0;

	for (int i = 0; i < FILE_WORKER_STUCK_MAX; i++)
		cr_assert_eq(file_worker__run(stuck_job, "", 1, 0, 0, NULL), -ETIMEDOUT);
	t0 = now_ns();
	cr_expect_eq(file_worker__run(open_job, "/proc/self/stat", sizeof("/proc/self/stat"), 0,
				      0, NULL), -ETIMEDOUT);
	cr_expect_lt(now_ns() - t0, FILE_WORKER_WAIT_NS / 2, "waited with every worker stuck");
}
