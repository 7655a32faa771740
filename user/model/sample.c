/* model_sample_rss.c - the model's measurement records: CPU samples (LX_REC_SAMPLE) and the
 * resident memory shown as the Go heap counter (LX_REC_RSS).
 *
 * Memory: with opts.rss, the Go heap counter (HeapAlloc) is the sum of the resident memory of
 * the traced processes, each process's latest LX_REC_RSS value, written on the P where the
 * change happened.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/u64map.h"
#include "user/model/core.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

/* A CPU sample: on the sampling CPU's P, naming the thread's goroutine only once it exists in
 * the trace (a sample naming a goroutine before its GoCreate breaks Go 1.19's parser). */
int model_on_sample(struct model *m, const struct lx_sample *s)
{
	struct thread *t = s->h.tid ? threads__find(m->threads, s->h.tid) : NULL;
	uint32_t ident = CALLSTACKS_IDLE;
	struct procscan_thread info;
	uint64_t stk;
	int err;

	m->st.samples++;
	if (t) {
		ident = t->ident;
	} else if (s->h.tid) {
		/* Not seen yet (its fork record is still to come, or was lost): named from /proc. */
		if (procscan__thread(m->proc_root, s->h.tid, &info))
			info = (struct procscan_thread){ .pid = 0 };
		err = idents__get(m->idents, info.pid, info.comm, &ident);
		if (err)
			return err;
	}
	stk = callstacks__get(m->cs, s->h.cpu, ident, s->pid, m->rs->nkern ? s->syscall : -1, m->rs);
	if (!stk)
		return -errno;
	return gt_writer__cpu_sample(m->w, s->h.cpu, m->now, s->h.cpu, t ? t->goid : 0, stk);
}
/* Process pid now has `pages` resident: the counter moves by the difference. */
int model_set_rss(struct model *m, uint32_t pid, uint64_t pages)
{
	uint64_t *v;
	bool added;

	if (!pages) {
		v = u64map__get(m->rss_pages, pid);
		if (v) {
			m->rss_total -= *v;
			u64map__del(m->rss_pages, pid);
		}
		return 0;
	}
	v = u64map__put(m->rss_pages, pid, &added);
	if (!v)
		return -ENOMEM;
	m->rss_total += pages - *v;
	*v = pages;
	return 0;
}

int model_on_rss(struct model *m, const struct lx_rss *r)
{
	int err;

	m->st.rss++;
	if (!m->rss) {
		m->st.ignored++;
		return 0;
	}
	err = model_set_rss(m, r->pid, r->pages);
	return err ? err : model_emit(m, r->h.cpu, GT_EV_HEAP_ALLOC, m->rss_total * m->page_size, 0, 0);
}

/* Resident pages of process pid at start: statm's second field (file + anon + shmem, as
 * rss_stat counts them). 0 when it cannot be read: the first record corrects it. */
uint64_t model_statm_rss(const struct model *m, uint32_t pid)
{
	char path[64 + 4096];
	unsigned long long size, resident = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/statm", m->proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident;
}
