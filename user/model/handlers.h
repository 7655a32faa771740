/* handlers.h - one handler per record kind, each in the file of its record family; dispatch.c
 * calls them from its table of record kinds after checking the record's size and fields and
 * counting it. Each takes a record of its kind (a call stack, if any, in m->rs) and returns 0
 * or -errno. Handlers call core.h, never each other. Private to user/model/.
 */
#ifndef LXTRACE_USER_MODEL_HANDLERS_H
#define LXTRACE_USER_MODEL_HANDLERS_H

#include <stdint.h>

#include "bpf/lxtrace.h"

struct model;

/* sched.c */
int model_on_switch(struct model *m, const struct lx_rec *r);
int model_on_wakeup(struct model *m, const struct lx_rec *r);
int model_on_wakeup_new(struct model *m, const struct lx_rec *r);
int model_on_enqueue(struct model *m, const struct lx_rec *r);
int model_on_occupant(struct model *m, const struct lx_rec *r);

/* process.c */
int model_on_fork(struct model *m, const struct lx_rec *r);
int model_on_exec(struct model *m, const struct lx_rec *r);
int model_on_exit(struct model *m, const struct lx_rec *r);
int model_on_mmap(struct model *m, const struct lx_rec *r);
int model_on_rename(struct model *m, const struct lx_rec *r);

/* syscall.c */
int model_on_syscall(struct model *m, const struct lx_rec *r);
int model_on_sysret(struct model *m, const struct lx_rec *r);

/* rss.c */
int model_on_rss(struct model *m, const struct lx_rec *r);

/* annotate.c */
int model_on_user(struct model *m, const struct lx_rec *r);
int model_on_trigger(struct model *m, const struct lx_rec *r);

/* sample.c */
int model_on_sample(struct model *m, const struct lx_rec *r);

/* pystack.c: a Python thread's frames (LX_REC_PYSTACK), kept for the record after them. */
int model_on_pystack(struct model *m, const struct lx_rec *r);

#endif
