/* spec.c - the timed events of the go1.23 format, as Go 1.23 reads them (spec.h). */
#include <stddef.h>

#include "format/go123/spec.h"
#include "format/varint.h"
#include "format/go123/wire.h"

#define STR(i) (1u << (i))
#define STK(i) (1u << (i))

/* Go 1.23's table (internal/trace/event/go122) has every type from 9 to 48 timed; the
 * experimental ones (127 and up) belong in experimental batches, which lxtrace does not read. */
static const struct go123_spec specs[] = {
	[9] = { "ProcsChange", 2, { "procs", "stack" }, 0, STK(1) },
	[GO123_EV_PROC_START] = { "ProcStart", 2, { "p", "p_seq" }, 0, 0 },
	[GO123_EV_PROC_STOP] = { "ProcStop", 0, { NULL }, 0, 0 },
	[GO123_EV_PROC_STEAL] = { "ProcSteal", 3, { "p", "p_seq", "m" }, 0, 0 },
	[GO123_EV_PROC_STATUS] = { "ProcStatus", 2, { "p", "pstatus" }, 0, 0 },
	[GO123_EV_GO_CREATE] = { "GoCreate", 3, { "new_g", "new_stack", "stack" }, 0,
			       STK(1) | STK(2) },
	[GO123_EV_GO_CREATE_SYSCALL] = { "GoCreateSyscall", 1, { "new_g" }, 0, 0 },
	[GO123_EV_GO_START] = { "GoStart", 2, { "g", "g_seq" }, 0, 0 },
	[GO123_EV_GO_DESTROY] = { "GoDestroy", 0, { NULL }, 0, 0 },
	[GO123_EV_GO_DESTROY_SYSCALL] = { "GoDestroySyscall", 0, { NULL }, 0, 0 },
	[GO123_EV_GO_STOP] = { "GoStop", 2, { "reason", "stack" }, STR(0), STK(1) },
	[GO123_EV_GO_BLOCK] = { "GoBlock", 2, { "reason", "stack" }, STR(0), STK(1) },
	[GO123_EV_GO_UNBLOCK] = { "GoUnblock", 3, { "g", "g_seq", "stack" }, 0, STK(2) },
	[GO123_EV_GO_SYSCALL_BEGIN] = { "GoSyscallBegin", 2, { "p_seq", "stack" }, 0, STK(1) },
	[GO123_EV_GO_SYSCALL_END] = { "GoSyscallEnd", 0, { NULL }, 0, 0 },
	[GO123_EV_GO_SYSCALL_END_BLOCKED] = { "GoSyscallEndBlocked", 0, { NULL }, 0, 0 },
	[GO123_EV_GO_STATUS] = { "GoStatus", 3, { "g", "m", "gstatus" }, 0, 0 },
	[26] = { "STWBegin", 2, { "kind", "stack" }, STR(0), STK(1) },
	[27] = { "STWEnd", 0, { NULL }, 0, 0 },
	[28] = { "GCActive", 1, { "gc_seq" }, 0, 0 },
	[29] = { "GCBegin", 2, { "gc_seq", "stack" }, 0, STK(1) },
	[30] = { "GCEnd", 1, { "gc_seq" }, 0, 0 },
	[31] = { "GCSweepActive", 1, { "p" }, 0, 0 },
	[32] = { "GCSweepBegin", 1, { "stack" }, 0, STK(0) },
	[33] = { "GCSweepEnd", 2, { "swept", "reclaimed" }, 0, 0 },
	[34] = { "GCMarkAssistActive", 1, { "g" }, 0, 0 },
	[35] = { "GCMarkAssistBegin", 1, { "stack" }, 0, STK(0) },
	[36] = { "GCMarkAssistEnd", 0, { NULL }, 0, 0 },
	[GO123_EV_HEAP_ALLOC] = { "HeapAlloc", 1, { "bytes" }, 0, 0 },
	[38] = { "HeapGoal", 1, { "bytes" }, 0, 0 },
	[39] = { "GoLabel", 1, { "label" }, STR(0), 0 },
	[GO123_EV_USER_TASK_BEGIN] = { "UserTaskBegin", 4, { "task", "parent", "name", "stack" },
				     STR(2), STK(3) },
	[GO123_EV_USER_TASK_END] = { "UserTaskEnd", 2, { "task", "stack" }, 0, STK(1) },
	[GO123_EV_USER_REGION_BEGIN] = { "UserRegionBegin", 3, { "task", "name", "stack" }, STR(1),
				       STK(2) },
	[GO123_EV_USER_REGION_END] = { "UserRegionEnd", 3, { "task", "name", "stack" }, STR(1),
				     STK(2) },
	[GO123_EV_USER_LOG] = { "UserLog", 4, { "task", "key", "value", "stack" }, STR(1) | STR(2),
			      STK(3) },
	[45] = { "GoSwitch", 2, { "g", "g_seq" }, 0, 0 },
	[46] = { "GoSwitchDestroy", 2, { "g", "g_seq" }, 0, 0 },
	[47] = { "GoCreateBlocked", 3, { "new_g", "new_stack", "stack" }, 0, STK(1) | STK(2) },
	[GO123_EV_GO_STATUS_STACK] = { "GoStatusStack", 4, { "g", "m", "gstatus", "stack" }, 0,
				     STK(3) },
};

const struct go123_spec *go123_spec(uint8_t t)
{
	return t < sizeof(specs) / sizeof(specs[0]) && specs[t].name ? &specs[t] : NULL;
}

size_t go123_spec__decode(const uint8_t *p, const uint8_t *end, uint64_t *dt, uint64_t *args)
{
	const struct go123_spec *s = go123_spec(*p);
	const uint8_t *q = p + 1;
	size_t n;

	if (!s || !(n = gt_varint_get(q, end, dt)))
		return 0;
	q += n;
	for (unsigned i = 0; i < s->nargs; i++, q += n)
		if (!(n = gt_varint_get(q, end, &args[i])))
			return 0;
	return (size_t)(q - p);
}
