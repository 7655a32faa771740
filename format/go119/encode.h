/* encode.h - byte layout of single records (events, strings, stacks, batch headers), inline
 * because the writer calls them once per event. Callers guarantee the room each one states. */
#ifndef LXTRACE_FORMAT_GO119_ENCODE_H
#define LXTRACE_FORMAT_GO119_ENCODE_H

#include <string.h>

#include "format/varint.h"
#include "format/go119/wire.h"

/* Largest ordinary event: header byte, one-byte length, diff and GT_MAX_ARGS values. The
 * length-prefixed body of such an event is at most 50 bytes, so its length is one byte. */
#define GT_MAX_EVENT_LEN (2 + (1 + GT_MAX_ARGS) * GT_MAX_VARINT_LEN)
/* Batch header plus the Frequency record that the first batch carries. */
#define GT_MAX_BATCH_HDR_LEN (1 + 2 * GT_MAX_VARINT_LEN + 1 + GT_MAX_VARINT_LEN)

/* Event of type t: the diff, then n values (arguments and stack id), in the inline form
 * when at most two values follow the diff, else length-prefixed. */
static inline uint8_t *gt_encode_event(uint8_t *p, enum gt_type t, uint64_t dt,
				       const uint64_t *vals, unsigned n)
{
	uint8_t *body;

	if (n < 3) {
		*p++ = (uint8_t)(t | n << 6);
		p = gt_varint_put(p, dt);
		for (unsigned i = 0; i < n; i++)
			p = gt_varint_put(p, vals[i]);
		return p;
	}
	*p++ = (uint8_t)(t | 3 << 6);
	body = p + 1;
	p = gt_varint_put(body, dt);
	for (unsigned i = 0; i < n; i++)
		p = gt_varint_put(p, vals[i]);
	body[-1] = (uint8_t)(p - body);
	return p;
}

/* Batch header, with the Frequency record appended when freq != 0. */
static inline uint8_t *gt_encode_batch_header(uint8_t *p, uint64_t proc, uint64_t base_ts,
					      uint64_t freq)
{
	*p++ = gt_header_byte(GT_EV_BATCH);
	p = gt_varint_put(p, proc);
	p = gt_varint_put(p, base_ts);
	if (freq) {
		*p++ = gt_header_byte(GT_EV_FREQUENCY);
		p = gt_varint_put(p, freq);
	}
	return p;
}

/* Room needed by gt_encode_string. */
static inline size_t gt_string_record_len(size_t len)
{
	return 1 + 2 * GT_MAX_VARINT_LEN + len;
}

/* String record; its header byte carries k = 0 (the parsers ignore k for strings). */
static inline uint8_t *gt_encode_string(uint8_t *p, uint64_t id, const char *s, size_t len)
{
	*p++ = gt_header_byte(GT_EV_STRING);
	p = gt_varint_put(p, id);
	p = gt_varint_put(p, len);
	memcpy(p, s, len);
	return p + len;
}

/* Body length of a stack record whose frames are vals[0..4n) = {pc, func, file, line}... */
static inline size_t gt_stack_body_len(uint64_t id, const uint64_t *vals, size_t n)
{
	size_t len = gt_varint_len(id) + gt_varint_len(n);

	for (size_t i = 0; i < 4 * n; i++)
		len += gt_varint_len(vals[i]);
	return len;
}

/* Stack record, always length-prefixed; body_len from gt_stack_body_len. Needs
 * 1 + GT_MAX_VARINT_LEN + body_len bytes. */
static inline uint8_t *gt_encode_stack(uint8_t *p, uint64_t id, const uint64_t *vals, size_t n,
				       size_t body_len)
{
	*p++ = gt_header_byte(GT_EV_STACK);
	p = gt_varint_put(p, body_len);
	p = gt_varint_put(p, id);
	p = gt_varint_put(p, n);
	for (size_t i = 0; i < 4 * n; i++)
		p = gt_varint_put(p, vals[i]);
	return p;
}

#endif
