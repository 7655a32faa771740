/* file_worker.c - the process that runs jobs on files whose reads may never end, and the bounded
 * wait for their answers (file_worker.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/file_worker.h"
#include "lib/grow.h"

/* The worker's nice value (its threads' too). */
#define WORKER_NICE (-10)

/* The worker's descriptor of the request socket, after the others are closed. */
#define WORKER_SOCK 3

/* What lxtrace sends: the job, then its argument; the reply socket travels with it. */
struct request {
	file_job_fn fn;
	size_t len;
};

/* What the worker answers on the reply socket: UNBOUNDED, then DONE with the job's result
 * (and its descriptor, when one). */
enum { UNBOUNDED, DONE };

struct answer {
	int kind;
	int result;
};

struct file_job {
	file_job_fn fn;
	int reply;
	_Alignas(max_align_t) char arg[];	/* the job reads its struct in place */
};

/* A job past its wait: running until its answer comes, then kept for the next job that asks
 * for the same (key, what). */
struct late {
	int reply;		/* its reply socket while it runs; -1 once it ended */
	uint64_t key, what;
	int result;		/* once it ended: its descriptor or negative errno */
	bool unbounded;		/* it called file_job__unbounded */
};

/* One worker for the process: the jobs late in it are the process's, whichever component ran
 * them. */
static struct {
	pthread_mutex_t lock;
	bool started;
	int sock;		/* lxtrace's end of the request socket; -1: no worker */
	pid_t pid;		/* the worker's, once started */
	struct late *late;	/* running first come, ended answers kept */
	size_t nlate, late_cap;
	uint64_t *slow;		/* keys that had a job past its wait */
	size_t nslow, slow_cap;
} w = { .lock = PTHREAD_MUTEX_INITIALIZER, .sock = -1 };

/* ---- the worker ---- */

static void answer(int reply, int kind, int result)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct answer a = { kind, result };
	struct iovec iov = { &a, sizeof(a) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (kind == DONE && result >= 0) {
		struct cmsghdr *c;

		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &result, sizeof(int));
	}
	/* Nobody waits any more when lxtrace closed its end: nothing to do about it. */
	(void)!sendmsg(reply, &m, MSG_NOSIGNAL);
}

void file_job__unbounded(struct file_job *job)
{
	answer(job->reply, UNBOUNDED, 0);
}

static void *run_job(void *p)
{
	struct file_job *job = p;
	int fd = job->fn(job, job->arg);

	answer(job->reply, DONE, fd);
	if (fd >= 0)
		close(fd);
	close(job->reply);
	free(job);
	return NULL;
}

static void start_job(const struct request *rq, const char *arg, int reply)
{
	struct file_job *job = malloc(sizeof(*job) + rq->len);
	pthread_attr_t attr;
	pthread_t t;
	int err = job ? 0 : ENOMEM;

	if (job) {
		job->fn = rq->fn;
		job->reply = reply;
		memcpy(job->arg, arg, rq->len);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&t, &attr, run_job, job);
		pthread_attr_destroy(&attr);
		if (!err)
			return;
		free(job);
	}
	answer(reply, DONE, -err);
	close(reply);
}

/* Takes requests until lxtrace is gone (its end closed, or its death's SIGKILL). */
static void __attribute__((noreturn)) worker_main(void)
{
	static char buf[sizeof(struct request) + FILE_WORKER_ARG_MAX];

	for (;;) {
		char ctl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		struct request rq;
		int reply = -1;
		ssize_t n = recvmsg(WORKER_SOCK, &m, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		c = CMSG_FIRSTHDR(&m);
		if (c && c->cmsg_type == SCM_RIGHTS)
			memcpy(&reply, CMSG_DATA(c), sizeof(int));
		memcpy(&rq, buf, sizeof(rq));
		if (reply < 0 || (size_t)n != sizeof(rq) + rq.len) {
			if (reply >= 0)
				close(reply);
			continue;
		}
		start_job(&rq, buf + sizeof(rq), reply);
	}
}

/* In the child: nothing of lxtrace's but the request socket (a worker that outlives lxtrace,
 * stuck in a read, must not hold its trace file, the file's lock, or the pipes of whoever
 * waits for lxtrace's output); killed when lxtrace dies. */
static void __attribute__((noreturn)) become_worker(int sock, pid_t parent)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent || null < 0)
		_exit(1);
	prctl(PR_SET_NAME, "lxtrace-files");
	/* The reader waits for its jobs: among CPU hogs, a job at their priority waited tens of
	 * milliseconds for a CPU before it could even open its file. */
	setpriority(PRIO_PROCESS, 0, WORKER_NICE);
	/* A terminal's Ctrl-C or hangup is lxtrace's to handle: it ends the worker by ending. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	for (int fd = 0; fd < 3; fd++)
		dup2(null, fd);
	if (dup2(sock, WORKER_SOCK) < 0)
		_exit(1);
	close_range(WORKER_SOCK + 1, ~0u, 0);
	worker_main();
}

/* With w.lock held. */
static int start_locked(void)
{
	pid_t parent = getpid(), pid;
	int sv[2];

	if (w.started)
		return w.sock >= 0 ? 0 : -ECHILD;
	w.started = true;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0)
		become_worker(sv[1], parent);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	w.sock = sv[0];
	w.pid = pid;
	return 0;
}

int file_worker__start(void)
{
	int err;

	pthread_mutex_lock(&w.lock);
	err = start_locked();
	pthread_mutex_unlock(&w.lock);
	return err;
}

int file_worker__pid(void)
{
	pid_t pid;

	pthread_mutex_lock(&w.lock);
	pid = w.sock >= 0 ? w.pid : 0;
	pthread_mutex_unlock(&w.lock);
	return pid;
}

/* ---- lxtrace's side ---- */

/* Reads one answer; *fd gets the descriptor it carries, or -1. 0, or -ECHILD when the worker
 * closed the socket without one (it died). flags: MSG_DONTWAIT for an answer that may not have
 * come (-EAGAIN). */
static int read_answer(int reply, struct answer *a, int *fd, int flags)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { a, sizeof(*a) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(reply, &m, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	*fd = -1;
	if (n < 0 && errno == EAGAIN)
		return -EAGAIN;
	c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n != sizeof(*a)) {
		if (*fd >= 0)
			close(*fd);
		return -ECHILD;
	}
	return 0;
}

/* Forgets the kept answer i. With w.lock held. */
static void drop_locked(size_t i)
{
	if (w.late[i].reply < 0 && w.late[i].result >= 0)
		close(w.late[i].result);
	w.late[i] = w.late[--w.nlate];
}

/* Takes the answers of the late jobs that have ended since: their keys' filesystems answered.
 * Keeps at most FILE_WORKER_KEPT_MAX of them: answers nobody asked for are dropped past that.
 * With w.lock held. */
static void reap_locked(void)
{
	size_t kept = 0;

	for (size_t i = 0; i < w.nlate; i++) {
		struct late *l = &w.late[i];
		struct answer a;
		int err = -EAGAIN, fd;

		while (l->reply >= 0 && !(err = read_answer(l->reply, &a, &fd, MSG_DONTWAIT)) &&
		       a.kind == UNBOUNDED)
			l->unbounded = true;
		if (l->reply >= 0 && err != -EAGAIN) {
			close(l->reply);
			l->reply = -1;
			l->result = err ? err : a.result < 0 ? a.result : fd >= 0 ? fd : -EBADMSG;
		}
		kept += l->reply < 0;
	}
	for (size_t i = 0; kept > FILE_WORKER_KEPT_MAX && i < w.nlate; i++)
		if (w.late[i].reply < 0) {
			drop_locked(i--);
			kept--;
		}
}

/* How many jobs of key are running past their wait. With w.lock held, after reap_locked. */
static size_t late_locked(uint64_t key)
{
	size_t n = 0;

	for (size_t i = 0; key && i < w.nlate; i++)
		n += w.late[i].reply >= 0 && w.late[i].key == key;
	return n;
}

/* How many jobs are running past their wait. With w.lock held, after reap_locked. */
static size_t running_locked(void)
{
	size_t n = 0;

	for (size_t i = 0; i < w.nlate; i++)
		n += w.late[i].reply >= 0;
	return n;
}

static bool slow_locked(uint64_t key)
{
	for (size_t i = 0; key && i < w.nslow; i++)
		if (w.slow[i] == key)
			return true;
	return false;
}

bool file_worker__stalled(uint64_t key)
{
	bool late;

	pthread_mutex_lock(&w.lock);
	reap_locked();
	late = late_locked(key) > 0;
	pthread_mutex_unlock(&w.lock);
	return late;
}

/* Keeps reply, the socket of a job past its wait, with what it reads, until the job ends, and
 * remembers its key as slow. */
static void note_late(int reply, uint64_t key, uint64_t what, bool unbounded)
{
	pthread_mutex_lock(&w.lock);
	if (grow_array((void **)&w.late, &w.late_cap, w.nlate + 1, sizeof(*w.late), 8))
		close(reply);	/* no room: the job is not counted, its answer is dropped */
	else
		w.late[w.nlate++] = (struct late){ reply, key, what, -ETIMEDOUT, unbounded };
	if (key && !slow_locked(key) &&
	    !grow_array((void **)&w.slow, &w.slow_cap, w.nslow + 1, sizeof(*w.slow), 8))
		w.slow[w.nslow++] = key;
	pthread_mutex_unlock(&w.lock);
}

/* Sends the request with its reply socket. 0 or a negative errno. */
static int send_request(file_job_fn fn, const void *arg, size_t len, int reply)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct request rq = { fn, len };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)arg, len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &reply, sizeof(int));
	return sendmsg(w.sock, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Before a job of (key, what) is sent: 1 with *result when a late job of the same answered
 * since, -ETIMEDOUT when it is to be refused at once, 0 to send it, waiting *wait_ns for it.
 * With w.lock held. */
static int before_locked(uint64_t key, uint64_t what, int *result, bool *unbounded,
			 uint64_t *wait_ns)
{
	reap_locked();
	for (size_t i = 0; key && i < w.nlate; i++)
		if (w.late[i].reply < 0 && w.late[i].key == key && w.late[i].what == what) {
			*result = w.late[i].result;	/* handed over, not closed */
			*unbounded = w.late[i].unbounded;
			w.late[i] = w.late[--w.nlate];
			return 1;
		}
	if (running_locked() >= FILE_WORKER_STUCK_MAX || late_locked(key) >= FILE_WORKER_KEY_LATE_MAX)
		return -ETIMEDOUT;
	*wait_ns = slow_locked(key) ? FILE_WORKER_SLOW_WAIT_NS : FILE_WORKER_WAIT_NS;
	return 0;
}

int file_worker__run(file_job_fn fn, const void *arg, size_t len, uint64_t key, uint64_t what,
		     bool *unbounded)
{
	uint64_t deadline, wait_ns = 0;
	bool bounded = true, said = false;
	int sv[2], err, result = 0;

	if (unbounded)
		*unbounded = false;
	if (len > FILE_WORKER_ARG_MAX)
		return -EINVAL;
	pthread_mutex_lock(&w.lock);
	err = start_locked();
	if (!err)
		err = before_locked(key, what, &result, &said, &wait_ns);
	pthread_mutex_unlock(&w.lock);
	if (err == 1 && unbounded)
		*unbounded = said;
	if (err)
		return err == 1 ? result : err;
	deadline = now_ns() + wait_ns;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	err = send_request(fn, arg, len, sv[1]);
	close(sv[1]);
	while (!err) {
		struct pollfd p = { sv[0], POLLIN, 0 };
		uint64_t now = now_ns(), left = deadline > now ? deadline - now : 0;
		struct timespec ts = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
		struct answer a;
		int n = ppoll(&p, 1, bounded ? &ts : NULL, NULL), fd = -1;

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			note_late(sv[0], key, what, !bounded);
			return -ETIMEDOUT;
		}
		err = n < 0 ? -errno : read_answer(sv[0], &a, &fd, 0);
		if (!err && a.kind == UNBOUNDED) {
			bounded = false;
			if (unbounded)
				*unbounded = true;
			continue;
		}
		if (!err) {
			close(sv[0]);
			return a.result < 0 ? a.result : fd >= 0 ? fd : -EBADMSG;
		}
	}
	close(sv[0]);
	return err == -EPIPE || err == -ECONNRESET ? -ECHILD : err;
}
