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
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/file_worker.h"
#include "lib/grow.h"

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

/* A job past its wait, until it ends. */
struct late {
	int reply;		/* its reply socket: readable or hung up once it ended */
	uint64_t key;
};

/* One worker for the process: the jobs late in it are the process's, whichever component ran
 * them. */
static struct {
	pthread_mutex_t lock;
	bool started;
	int sock;		/* lxtrace's end of the request socket; -1: no worker */
	struct late *late;
	size_t nlate, late_cap;
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

/* ---- lxtrace's side ---- */

/* Forgets the late jobs that have ended since: their keys' filesystems answered. With w.lock
 * held. */
static void reap_locked(void)
{
	size_t j = 0;

	for (size_t i = 0; i < w.nlate; i++) {
		struct pollfd p = { w.late[i].reply, POLLIN, 0 };

		/* An ended job has closed its end: hung up, or its answer is readable. */
		if (poll(&p, 1, 0) == 1)
			close(w.late[i].reply);
		else
			w.late[j++] = w.late[i];
	}
	w.nlate = j;
}

/* Whether a job of key is still running past its wait. With w.lock held, after reap_locked. */
static bool late_locked(uint64_t key)
{
	for (size_t i = 0; key && i < w.nlate; i++)
		if (w.late[i].key == key)
			return true;
	return false;
}

/* Whether a job with key is refused without a wait. With w.lock held. */
static bool refused_locked(uint64_t key)
{
	reap_locked();
	return w.nlate >= FILE_WORKER_STUCK_MAX || late_locked(key);
}

bool file_worker__stalled(uint64_t key)
{
	bool late;

	pthread_mutex_lock(&w.lock);
	reap_locked();
	late = late_locked(key);
	pthread_mutex_unlock(&w.lock);
	return late;
}

/* Keeps reply, the socket of a job past its wait, with its key, until the job ends. */
static void note_late(int reply, uint64_t key)
{
	pthread_mutex_lock(&w.lock);
	if (grow_array((void **)&w.late, &w.late_cap, w.nlate + 1, sizeof(*w.late), 8))
		close(reply);	/* no room: the job is not counted, its answer is dropped */
	else
		w.late[w.nlate++] = (struct late){ reply, key };
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

/* Reads one answer; *fd gets the descriptor it carries, or -1. 0, or -ECHILD when the worker
 * closed the socket without one (it died). */
static int read_answer(int reply, struct answer *a, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { a, sizeof(*a) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(reply, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	*fd = -1;
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

int file_worker__run(file_job_fn fn, const void *arg, size_t len, uint64_t key, bool *unbounded)
{
	uint64_t deadline = now_ns() + FILE_WORKER_WAIT_NS;
	bool bounded = true;
	int sv[2], err;

	if (unbounded)
		*unbounded = false;
	if (len > FILE_WORKER_ARG_MAX)
		return -EINVAL;
	pthread_mutex_lock(&w.lock);
	err = start_locked();
	if (!err && refused_locked(key))
		err = -ETIMEDOUT;
	pthread_mutex_unlock(&w.lock);
	if (err)
		return err;
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
			note_late(sv[0], key);
			return -ETIMEDOUT;
		}
		err = n < 0 ? -errno : read_answer(sv[0], &a, &fd);
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
