/* pbuf.c - protocol buffers' varint and length-delimited fields (pbuf.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/report/pbuf.h"

static void put(struct pbuf *b, const void *data, size_t len)
{
	if (b->oom || grow_array((void **)&b->p, &b->cap, b->n + len, 1, 256)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		tmp[n++] |= v ? 0x80 : 0;
	} while (v);
	put(b, tmp, n);
}

void pbuf__uint(struct pbuf *b, unsigned field, uint64_t v)
{
	varint(b, (uint64_t)field << 3);
	varint(b, v);
}

void pbuf__bytes(struct pbuf *b, unsigned field, const void *data, size_t len)
{
	varint(b, (uint64_t)field << 3 | 2);
	varint(b, len);
	put(b, data, len);
}

void pbuf__packed(struct pbuf *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];

		do {
			len++;
			x >>= 7;
		} while (x);
	}
	varint(b, (uint64_t)field << 3 | 2);
	varint(b, len);
	for (size_t i = 0; i < n; i++)
		varint(b, v[i]);
}

void pbuf__reset(struct pbuf *b)
{
	b->n = 0;
	b->oom = false;
}

void pbuf__free(struct pbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
