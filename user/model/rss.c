/* rss.c - resident memory records (LX_REC_RSS, a target's rss_stat): the Go heap counter
 * (HeapAlloc) follows the sum over the traced processes, written on the P where the change
 * happened.
 */
#include "user/model/core.h"
#include "user/model/handlers.h"

int model_on_rss(struct model *m, const struct lx_rec *rec)
{
	const struct lx_rss *r = (const struct lx_rss *)rec;
	int err;

	if (!m->rss) {
		m->st.ignored++;
		return 0;
	}
	err = model_set_rss(m, r->pid, r->pages);
	return err ? err : m->out->heap(m, r->h.cpu, m->rss_total * m->page_size);
}
