/* dump.c - splits a Go 1.22+ trace into batches and events and prints them; refuses what Go
 * 1.23's batch reader refuses (batch.go, generation.go), stopping at the first fault. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "format/v2/dump.h"
#include "format/varint.h"
#include "lib/escape.h"

/* A batch header at its longest: type byte and four varints. */
#define HDR_MAX (1 + 4 * GT_MAX_VARINT_LEN)

/* The timed events: name and argument names, after the time delta. */
static const struct {
	const char *name;
	const char *args[5];
} events[] = {
	[GT2_EV_PROC_START] = { "ProcStart", { "p", "p_seq" } },
	[GT2_EV_PROC_STOP] = { "ProcStop", { NULL } },
	[GT2_EV_PROC_STEAL] = { "ProcSteal", { "p", "p_seq", "m" } },
	[GT2_EV_PROC_STATUS] = { "ProcStatus", { "p", "pstatus" } },
	[GT2_EV_GO_CREATE] = { "GoCreate", { "new_g", "new_stack", "stack" } },
	[GT2_EV_GO_CREATE_SYSCALL] = { "GoCreateSyscall", { "new_g" } },
	[GT2_EV_GO_START] = { "GoStart", { "g", "g_seq" } },
	[GT2_EV_GO_DESTROY] = { "GoDestroy", { NULL } },
	[GT2_EV_GO_DESTROY_SYSCALL] = { "GoDestroySyscall", { NULL } },
	[GT2_EV_GO_STOP] = { "GoStop", { "reason_string", "stack" } },
	[GT2_EV_GO_BLOCK] = { "GoBlock", { "reason_string", "stack" } },
	[GT2_EV_GO_UNBLOCK] = { "GoUnblock", { "g", "g_seq", "stack" } },
	[GT2_EV_GO_SYSCALL_BEGIN] = { "GoSyscallBegin", { "p_seq", "stack" } },
	[GT2_EV_GO_SYSCALL_END] = { "GoSyscallEnd", { NULL } },
	[GT2_EV_GO_SYSCALL_END_BLOCKED] = { "GoSyscallEndBlocked", { NULL } },
	[GT2_EV_GO_STATUS] = { "GoStatus", { "g", "m", "gstatus" } },
	[GT2_EV_HEAP_ALLOC] = { "HeapAlloc", { "value" } },
	[GT2_EV_USER_TASK_BEGIN] = { "UserTaskBegin", { "task", "parent_task", "name_string", "stack" } },
	[GT2_EV_USER_TASK_END] = { "UserTaskEnd", { "task", "stack" } },
	[GT2_EV_USER_REGION_BEGIN] = { "UserRegionBegin", { "task", "name_string", "stack" } },
	[GT2_EV_USER_REGION_END] = { "UserRegionEnd", { "task", "name_string", "stack" } },
	[GT2_EV_USER_LOG] = { "UserLog", { "task", "key_string", "value_string", "stack" } },
	[GT2_EV_GO_STATUS_STACK] = { "GoStatusStack", { "g", "m", "gstatus", "stack" } },
};

struct in {
	const uint8_t *p, *end;
	uint64_t off;		/* the file offset of the batch's first byte */
	const uint8_t *base;
};

/* The next varint of the batch; false at its end or on a bad number. */
static bool get(struct in *in, uint64_t *v)
{
	size_t n = gt_varint_get(in->p, in->end, v);

	in->p += n;
	return n > 0;
}

static int fault(uint64_t off, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "offset %llu: %s", (unsigned long long)off, what);
	return 1;
}

/* A fault at in's position. */
static int bad(const struct in *in, char *err, size_t errlen, const char *what)
{
	return fault(in->off + (uint64_t)(in->p - in->base), err, errlen, what);
}

/* Reads exactly len bytes: len, 0 at the end of the file before any, else -1 (errno, or
 * EPROTO when the file ends inside them). */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n) {
			errno = EPROTO;
			return got ? -1 : 0;
		}
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* One batch's events, after its kind's first byte when it has one. */
static int body(FILE *f, struct in *in, char *err, size_t errlen, uint64_t ts)
{
	uint64_t v[5], id, n, len;
	uint8_t kind = in->p < in->end ? *in->p : 0;

	if (kind == GT2_EV_STRINGS || kind == GT2_EV_STACKS || kind == GT2_EV_CPU_SAMPLES) {
		in->p++;
		while (in->p < in->end) {
			uint8_t t = *in->p++;

			if (kind == GT2_EV_STRINGS && t == GT2_EV_STRING) {
				if (!get(in, &id) || !get(in, &len) || len > GT2_MAX_STRING ||
				    len > (uint64_t)(in->end - in->p))
					return bad(in, err, errlen, "bad string entry");
				fprintf(f, "String id=%llu data=", (unsigned long long)id);
				escape__quoted(f, (const char *)in->p, (size_t)len);
				fputc('\n', f);
				in->p += len;
			} else if (kind == GT2_EV_STACKS && t == GT2_EV_STACK) {
				if (!get(in, &id) || !get(in, &n) || n > GT2_MAX_FRAMES)
					return bad(in, err, errlen, "bad stack entry");
				fprintf(f, "Stack id=%llu nframes=%llu\n", (unsigned long long)id,
					(unsigned long long)n);
				for (uint64_t i = 0; i < n; i++) {
					if (!get(in, &v[0]) || !get(in, &v[1]) || !get(in, &v[2]) ||
					    !get(in, &v[3]))
						return bad(in, err, errlen, "stack entry cut short");
					fprintf(f, "\tpc=%#llx func=%llu file=%llu line=%llu\n",
						(unsigned long long)v[0], (unsigned long long)v[1],
						(unsigned long long)v[2], (unsigned long long)v[3]);
				}
			} else if (kind == GT2_EV_CPU_SAMPLES && t == GT2_EV_CPU_SAMPLE) {
				for (int i = 0; i < 5; i++)
					if (!get(in, &v[i]))
						return bad(in, err, errlen, "CPU sample cut short");
				fprintf(f, "CPUSample time=%llu m=%lld p=%llu g=%lld stack=%llu\n",
					(unsigned long long)v[0], (long long)v[1], (unsigned long long)v[2],
					(long long)v[3], (unsigned long long)v[4]);
			} else {
				in->p--;
				return bad(in, err, errlen, "entry of another kind in a table batch");
			}
		}
		return 0;
	}
	if (kind == GT2_EV_FREQUENCY) {
		in->p++;
		if (!get(in, &v[0]) || in->p != in->end || !v[0])
			return bad(in, err, errlen, "bad frequency batch");
		fprintf(f, "Frequency freq=%llu\n", (unsigned long long)v[0]);
		return 0;
	}
	while (in->p < in->end) {
		uint8_t t = *in->p++;
		uint64_t dt;

		if (t >= sizeof(events) / sizeof(events[0]) || !events[t].name) {
			in->p--;
			return bad(in, err, errlen, "unknown event type");
		}
		if (!get(in, &dt))
			return bad(in, err, errlen, "event cut short");
		ts += dt;
		fprintf(f, "%llu %s", (unsigned long long)ts, events[t].name);
		for (int i = 0; i < 5 && events[t].args[i]; i++) {
			if (!get(in, &v[0]))
				return bad(in, err, errlen, "event cut short");
			fprintf(f, " %s=%lld", events[t].args[i], (long long)v[0]);
		}
		fputc('\n', f);
	}
	return 0;
}

int gt2_dump__file(int fd, FILE *f, char *err, size_t errlen)
{
	static uint8_t buf[HDR_MAX + GT2_MAX_BATCH];
	uint64_t off = GT2_HEADER_LEN, gen = 0, g, m, ts, len;
	struct in in;

	for (;;) {
		ssize_t got = read_full(fd, buf, 1);
		size_t h = 1;

		in = (struct in){ buf, buf + 1, off, buf };
		if (!got)
			break;
		if (got < 0)
			return fault(off, err, errlen, strerror(errno));
		if (buf[0] != GT2_EV_BATCH)
			return bad(&in, err, errlen, "not a batch header");
		/* The header's four varints, a byte at a time: each ends at a byte below 0x80. */
		for (int i = 0; i < 4; i++) {
			do {
				if (h == HDR_MAX || read_full(fd, buf + h, 1) != 1)
					return fault(off + h, err, errlen, "batch header cut short");
			} while (buf[h++] & 0x80);
		}
		in = (struct in){ buf + 1, buf + h, off, buf };
		if (!get(&in, &g) || !get(&in, &m) || !get(&in, &ts) || !get(&in, &len))
			return bad(&in, err, errlen, "bad batch header");
		if (!g || (gen && g != gen && g != gen + 1))
			return bad(&in, err, errlen, "generation out of order");
		if (len > GT2_MAX_BATCH)
			return bad(&in, err, errlen, "batch size over 64 KiB");
		gen = g;
		if (read_full(fd, buf + h, (size_t)len) != (ssize_t)len)
			return fault(off + h, err, errlen, "batch cut short");
		fprintf(f, "Batch gen=%llu m=%lld time=%llu size=%llu\n", (unsigned long long)g,
			(long long)m, (unsigned long long)ts, (unsigned long long)len);
		in = (struct in){ buf + h, buf + h + len, off, buf };
		if (body(f, &in, err, errlen, ts))
			return 1;
		if (ferror(f))
			return -1;
		off += h + len;
	}
	if (!gen)
		return fault(off, err, errlen, "no batch (Go 1.23 finds no frequency event)");
	return ferror(f) ? -1 : 0;
}
