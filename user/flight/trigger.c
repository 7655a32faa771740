/* trigger.c - the --trigger expressions (trigger.h): parsing with one-line errors, matching,
 * and the text that marks a firing in the trace. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/duration.h"
#include "user/flight/trigger.h"
#include "user/proc/syscalls.h"

static const char *const kind_names[TRIGGER_KINDS] = {
	[TRIGGER_SCHED_LATENCY] = "sched-latency",
	[TRIGGER_SYSCALL] = "syscall",
	[TRIGGER_OFFCPU] = "offcpu",
};

/* Longer than any day a recording lasts. */
#define MAX_SECONDS 1000000ull

const char *trigger__kind_name(enum trigger_kind kind)
{
	return (unsigned)kind < TRIGGER_KINDS ? kind_names[kind] : "?";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* KIND or syscall:NAME, the text before '>' (len bytes at s). */
static int parse_kind(const char *s, size_t len, struct trigger *t, char *err, size_t errlen)
{
	char name[64];

	t->nr = -1;
	for (int k = 0; k < TRIGGER_KINDS; k++) {
		if (strlen(kind_names[k]) == len && !strncmp(s, kind_names[k], len)) {
			t->kind = k;
			return 0;
		}
	}
	if (len > 8 && !strncmp(s, "syscall:", 8)) {
		if (len - 8 >= sizeof(name))
			return fail(err, errlen, "syscall name too long");
		memcpy(name, s + 8, len - 8);
		name[len - 8] = '\0';
		t->kind = TRIGGER_SYSCALL;
		t->nr = syscalls__nr(name);
		if (t->nr < 0)
			return fail(err, errlen, "'%s' is not a syscall name of this machine",
				    name);
		return 0;
	}
	return fail(err, errlen, "'%.*s' is not sched-latency, syscall, syscall:NAME or offcpu",
		    (int)len, s);
}

/* A positive number with a unit, len bytes at s, in ns (lib/duration.h). */
static int parse_duration(const char *s, size_t len, uint64_t *ns, char *err, size_t errlen)
{
	int ret;

	if (!len)
		return fail(err, errlen, "a duration must follow '>' (e.g. 50ms)");
	ret = duration__parse(s, len, true, ns);
	if (ret == -ENOMSG)
		return fail(err, errlen, "duration '%.*s' needs a unit: ns, us, ms or s", (int)len,
			    s);
	if (ret == -EINVAL) {
		size_t num = 0;

		while (num < len && ((s[num] >= '0' && s[num] <= '9') || s[num] == '.'))
			num++;
		if (num && num < len)
			return fail(err, errlen, "'%.*s' in '%.*s' is not a unit: ns, us, ms or s",
				    (int)(len - num), s + num, (int)len, s);
		return fail(err, errlen, "'%.*s' is not a duration (a number and ns, us, ms or s)",
			    (int)len, s);
	}
	if (ret || !*ns || *ns > MAX_SECONDS * 1000000000ull)
		return fail(err, errlen, "duration '%.*s' must be above 0 and at most %llu s",
			    (int)len, s, MAX_SECONDS);
	return 0;
}

/* comm=NAME or pid=PID, len bytes at s. */
static int parse_filter(const char *s, size_t len, struct trigger *t, char *err, size_t errlen)
{
	if (len >= 5 && !strncmp(s, "comm=", 5)) {
		if (t->comm[0])
			return fail(err, errlen, "comm= given twice");
		if (len == 5)
			return fail(err, errlen, "comm= needs a thread name");
		if (len - 5 >= TRIGGER_COMM_LEN)
			return fail(err, errlen, "comm=%.*s: longer than %d characters, where the "
				    "kernel cuts thread names", (int)(len - 5), s + 5,
				    TRIGGER_COMM_LEN - 1);
		memcpy(t->comm, s + 5, len - 5);
		t->comm[len - 5] = '\0';
		return 0;
	}
	if (len >= 4 && !strncmp(s, "pid=", 4)) {
		char buf[16], *end;
		unsigned long pid;

		if (t->pid)
			return fail(err, errlen, "pid= given twice");
		if (len - 4 >= sizeof(buf) || len == 4)
			return fail(err, errlen, "'%.*s' is not a process id", (int)(len - 4),
				    s + 4);
		memcpy(buf, s + 4, len - 4);
		buf[len - 4] = '\0';
		errno = 0;
		pid = strtoul(buf, &end, 10);
		/* PID_MAX_LIMIT is 2^22. */
		if (errno || *end || buf[0] < '0' || buf[0] > '9' || !pid || pid > (1ul << 22))
			return fail(err, errlen, "'%s' is not a process id", buf);
		t->pid = (uint32_t)pid;
		return 0;
	}
	return fail(err, errlen, "'%.*s' is not a filter: comm=NAME or pid=PID", (int)len, s);
}

int trigger__parse(const char *s, struct trigger *t, char *err, size_t errlen)
{
	const char *gt, *comma, *end;
	int ret;

	memset(t, 0, sizeof(*t));
	if (strlen(s) >= sizeof(t->text))
		return fail(err, errlen, "longer than %zu characters", sizeof(t->text) - 1);
	strcpy(t->text, s);
	gt = strchr(s, '>');
	if (!gt)
		return fail(err, errlen, "expected KIND>DURATION, e.g. sched-latency>50ms");
	ret = parse_kind(s, (size_t)(gt - s), t, err, errlen);
	if (ret)
		return ret;
	comma = strchr(gt + 1, ',');
	end = comma ? comma : gt + 1 + strlen(gt + 1);
	ret = parse_duration(gt + 1, (size_t)(end - gt - 1), &t->over_ns, err, errlen);
	while (!ret && comma) {
		s = comma + 1;
		comma = strchr(s, ',');
		end = comma ? comma : s + strlen(s);
		ret = parse_filter(s, (size_t)(end - s), t, err, errlen);
	}
	return ret;
}

/* A plain `syscall` trigger leaves out the syscalls that wait by design: they would fire it at
 * once on any idle machine. Reads, writes, sends and receives count, though the trace shows a
 * wait for a pipe or socket as GoBlockSelect (docs/flight.md). syscall:NAME asks for one
 * syscall, whatever it is. */
static bool syscall_matches(const struct trigger *t, int nr)
{
	return t->nr < 0 ? nr >= 0 && !syscalls__waits(nr) : t->nr == nr;
}

bool trigger__match(const struct trigger *t, enum trigger_kind kind, int nr, uint64_t ns,
		    uint32_t pid, const char *comm)
{
	return t->kind == kind && ns > t->over_ns &&
	       (kind != TRIGGER_SYSCALL || syscall_matches(t, nr)) &&
	       (!t->pid || t->pid == pid) && (!t->comm[0] || !strcmp(t->comm, comm));
}

/* ns as "301.2 ms", "1.50 s", "850 us". */
static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
}

int trigger__what(const struct trigger *t, int nr, uint64_t ns, char *buf, size_t len)
{
	const char *sys = t->kind == TRIGGER_SYSCALL ? syscalls__name(nr) : NULL;
	char took[32], over[32], num[16];

	fmt_time(took, sizeof(took), ns);
	fmt_time(over, sizeof(over), t->over_ns);
	if (t->kind == TRIGGER_SYSCALL && !sys) {
		snprintf(num, sizeof(num), "%d", nr);
		sys = num;
	}
	return snprintf(buf, len, "%s%s%s %s > %s", kind_names[t->kind], sys ? " " : "",
			sys ? sys : "", took, over);
}

int trigger__describe(const struct trigger *t, int nr, uint64_t ns, uint32_t tid, uint32_t pid,
		      const char *comm, char *buf, size_t len)
{
	char what[96];

	trigger__what(t, nr, ns, what, sizeof(what));
	return snprintf(buf, len, "%s: tid %u %s (pid %u)", what, tid, comm, pid);
}
