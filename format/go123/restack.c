/* restack.c - a go1.23 trace copied with some of its stacks named again (restack.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go123/restack.h"
#include "format/go123/wire.h"
#include "format/varint.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"

struct batch {
	uint64_t gen, m, ts;
	size_t off, len;	/* its data in the generation's bytes */
};

struct gen_string {
	const uint8_t *s;	/* in the generation's bytes, or in added */
	size_t len;
};

struct copy {
	FILE *in, *out;
	go123_restack_fn fn;
	void *ctx;
	struct go123_restack_stats *st;
	char *err;
	size_t errlen;
	uint64_t off;		/* of the input read so far */
	/* The generation being read. */
	uint8_t *bytes;
	size_t nbytes, bytes_cap;
	struct batch *b;
	size_t nb, b_cap;
	/* Its strings: content hash -> index + 1 in strs (the first of equal hashes), max id. */
	struct u64map *by_hash;
	struct gen_string *strs;
	uint64_t *str_ids;
	size_t nstrs, strs_cap, ids_cap;
	uint64_t max_sid;
	/* Strings added to it, as entries of a string table batch (kind byte first). */
	uint8_t *added;
	size_t nadded, added_cap;
	uint8_t *entry;		/* scratch: one stack table entry */
	uint64_t *pcs;
};

static int bad(struct copy *c, const char *what)
{
	snprintf(c->err, c->errlen, "offset %llu: %s", (unsigned long long)c->off, what);
	return -EINVAL;
}

/* The next varint of the input; false at its end or a bad one. */
static bool read_uv(struct copy *c, uint64_t *v)
{
	uint8_t buf[GT_MAX_VARINT_LEN];

	for (size_t i = 0; i < sizeof(buf); i++) {
		int ch = getc(c->in);

		if (ch == EOF)
			return false;
		buf[i] = (uint8_t)ch;
		if (!(ch & 0x80)) {
			c->off += i + 1;
			return gt_varint_get(buf, buf + i + 1, v) == i + 1;
		}
	}
	return false;
}

/* Reads the next batch into the generation; 1, 0 at the end of the input, or -errno. */
static int read_batch(struct copy *c, struct batch *b)
{
	int ch = getc(c->in);

	if (ch == EOF)
		return ferror(c->in) ? -EIO : 0;
	if (ch != GO123_EV_BATCH)
		return bad(c, "not a batch");
	c->off++;
	if (!read_uv(c, &b->gen) || !read_uv(c, &b->m) || !read_uv(c, &b->ts) ||
	    !read_uv(c, &b->len) || b->len > GO123_MAX_BATCH)
		return bad(c, "bad batch header");
	if (grow_array((void **)&c->bytes, &c->bytes_cap, c->nbytes + b->len, 1, 1 << 16))
		return -ENOMEM;
	if (fread(c->bytes + c->nbytes, 1, b->len, c->in) != b->len)
		return bad(c, "batch cut short");
	b->off = c->nbytes;
	c->nbytes += b->len;
	c->off += b->len;
	return 1;
}

static int put_batch(struct copy *c, const struct batch *b, const uint8_t *data, size_t len)
{
	uint8_t hdr[1 + 4 * GT_MAX_VARINT_LEN], *p = hdr;

	*p++ = GO123_EV_BATCH;
	p = gt_varint_put(p, b->gen);
	p = gt_varint_put(p, b->m);
	p = gt_varint_put(p, b->ts);
	p = gt_varint_put(p, len);
	if (fwrite(hdr, 1, (size_t)(p - hdr), c->out) != (size_t)(p - hdr) ||
	    fwrite(data, 1, len, c->out) != len)
		return -EIO;
	return 0;
}

static uint64_t hash_of(const void *s, size_t len)
{
	return hash_mix(hash_bytes(HASH_BYTES_INIT, s, len));
}

/* Indexes string sid, len bytes at s; 0 or -ENOMEM. */
static int index_string(struct copy *c, uint64_t sid, const uint8_t *s, size_t len)
{
	bool added;
	uint64_t *slot;

	if (grow_array((void **)&c->strs, &c->strs_cap, c->nstrs + 1, sizeof(*c->strs), 256) ||
	    grow_array((void **)&c->str_ids, &c->ids_cap, c->nstrs + 1, sizeof(*c->str_ids), 256))
		return -ENOMEM;
	slot = u64map__put(c->by_hash, hash_of(s, len), &added);
	if (!slot)
		return -ENOMEM;
	if (added)
		*slot = c->nstrs + 1;
	c->strs[c->nstrs] = (struct gen_string){ s, len };
	c->str_ids[c->nstrs++] = sid;
	if (sid > c->max_sid)
		c->max_sid = sid;
	return 0;
}

/* Indexes the strings of the generation's string table batches. */
static int index_strings(struct copy *c)
{
	for (size_t i = 0; i < c->nb; i++) {
		const uint8_t *p = c->bytes + c->b[i].off, *end = p + c->b[i].len;
		uint64_t sid, len;
		size_t k;
		int err;

		if (p == end || *p++ != GO123_EV_STRINGS)
			continue;
		while (p < end) {
			if (*p++ != GO123_EV_STRING || !(k = gt_varint_get(p, end, &sid)) ||
			    !(p += k, k = gt_varint_get(p, end, &len)) ||
			    len > (size_t)(end - p - k))
				return bad(c, "bad string table");
			p += k;
			if ((err = index_string(c, sid, p, len)))
				return err;
			p += len;
		}
	}
	return 0;
}

/* Whether the generation has string name (len bytes): its id in *sid. */
static bool find_string(const struct copy *c, const char *name, size_t len, uint64_t *sid)
{
	const uint64_t *first = u64map__get(c->by_hash, hash_of(name, len));

	if (!first)
		return false;
	/* The first string of its hash, then all: two names of one hash are rare. */
	for (size_t i = *first - 1, k = 0; k <= c->nstrs; i = k++) {
		if (i < c->nstrs && c->strs[i].len == len && !memcmp(c->strs[i].s, name, len)) {
			*sid = c->str_ids[i];
			return true;
		}
	}
	return false;
}

/* The generation's id of name (at most GO123_MAX_STRING bytes of it), added when new. */
static int string_id(struct copy *c, const char *name, uint64_t *sid)
{
	size_t len = strnlen(name ? name : "", GO123_MAX_STRING);
	uint8_t *e;

	*sid = 0;
	if (!len || find_string(c, name, len, sid))
		return 0;
	if (grow_array((void **)&c->added, &c->added_cap,
		       c->nadded + 2 + 2 * GT_MAX_VARINT_LEN + len, 1, 4096))
		return -ENOMEM;
	if (!c->nadded)
		c->added[c->nadded++] = GO123_EV_STRINGS;
	e = c->added + c->nadded;
	*e++ = GO123_EV_STRING;
	e = gt_varint_put(e, *sid = c->max_sid + 1);
	e = gt_varint_put(e, len);
	memcpy(e, name, len);
	c->nadded = (size_t)(e + len - c->added);
	c->st->strings++;
	/* Indexed as the caller's name, which lives until the copy ends: added may move. */
	return index_string(c, *sid, (const uint8_t *)name, len);
}

/* Writes stack table batch b, its entries named again where fn says. */
static int copy_stacks(struct copy *c, const struct batch *b)
{
	const uint8_t *p = c->bytes + b->off + 1, *end = c->bytes + b->off + b->len;
	uint8_t *out = malloc(GO123_MAX_BATCH);
	size_t nout = 0;
	int err = 0;

	if (!out)
		return -ENOMEM;
	out[nout++] = GO123_EV_STACKS;
	while (!err && p < end) {
		const uint8_t *start = p;
		const struct gt_frame *named;
		uint64_t id, n, v[4];
		uint8_t *e = c->entry;
		size_t k, len;

		if (*p++ != GO123_EV_STACK || !(k = gt_varint_get(p, end, &id)) ||
		    !(p += k, k = gt_varint_get(p, end, &n)) || n > GO123_MAX_FRAMES) {
			err = bad(c, "bad stack table");
			break;
		}
		p += k;
		for (uint64_t i = 0; i < n && !err; i++)
			for (int j = 0; j < 4 && !err; j++) {
				if (!(k = gt_varint_get(p, end, &v[j])))
					err = bad(c, "bad stack table");
				p += k;
				if (!j)
					c->pcs[i] = v[0];
			}
		if (err)
			break;
		named = n ? c->fn(c->ctx, c->pcs, (size_t)n) : NULL;
		if (!named) {
			len = (size_t)(p - start);
			memcpy(e, start, len);
		} else {
			*e++ = GO123_EV_STACK;
			e = gt_varint_put(e, id);
			e = gt_varint_put(e, n);
			for (uint64_t i = 0; i < n && !err; i++) {
				uint64_t fn, file;

				if ((err = string_id(c, named[i].func, &fn)) ||
				    (err = string_id(c, named[i].file, &file)))
					break;
				e = gt_varint_put(e, named[i].pc);
				e = gt_varint_put(e, fn);
				e = gt_varint_put(e, file);
				e = gt_varint_put(e, named[i].line);
			}
			len = (size_t)(e - c->entry);
			c->st->stacks++;
		}
		if (!err && nout + len > GO123_MAX_BATCH) {
			err = put_batch(c, b, out, nout);
			nout = 1;
		}
		if (!err) {
			memcpy(out + nout, c->entry, len);
			nout += len;
		}
	}
	if (!err && nout > 1)
		err = put_batch(c, b, out, nout);
	free(out);
	return err;
}

/* Writes the generation read, then forgets it. */
static int copy_generation(struct copy *c)
{
	const struct batch *last_table = NULL;
	int err = index_strings(c);

	for (size_t i = 0; i < c->nb && !err; i++) {
		const struct batch *b = &c->b[i];
		const uint8_t *data = c->bytes + b->off;

		if (b->len && data[0] == GO123_EV_STACKS) {
			err = copy_stacks(c, b);
			last_table = b;
		} else {
			err = put_batch(c, b, data, b->len);
		}
	}
	/* The strings the new frames name, in batches of at most GO123_MAX_BATCH: entries [at, end)
	 * of added after the kind byte, which each batch but the first writes over the last byte
	 * of the entry before it, in the file already. */
	for (size_t at = 1; !err && last_table && at < c->nadded;) {
		size_t end = at;

		while (end < c->nadded) {
			const uint8_t *p = c->added + end + 1, *stop = c->added + c->nadded;
			uint64_t sid = 0, slen = 0;
			size_t k = gt_varint_get(p, stop, &sid);

			k += gt_varint_get(p + k, stop, &slen);
			if (end - at + 2 + k + slen > GO123_MAX_BATCH)
				break;
			end += 1 + k + (size_t)slen;
		}
		c->added[at - 1] = GO123_EV_STRINGS;
		err = put_batch(c, last_table, c->added + at - 1, end - at + 1);
		at = end;
	}
	c->st->generations++;
	c->nbytes = c->nb = c->nstrs = c->nadded = 0;
	c->max_sid = 0;
	u64map__clear(c->by_hash);
	return err;
}

int go123_restack__copy(int in, int out, go123_restack_fn fn, void *ctx,
		      struct go123_restack_stats *st, char *err, size_t errlen)
{
	struct copy c = { .fn = fn, .ctx = ctx, .st = st, .err = err, .errlen = errlen };
	uint8_t hdr[GO123_HEADER_LEN];
	struct batch b;
	int in2 = dup(in), out2 = dup(out), ret;

	*st = (struct go123_restack_stats){ 0 };
	c.in = in2 >= 0 ? fdopen(in2, "r") : NULL;
	c.out = out2 >= 0 ? fdopen(out2, "w") : NULL;
	c.by_hash = u64map__new();
	c.entry = malloc(1 + 2 * GT_MAX_VARINT_LEN + GO123_MAX_FRAMES * 4 * GT_MAX_VARINT_LEN);
	c.pcs = malloc(GO123_MAX_FRAMES * sizeof(*c.pcs));
	if (!c.in || !c.out || !c.by_hash || !c.entry || !c.pcs) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	if (fread(hdr, 1, sizeof(hdr), c.in) != sizeof(hdr) ||
	    memcmp(hdr, GO123_HEADER, sizeof(hdr))) {
		ret = bad(&c, "not a go1.23 trace");
		goto out;
	}
	c.off = sizeof(hdr);
	ret = fwrite(hdr, 1, sizeof(hdr), c.out) == sizeof(hdr) ? 0 : -EIO;
	while (!ret && (ret = read_batch(&c, &b)) == 1) {
		ret = 0;
		if (c.nb && b.gen != c.b[0].gen) {
			/* b's data stays: it moves to the next generation's start. */
			struct batch next = b;
			size_t keep = c.nbytes - b.off;

			c.nbytes = b.off;
			ret = copy_generation(&c);
			memmove(c.bytes, c.bytes + next.off, keep);
			next.off = 0;
			c.nbytes = keep;
			b = next;
		}
		if (!ret && grow_array((void **)&c.b, &c.b_cap, c.nb + 1, sizeof(*c.b), 64))
			ret = -ENOMEM;
		if (!ret)
			c.b[c.nb++] = b;
	}
	if (!ret && c.nb)
		ret = copy_generation(&c);
	if (!ret && fflush(c.out))
		ret = -errno;
	if (ret && ret != -EINVAL)
		snprintf(err, errlen, "%s", strerror(-ret));
out:
	if (c.in)
		fclose(c.in);
	else if (in2 >= 0)
		close(in2);
	if (c.out) {
		if (fclose(c.out) && !ret) {
			ret = -errno;
			snprintf(err, errlen, "%s", strerror(-ret));
		}
	} else if (out2 >= 0) {
		close(out2);
	}
	u64map__free(c.by_hash);
	free(c.bytes);
	free(c.b);
	free(c.strs);
	free(c.str_ids);
	free(c.added);
	free(c.entry);
	free(c.pcs);
	return ret;
}
