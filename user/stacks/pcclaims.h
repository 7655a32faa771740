/* pcclaims.h - one PC, one frame for the whole trace: the PCs the symbolizer hands out, in
 * bounded memory.
 *
 * Viewers know a frame by its PC (Go 1.23 keeps the first frame a trace gives a PC, and both
 * viewers' profiles key locations by PC), so a PC handed out must keep meaning one frame. The
 * same address can be other code in another process: a PC another frame holds is moved to a
 * synthetic one found from a hash of both (symbolize.h, "PCs").
 *
 * The PCs of processes that come and go are new all the time (their layout is randomised), so
 * the claims are kept in two generations: a claim unused for a generation is forgotten. A
 * forgotten PC could then be met again with another frame: so every PC handed out as itself is
 * also entered in a fixed-size filter (a Bloom filter: it may say yes for a PC it never held,
 * never no for one it held), and a PC that is not claimed now but that the filter holds is
 * moved like a taken one. Its frames stay right either way; a wrong yes of the filter, which
 * grows likelier as it fills over hours, only shows a real address as a synthetic PC.
 */
#ifndef LXTRACE_USER_STACKS_PCCLAIMS_H
#define LXTRACE_USER_STACKS_PCCLAIMS_H

#include <stddef.h>
#include <stdint.h>

struct pcclaims;

struct pcclaims_stats {
	uint64_t moved;		/* PCs moved off an address another frame held or may have held */
	uint64_t generations;	/* generations of claims forgotten */
};

/* gen_claims: claims a generation holds; a moved PC is remap_base | (a hash & remap_mask),
 * a range no other PC of its users can be in. NULL with errno set. */
struct pcclaims *pcclaims__new(size_t gen_claims, uint64_t remap_base, uint64_t remap_mask);

/* The PC for frame id (> 0), found at pc: pc itself, or one of the remap range when another
 * frame holds pc or may have held it. 0 on ENOMEM. */
uint64_t pcclaims__claim(struct pcclaims *c, uint64_t pc, uint64_t id);

void pcclaims__stats(const struct pcclaims *c, struct pcclaims_stats *out);

/* Accepts NULL. */
void pcclaims__free(struct pcclaims *c);

#endif
