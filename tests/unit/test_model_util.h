/* test_model_util.h - drives the model with synthetic kernel records into a temp trace file,
 * builds fake /proc trees, and checks the result with both Go parsers and our decoder. */
#ifndef LXTRACE_TESTS_MODEL_UTIL_H
#define LXTRACE_TESTS_MODEL_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "format/go119/reader.h"
#include "user/model/model.h"

struct mt {
	char path[64];
	int fd;
	struct gt_writer *w;
	struct go123_writer *w2;	/* instead of w: the go1.23 encoder */
	struct model *m;
	struct model_stats st;	/* filled by mt_finish */
	struct gt_trace *trace;	/* decoded by mt_finish */
};

/* A fake proc root (a temp directory); mt_proc_free removes it. */
char *mt_proc_new(void);
/* Adds thread tid of process pid with state ('R', 'S', 'D', ...) and the syscall it is
 * blocked in (-1: "running"). */
void mt_proc_thread(const char *root, uint32_t pid, uint32_t tid, const char *comm, char state,
		    int syscall);
void mt_proc_free(char *root);

/* Opens a trace with ncpus CPUs (P ncpus housekeeping); model__start at ts. proc_root NULL
 * means an empty fake /proc. */
void mt_open(struct mt *t, uint32_t ncpus, enum model_syscalls mode, const char *proc_root,
	     uint64_t ts);

/* mt_open with the other options of base (triggers, ...; NULL: none; writer2 set, to any
 * value: the go1.23 encoder, made here) and the writer's table budget (0: its default). */
void mt_open_with(struct mt *t, uint32_t ncpus, enum model_syscalls mode, const char *proc_root,
		  uint64_t ts, const struct model_opts *base, size_t table_budget);

/* Record feeders; each asserts that the model accepted the record. */
void mt_switch(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t prev, uint32_t next,
	       uint8_t prev_state, int16_t prev_syscall);
/* A switch whose next is not recorded (next 0) but held by kind (enum lx_occupant_kind). */
void mt_switch_to(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t prev, uint8_t prev_state,
		  int16_t prev_syscall, uint8_t kind);
/* CPU cpu held by kind, of process pid named comm; name_only: the holder the next switch
 * gives the CPU to (LX_OCC_NAME_ONLY). */
void mt_occupant(struct mt *t, uint64_t ts, uint16_t cpu, uint8_t kind, uint32_t pid,
		 const char *comm, bool name_only);
void mt_wakeup(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid);
void mt_wakeup_new(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid);
/* sched_wakeup: tid on a run queue, the tracepoint run on cpu. */
void mt_enqueue(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid);
void mt_fork(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t parent, uint32_t child, uint32_t child_pid);
void mt_exec(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t pid, const char *comm);
/* An exec by thread old_tid, which the kernel renamed tid (a non-leader thread takes over the
 * leader's tid). */
void mt_exec_from(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t old_tid,
		  uint32_t pid, const char *comm);
void mt_exit(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid);
void mt_syscall(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, int nr);
void mt_sysret(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid);
/* An annotation record (type LX_REC_TASK_BEGIN .. LX_REC_LOG, or LX_REC_TRIGGER); name and msg
 * may be NULL. */
void mt_user(struct mt *t, uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t pid, uint8_t type,
	     uint64_t task, uint64_t parent, const char *name, const char *msg, uint8_t flags);

/* model__finish at ts, then both Go parsers must accept the file, then it is decoded into
 * t->trace; t->st has the model's stats. A go1.23 file: Go 1.23's reader (-d=1) must
 * accept it, and it is not decoded. */
void mt_finish(struct mt *t, uint64_t ts);

/* Frees everything and removes the file (kept, and its path printed, when keep is set or
 * $LXTRACE_TEST_KEEP is). */
void mt_close(struct mt *t, bool keep);

uint64_t mt_repairs(const struct model_stats *st);

/* Events of type ty on any P, whatever their goroutine. */
size_t mt_count(const struct gt_trace *tr, enum gt_type ty);

#endif
