/* hash.h - the hashes of lxtrace: FNV-1a over bytes, and MurmurHash3's finalizer (whole, or
 * its first round) for integer keys.
 *
 * Both are part of what a trace shows, not only of table layout: the PC of an identity frame
 * is a hash_bytes of its name (the same name gets the same PC in every file), and a
 * symbolizer PC moved off a taken one is found by hash_mix. Changing either changes traces.
 */
#ifndef LXTRACE_LIB_HASH_H
#define LXTRACE_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Where a hash_bytes chain starts (FNV-1a's offset basis). */
#define HASH_BYTES_INIT 0xcbf29ce484222325ull

/* FNV-1a of len bytes at data, continuing from h (HASH_BYTES_INIT for a fresh hash), so a key
 * of several parts is hashed part by part. Its low bits are weak: mix before masking. */
static inline uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The first round of MurmurHash3's 64-bit finalizer: enough to spread small dense keys (tids,
 * Ps, goroutine ids) over a table's low bits. For the hottest lookups: the full finalizer
 * made the encoder's goroutine map cost 10% of bench_encode's throughput. */
static inline uint64_t hash_spread(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	return x ^ (x >> 33);
}

/* The whole finalizer: every input bit flips each output bit with probability about 1/2. A
 * bijection: distinct keys stay distinct. */
static inline uint64_t hash_mix(uint64_t x)
{
	x = hash_spread(x);
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

#endif
