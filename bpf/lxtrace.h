/* lxtrace.h - the records that cross from the BPF programs to the daemon, and nothing else.
 *
 * Every record starts with struct lx_rec. Fixed-width fields, largest first, explicit
 * padding; sizes are asserted so both sides agree. Timestamps are bpf_ktime_get_ns()
 * (CLOCK_MONOTONIC).
 */
#ifndef LXTRACE_BPF_LXTRACE_H
#define LXTRACE_BPF_LXTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define LX_COMM_LEN 16
/* Annotation strings (include/lxtrace/annotate.h), NUL included: a name (task or region type,
 * log category) and a log message. */
#define LX_NAME_LEN 64
#define LX_MSG_LEN 256

enum lx_rec_type {
	LX_REC_SWITCH = 1,	/* struct lx_switch */
	LX_REC_WAKEUP,		/* struct lx_wakeup: sched_waking */
	LX_REC_WAKEUP_NEW,	/* struct lx_wakeup: sched_wakeup_new */
	LX_REC_FORK,		/* struct lx_fork */
	LX_REC_EXEC,		/* struct lx_exec [+ struct lx_stack: user frames at the exec] */
	LX_REC_EXIT,		/* struct lx_rec */
	LX_REC_SYSCALL,		/* struct lx_syscall: one syscall entry. Never in a ring: the
				 * reader makes one of each entry of an LX_REC_SYSCALLS chunk */
	LX_REC_SYSCALLS,	/* struct lx_syscalls: syscall entries, in --syscalls=all */
	LX_REC_RSS,		/* struct lx_rss: a target process's resident memory changed */
	LX_REC_TASK_BEGIN,	/* struct lx_user: name = task type, parent set */
	LX_REC_TASK_END,	/* struct lx_user: name empty */
	LX_REC_REGION_BEGIN,	/* struct lx_user: name = region type */
	LX_REC_REGION_END,	/* struct lx_user: name = region type */
	LX_REC_LOG,		/* struct lx_user_log: name = category */
	LX_REC_SAMPLE,		/* struct lx_sample + struct lx_stack: a cpu-clock sample */
	LX_REC_MMAP,		/* struct lx_mmap: a traced process mapped code */
	LX_REC_CFI_WANT,	/* struct lx_cfi_want: a stack needs a binary's unwind rows */
	LX_REC_TRIGGER,		/* struct lx_user_log: a flight recorder's trigger, msg = the
				 * reason, name empty. From lxtrace_trigger() in a program, or
				 * made by the reader (tid 0) for a SIGUSR1 */
	LX_REC_MAPS_WANT,	/* struct lx_maps_want: a process's code mappings changed and
				 * the kernel cannot list them to BPF: user space reads them
				 * from /proc. Answered by the capture, never delivered */
	LX_REC_RENAME,		/* struct lx_rename: a thread took a new name */
	LX_REC_SYSCALL_EXIT,	/* struct lx_syscall, nr -1: the caller's syscall returned.
				 * Never in a ring: made of an LX_SYSENT_EXIT chunk entry */
	LX_REC_ENQUEUE,		/* struct lx_rec: sched_wakeup, the wakee on a run queue (or
				 * found still on one); cpu = where the tracepoint ran */
	LX_REC_OCCUPANT,	/* struct lx_occupant: a CPU's holder that no other record
				 * follows changed, or got another name */
	LX_REC_PYSTACK,		/* struct lx_pyrec (bpf/python.h): the Python frames of the
				 * stack the next record of its CPU and thread carries */
};

/* What holds a CPU when no recorded thread does: an LX_REC_SWITCH's h.flags for a next that
 * is not recorded (next_tid 0), and struct lx_occupant's kind. Only changes are sent: a CPU's
 * holder stays what it was last said to be until a record says otherwise. */
enum lx_occupant_kind {
	LX_OCC_IDLE = 0,	/* the idle task (or, in a switch, a recorded next) */
	LX_OCC_SELF,		/* the tracer's own threads, or its helper processes' */
	LX_OCC_UNTRACED,	/* a thread outside the target (-p, a command, --cgroup) */
};

/* Which threads the programs record (const volatile target_mode, set before load). */
enum lx_target_mode {
	LX_TARGET_ALL = 0,	/* every thread but the tracer's */
	LX_TARGET_PIDS,		/* processes whose tgid is in the `targets` map, which the fork
				 * program extends to their children */
	LX_TARGET_CGROUP,	/* threads in a cgroup v2 (target_cgroup_id) or below it */
};

/* struct lx_user flags: a string that did not fit its field (cut, still NUL-terminated), or
 * that could not be read from the program's memory (left empty). */
enum lx_user_flags {
	LX_USER_NAME_CUT = 1 << 0,
	LX_USER_MSG_CUT = 1 << 1,
	LX_USER_NAME_FAULT = 1 << 2,
	LX_USER_MSG_FAULT = 1 << 3,
};

/* How a switched-out thread left the CPU, decided in BPF from prev_state. */
enum lx_prev_state {
	LX_PREV_RUNNABLE = 0,	/* preempted or yielded: still runnable */
	LX_PREV_SLEEP,		/* TASK_INTERRUPTIBLE */
	LX_PREV_DISK,		/* TASK_UNINTERRUPTIBLE */
	LX_PREV_DEAD,		/* exiting */
	LX_PREV_OTHER,		/* stopped, traced, ... */
};

/* struct lx_rec flags, by type; 0 for the other types. LX_REC_SWITCH's are the
 * enum lx_occupant_kind of a next that is not recorded. */
enum lx_rec_flags {
	LX_EXIT_GROUP = 1 << 0,	/* LX_REC_EXIT: the exiter was its process's last thread */
	LX_OCC_NAME_ONLY = 1 << 0,	/* LX_REC_OCCUPANT: only the name of the holder the next
					 * switch record (its flags) gives the CPU to */
};

struct lx_rec {
	__u64 ts;
	__u32 tid;	/* the thread the record is about: prev, wakee, child, exec'er, exiter */
	__u16 cpu;	/* where it happened */
	__u8 type;	/* enum lx_rec_type */
	__u8 flags;	/* enum lx_rec_flags */
};

struct lx_switch {
	struct lx_rec h;	/* tid = prev */
	__u32 next_tid;
	__s16 prev_syscall;	/* syscall prev is blocked in, or -1 */
	__u8 prev_state;	/* enum lx_prev_state */
	__u8 pad;
};

/* CPU h.cpu is held from h.ts by kind (enum lx_occupant_kind), a thread of process pid named
 * comm (pid 0 and comm empty for LX_OCC_IDLE). Sent when the holder's kind changes with no
 * switch record to say it; and, flagged LX_OCC_NAME_ONLY, just before a switch record whose
 * next is not recorded when the process taking the CPU is not the one last named there. So
 * the name is of the thread that takes the CPU from a recorded thread or from the idle task:
 * a switch between two unrecorded threads of one kind sends nothing, and a busy untraced
 * program beside the target costs no record. */
struct lx_occupant {
	struct lx_rec h;	/* tid 0 */
	__u32 pid;
	__u8 kind;
	__u8 pad[3];
	char comm[LX_COMM_LEN];
};

struct lx_syscall {
	struct lx_rec h;
	__s32 nr;	/* -1: not a syscall number the chunk entry could carry */
	__u32 pad;
};

/* Syscall entries and exits are the bulk of a --syscalls=all recording, so they travel
 * compactly: each CPU stages them in BPF and sends them as one chunk, when it is full and
 * before any other record of that CPU, so that the CPU's records stay in time order. The
 * chunk's header has the CPU and the first entry's time; an entry is 8 bytes. An exit is an
 * entry of its own, nr LX_SYSENT_EXIT: folding it into its syscall's entry would grow every
 * entry by the 4 bytes of a duration to save 8 only on the syscalls that return on the same
 * CPU with no record between (docs/record.md). Exits are sent only for the go1.23 format. */
#define LX_SYSCALLS_MAX 64		/* entries per chunk: a power of two */
#define LX_SYSENT_NR_BITS 10		/* tid_nr: tid << 10 | nr; PID_MAX_LIMIT is 2^22 */
#define LX_SYSENT_EXIT 1022		/* the thread's syscall returned */
#define LX_SYSENT_NR_NONE 1023		/* the syscall number did not fit */

struct lx_sysent {
	__u32 dt;	/* ns after the chunk's h.ts */
	__u32 tid_nr;	/* the caller's tid << LX_SYSENT_NR_BITS | syscall number */
};

struct lx_syscalls {
	struct lx_rec h;	/* ts = the first entry's, tid = 0 */
	__u32 n;		/* entries sent: the record is sizeof(lx_syscalls) - (MAX - n) * 8 */
	__u32 pad;
	struct lx_sysent e[LX_SYSCALLS_MAX];
};

struct lx_wakeup {
	struct lx_rec h;	/* tid = wakee, cpu = where the waker runs */
	__u32 target_cpu;	/* where the wakee will run */
	__u32 pad;
};

struct lx_fork {
	struct lx_rec h;	/* tid = child */
	__u32 parent_tid;
	__u32 child_pid;	/* tgid of the child: == tid for a new process */
};

struct lx_exec {
	struct lx_rec h;	/* tid = the thread after exec */
	__u32 pid;
	__u32 old_tid;		/* its tid before: a non-leader thread that execs takes the
				 * leader's (pid's) tid, and the old one vanishes without an exit */
	char comm[LX_COMM_LEN];
};

/* A thread's new name (task_rename: prctl PR_SET_NAME, pthread_setname_np, a write to
 * /proc/PID/task/TID/comm, by the thread or another). tid = the renamed thread, which need not
 * be the one running. */
struct lx_rename {
	struct lx_rec h;
	__u32 pid;		/* its process */
	__u32 pad;
	char comm[LX_COMM_LEN];
};

/* Resident pages (file + anon + shmem, as the rss_stat tracepoint counts them) of process pid,
 * throttled in BPF; 0 when the process is gone. tid = the thread that caused the change. */
struct lx_rss {
	struct lx_rec h;
	__u32 pid;
	__u32 pages;
};

/* An annotation, written by the calling thread itself. Task ids are the program's own, unique
 * only within its process (pid). */
struct lx_user {
	struct lx_rec h;	/* tid = the calling thread */
	__u64 task;		/* task begun or ended, or the task of the region or log; 0 = background */
	__u64 parent;		/* LX_REC_TASK_BEGIN: the parent task, 0 = none */
	__u32 pid;		/* the calling process */
	__u8 flags;		/* enum lx_user_flags */
	__u8 pad[3];
	char name[LX_NAME_LEN];
};

struct lx_user_log {
	struct lx_user u;
	char msg[LX_MSG_LEN];
};

/* A CPU sample: always followed by the sampled thread's stack (struct lx_stack). tid 0 is the
 * idle task (recorded only with --sample-idle). */
struct lx_sample {
	struct lx_rec h;	/* tid = the thread that was running */
	__u32 pid;		/* its process (tgid) */
	__s16 syscall;		/* the syscall it was in when the sample hit kernel code, or -1 */
	__u16 pad;
};

/* Call stacks travel inline, after the record they belong to: a record longer than its type's
 * struct carries one (switch: prev's; wakeup: the waker's; fork: the parent's; sample: the
 * sampled thread's; exec: the exec'ing thread's user stack). kernel frames first, then user
 * frames, each leaf first; the record is sizeof(type) + 8 + 8 * (nkern + nuser) bytes, plus
 * struct lx_ucopy and its bytes with LX_USTACK_COPY. A Python thread's stack has its Python
 * frames in an LX_REC_PYSTACK record just before, in the same ring. */
#define LX_STACK_KERN_MAX 64
#define LX_STACK_USER_MAX 64	/* a power of two */
/* A user frame whose address is an interrupted instruction (the leaf, or the frame a signal
 * interrupted), not a return address: symbolized at the address itself, not inside the call
 * before it. User addresses are below 2^47. */
#define LX_PC_EXACT (1ull << 63)

/* How the user stack was taken (struct lx_stack.uflags). A stack with none of TRUNCATED, DEEP
 * and COPY is whole: the walk reached the outermost frame. */
enum lx_ustack_flags {
	LX_USTACK_COPY = 1 << 0,	/* the walk stopped at a frame of a file whose rows were
					 * not loaded yet, or had no mapping table: struct
					 * lx_ucopy follows the frames, for the daemon to go on */
	LX_USTACK_TRUNCATED = 1 << 1,	/* it stopped at a frame that cannot be code (not
					 * canonical, in no executable mapping) or did not
					 * lead up the stack; that frame is left out */
	LX_USTACK_DEEP = 1 << 2,	/* it stopped at LX_STACK_USER_MAX frames */
	LX_USTACK_FP = 1 << 3,		/* some frames came from frame pointers (no unwind rows) */
	LX_USTACK_IRQ = 1 << 4,		/* taken in interrupt context: the stack is the
					 * interrupt's (kernel frames only), not the thread's */
	LX_USTACK_STORE = 1 << 5,	/* the walk is kept in the thread's cache slot uslot */
	LX_USTACK_HIT = 1 << 6,		/* no user frames sent: they are those stored in slot
					 * uslot by this thread's last LX_USTACK_STORE there */
	LX_USTACK_KWALK = 1 << 7,	/* the kernel's frame-pointer walk (compat programs),
					 * which stops at no broken frame: past the first
					 * address in no mapping the frames mean nothing */
};

struct lx_stack {
	__u32 tid;		/* the thread whose stack it is (current when it was taken) */
	__u8 nkern;
	__u8 nuser;
	__u8 uflags;		/* enum lx_ustack_flags */
	__u8 uslot;		/* the cache slot (LX_USTACK_STORE, LX_USTACK_HIT), or
				 * LX_USLOT_NO_ROOM */
	__u64 pc[];		/* nkern kernel addresses, then nuser user addresses */
};

/* uslot of a stack whose walk would have stopped for a copy of the stack (LX_USTACK_COPY)
 * that the ring had no room for, and went on by frame pointers there (as through code without
 * rows), which may cut it (LX_USTACK_TRUNCATED); never stored or a hit. */
#define LX_USLOT_NO_ROOM 0x80

/* Where a walk stopped (LX_USTACK_COPY) and the user stack above it: the registers of the
 * frame it did not take (the next frame to emit) and len bytes of stack from sp up, as far as
 * the stack is mapped, at most LX_UCOPY_MAX (perf's default for --call-graph dwarf). */
#define LX_UCOPY_MAX 8192

enum lx_ucopy_flags {
	LX_UCOPY_EXACT = 1 << 0,	/* ip is an interrupted instruction (the leaf) */
	LX_UCOPY_BP_OK = 1 << 1,	/* bp holds the frame's real rbp */
};

struct lx_ucopy {
	__u64 ip, sp, bp;
	__u64 di;		/* the leaf's rdi (LX_CFA_RA_RDI), with LX_UCOPY_EXACT */
	__u16 len;		/* a multiple of 8 */
	__u8 flags;		/* enum lx_ucopy_flags */
	__u8 pad[5];
	__u8 bytes[];
};

/* An executable mapping made by a traced process (mmap, exec, the dynamic loader): what user
 * space symbolizes its addresses against. dev is the kernel's encoding (major << 20 | minor);
 * ino 0 for memory that is no file. path is the file's path below its mount, as far as
 * LX_PATH_LEN holds it (the name alone when the walk up did not finish), "" for no file. */
#define LX_PATH_LEN 256

enum lx_mmap_flags {
	LX_MMAP_NEW_IMAGE = 1 << 0,	/* the first of a new address space (an exec): the
					 * process's earlier mappings are gone */
	LX_MMAP_SNAPSHOT = 1 << 1,	/* read from /proc at an exec on a kernel that reports no
					 * later change: a miss may mean a mapping made since */
};

struct lx_mmap {
	struct lx_rec h;	/* tid = the mapping thread */
	__u64 start, end;
	__u64 pgoff;		/* in bytes */
	__u64 ino;		/* LX_VDSO_INO (bpf/unwind.h): the vDSO */
	__u32 pid;
	__u32 dev;
	__u32 flags;		/* enum lx_mmap_flags */
	__u32 pad;
	char path[LX_PATH_LEN];
};

/* A walk found no unwind rows for the file mapped at [start, end) of pid: user space compiles
 * them and loads them (bpf/unwind.h). Sent once per file. */
struct lx_cfi_want {
	struct lx_rec h;
	__u64 start, end;
	__u64 ino;
	__u32 pid;
	__u32 dev;
};

/* The code mappings of process pid changed (its mm->exec_vm is not what was last asked for), on
 * a kernel without the VMA iterator: user space answers from /proc/PID/maps, filling the
 * unwinder's table and reporting the new mappings as LX_REC_MMAP records (user/capture/). */
enum lx_maps_want_flags {
	LX_MAPS_WANT_NEW = 1 << 0,	/* a new address space (an exec, a first ask) */
	LX_MAPS_WANT_SCAN = 1 << 1,	/* the start's scan: the table only, no mapping
					 * reported (user space reads the processes alive itself) */
};

struct lx_maps_want {
	struct lx_rec h;	/* tid = the thread that changed them */
	__u64 mm;		/* the address space: the table's key with pid */
	__u64 exec_vm;		/* its pages of code then */
	__u32 pid;
	__u32 flags;		/* enum lx_maps_want_flags */
};

_Static_assert(sizeof(struct lx_rec) == 16, "lx_rec layout");
_Static_assert(sizeof(struct lx_switch) == 24, "lx_switch layout");
_Static_assert(sizeof(struct lx_syscall) == 24, "lx_syscall layout");
_Static_assert(sizeof(struct lx_occupant) == 40, "lx_occupant layout");
_Static_assert(sizeof(struct lx_wakeup) == 24, "lx_wakeup layout");
_Static_assert(sizeof(struct lx_fork) == 24, "lx_fork layout");
_Static_assert(sizeof(struct lx_exec) == 40, "lx_exec layout");
_Static_assert(sizeof(struct lx_rss) == 24, "lx_rss layout");
_Static_assert(sizeof(struct lx_sample) == 24, "lx_sample layout");
_Static_assert(sizeof(struct lx_stack) == 8, "lx_stack layout");
_Static_assert(sizeof(struct lx_ucopy) == 40, "lx_ucopy layout");
_Static_assert(sizeof(struct lx_mmap) == 64 + LX_PATH_LEN, "lx_mmap layout");
_Static_assert(sizeof(struct lx_cfi_want) == 48, "lx_cfi_want layout");
_Static_assert(sizeof(struct lx_maps_want) == 40, "lx_maps_want layout");
_Static_assert(sizeof(struct lx_sysent) == 8, "lx_sysent layout");
_Static_assert(sizeof(struct lx_syscalls) == 24 + 8 * LX_SYSCALLS_MAX, "lx_syscalls layout");
_Static_assert(sizeof(struct lx_user) == 104, "lx_user layout");
_Static_assert(sizeof(struct lx_user_log) == 360, "lx_user_log layout");

#endif
