/* pbuf.h - the few pieces of protocol buffers' encoding a pprof profile needs: varint fields,
 * length-delimited fields (strings, nested messages) and packed repeated varints, into a
 * growing buffer. lxtrace writes one message type (profile.proto) and reads none, so this
 * replaces a protobuf library and its generated code (docs/report.md, "Profiles"). */
#ifndef LXTRACE_USER_REPORT_PBUF_H
#define LXTRACE_USER_REPORT_PBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;	/* a write failed: the buffer is incomplete */
};

/* Field `field` as a varint (wire type 0); a negative int64 goes as its 64-bit two's
 * complement, as protobuf's int64 does. */
void pbuf__uint(struct pbuf *b, unsigned field, uint64_t v);

/* Field `field` as len bytes (wire type 2): a string, or a nested message's encoding. */
void pbuf__bytes(struct pbuf *b, unsigned field, const void *data, size_t len);

/* Field `field` as packed varints (wire type 2). */
void pbuf__packed(struct pbuf *b, unsigned field, const uint64_t *v, size_t n);

/* Empties b for reuse, keeping its memory. */
void pbuf__reset(struct pbuf *b);

void pbuf__free(struct pbuf *b);

#endif
