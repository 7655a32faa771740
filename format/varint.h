/* varint.h - unsigned LEB128, the only number encoding of both trace formats, shared by
 * their encoders and decoders. */
#ifndef LXTRACE_FORMAT_VARINT_H
#define LXTRACE_FORMAT_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* The longest a 64-bit value takes. */
#define GT_MAX_VARINT_LEN 10

/* Writes v at p, which must have GT_MAX_VARINT_LEN bytes of room; returns the end. */
static inline uint8_t *gt_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline unsigned gt_varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Reads a varint from [p, end). Returns the bytes consumed, or 0 when the input ends inside
 * the number or it does not fit 64 bits (more than 10 bytes, or a 10th byte above 1: Go
 * 1.23's binary.Uvarint refuses both, so the decoder must too). */
static inline size_t gt_varint_get(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < GT_MAX_VARINT_LEN && p + i < end; i++) {
		uint8_t b = p[i];

		if (i == GT_MAX_VARINT_LEN - 1 && b > 1)
			return 0;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return i + 1;
		}
	}
	return 0;
}

#endif
