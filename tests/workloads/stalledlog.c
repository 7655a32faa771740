/* stalledlog.c - an annotation whose strings take STALL_MS to read: they sit in a page that
 * userfaultfd leaves missing until a handler thread fills it, as a page of a stalled FUSE or
 * NFS file would be. Meanwhile a thread on the same CPU sleeps 1 ms at a time, so that CPU's
 * ring keeps receiving records while the probe waits for the page, and another does the same
 * on CPU 1, so the other rings go on too.
 *
 * usage: stalledlog [STALL_MS]   (default 800; root, for kernel-mode userfaults; 2+ CPUs)
 * Logs ("slow", "string") in the background task. Reports: tid main, tid ticker-0,
 * tid ticker-1, stat ticks-0 and ticks-1 (their sleeps). */
#include <lxtrace/annotate.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tests/workloads/workload.h"

static long stall_ms;
static long page;
static int uffd;
static char *region;
static atomic_bool done;
static long ticks[2];

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		wl_die("sched_setaffinity");
}

/* Answers the one fault STALL_MS after it came, with the page holding the strings. */
static void *handler(void *arg)
{
	static const char text[] = "slow\0string";
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;
	struct uffdio_copy copy;
	char *src;

	(void)arg;
	/* No probe attached: nothing reads the page, and no fault comes. (A blocking
	 * userfaultfd cannot be polled.) */
	if (poll(&p, 1, (int)stall_ms + 5000) != 1 || !(p.revents & POLLIN))
		return NULL;
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		wl_die("userfaultfd read");
	wl_sleep_ms(stall_ms);
	src = aligned_alloc(page, page);
	if (!src)
		wl_die("aligned_alloc");
	memset(src, 0, page);
	memcpy(src, text, sizeof(text));
	copy = (struct uffdio_copy){ .dst = (unsigned long)region, .src = (unsigned long)src,
				     .len = page };
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		wl_die("UFFDIO_COPY");
	free(src);
	return NULL;
}

static void *ticker(void *arg)
{
	int cpu = (int)(long)arg;
	char role[16];

	pin_cpu(cpu);
	snprintf(role, sizeof(role), "ticker-%d", cpu);
	wl_tid(role);
	while (!atomic_load(&done)) {
		wl_sleep_ms(1);
		ticks[cpu]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_t th, tk[2];

	stall_ms = wl_arg(argc, argv, 1, 800, 1, 60000);
	page = sysconf(_SC_PAGESIZE);
	wl_pid();
	wl_tid("main");
	pin_cpu(0);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		wl_die("userfaultfd");
	region = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		wl_die("mmap");
	reg = (struct uffdio_register){ .range = { (unsigned long)region, page },
					.mode = UFFDIO_REGISTER_MODE_MISSING };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		wl_die("UFFDIO_REGISTER");
	if (pthread_create(&th, NULL, handler, NULL) ||
	    pthread_create(&tk[0], NULL, ticker, (void *)0L) ||
	    pthread_create(&tk[1], NULL, ticker, (void *)1L))
		wl_die("pthread_create");
	/* Let the ticker settle into its loop, so the stall falls among its records. */
	wl_sleep_ms(50);
	lxtrace_log(LXTRACE_BACKGROUND, region, region + 5);
	wl_sleep_ms(50);
	atomic_store(&done, true);
	pthread_join(tk[0], NULL);
	pthread_join(tk[1], NULL);
	pthread_join(th, NULL);
	wl_stat("ticks-0", ticks[0]);
	wl_stat("ticks-1", ticks[1]);
	return 0;
}
