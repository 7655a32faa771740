/* pcclaims.c - PC -> frame claims in two generations, and a filter of every PC handed out as
 * itself (pcclaims.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/hash.h"
#include "lib/u64cache.h"
#include "user/stacks/pcclaims.h"

/* 2 MiB of filter, two bits a PC: after 4 million PCs handed out one PC in seven that was
 * never handed out reads as held. */
#define FILTER_BITS_LOG 24
#define FILTER_MASK ((1ull << FILTER_BITS_LOG) - 1)

struct pcclaims {
	struct u64cache *claims;	/* pc -> frame id */
	uint64_t remap_base, remap_mask;
	uint64_t *filter;
	struct pcclaims_stats st;
};

struct pcclaims *pcclaims__new(size_t gen_claims, uint64_t remap_base, uint64_t remap_mask)
{
	struct pcclaims *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->remap_base = remap_base;
	c->remap_mask = remap_mask;
	c->claims = u64cache__new(gen_claims);
	c->filter = calloc((1ull << FILTER_BITS_LOG) / 64, sizeof(*c->filter));
	if (!c->claims || !c->filter) {
		pcclaims__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

/* The filter's two bits of pc: from different parts of one hash. */
static bool filter_has(const struct pcclaims *c, uint64_t pc)
{
	uint64_t h = hash_mix(pc), a = h & FILTER_MASK, b = (h >> 32) & FILTER_MASK;

	return (c->filter[a / 64] >> (a % 64) & 1) && (c->filter[b / 64] >> (b % 64) & 1);
}

static void filter_add(struct pcclaims *c, uint64_t pc)
{
	uint64_t h = hash_mix(pc), a = h & FILTER_MASK, b = (h >> 32) & FILTER_MASK;

	c->filter[a / 64] |= 1ull << (a % 64);
	c->filter[b / 64] |= 1ull << (b % 64);
}

/* The frame id claiming pc, 0 for none. */
static uint64_t claimant(struct pcclaims *c, uint64_t pc)
{
	uint64_t id;

	return u64cache__get(c->claims, pc, &id) ? id : 0;
}

uint64_t pcclaims__claim(struct pcclaims *c, uint64_t pc, uint64_t id)
{
	uint64_t owner = claimant(c, pc), h;

	if (owner == id)
		return pc;
	if (owner || filter_has(c, pc)) {
		c->st.moved++;
		h = hash_mix(pc ^ hash_mix(id));
		for (;;) {
			pc = c->remap_base | (h & c->remap_mask);
			owner = claimant(c, pc);
			if (!owner || owner == id)
				break;
			h++;
		}
		if (owner)
			return pc;
	} else {
		filter_add(c, pc);
	}
	return u64cache__put(c->claims, pc, id) ? 0 : pc;
}

void pcclaims__stats(const struct pcclaims *c, struct pcclaims_stats *out)
{
	*out = c->st;
	out->generations = u64cache__generations(c->claims);
}

void pcclaims__free(struct pcclaims *c)
{
	if (!c)
		return;
	u64cache__free(c->claims);
	free(c->filter);
	free(c);
}
