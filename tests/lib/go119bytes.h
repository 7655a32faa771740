/* go119bytes.h - go1.19 trace files built record by record, for the cases lxtrace's writer never
 * makes (a stack id defined again, a P or a time far out, an order Go's parsers refuse): the
 * bytes docs/format.md §2 describes, no more checked than a hostile file's. */
#ifndef LXTRACE_TESTS_GO119BYTES_H
#define LXTRACE_TESTS_GO119BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "format/go119/wire.h"

struct go119bytes {
	uint8_t buf[8192];
	size_t len;
};

/* The header. */
void go119b_init(struct go119bytes *b);
/* An event of `type` with its n values (the time diff first when the type has one), in the
 * short form for up to 3 values, else the length-prefixed one. */
void go119b_event(struct go119bytes *b, enum gt_type type, size_t n, const uint64_t *vals);
#define V1B(b, type, ...) \
	go119b_event(b, type, sizeof((uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t), \
		  (uint64_t[]){ __VA_ARGS__ })
/* A Batch of P p at ticks ts; a Frequency; a String; a Stack of one frame. */
void go119b_batch(struct go119bytes *b, uint64_t p, uint64_t ts);
void go119b_frequency(struct go119bytes *b, uint64_t hz);
void go119b_string(struct go119bytes *b, uint64_t id, const char *s);
void go119b_stack1(struct go119bytes *b, uint64_t id, uint64_t pc, uint64_t func, uint64_t file,
		uint64_t line);
/* A file holding the bytes, at offset 0; -1 on failure. */
int go119b_memfd(const struct go119bytes *b);

#endif
