/* pprof.c - a profile in pprof's format: profile.proto, gzip'd (pprof.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/escape.h"
#include "lib/grow.h"
#include "user/report/intern.h"
#include "user/report/pbuf.h"
#include "user/report/pprof.h"
#include "user/report/stacktab.h"

static const struct {
	const char *type, *unit, *label;
} kinds[] = {
	[PROFILE_CPU] = { "cpu", "count", NULL },
	[PROFILE_OFFCPU] = { "off-cpu", "nanoseconds", "reason" },
	[PROFILE_SCHED] = { "delay", "nanoseconds", "after" },
	[PROFILE_SYSCALL] = { "syscall", "nanoseconds", "syscall" },
};

/* PROFILE_SYSCALL's values when the file has calls: each call, then apart its blocks. */
static const struct {
	const char *type, *unit;
} syscall_values[] = {
	{ "calls", "count" }, { "syscall", "nanoseconds" }, { "blocks", "count" },
	{ "off-cpu", "nanoseconds" },
};


/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE,
	PROFILE_PERIOD, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL,
	LABEL_KEY = 1, LABEL_STR,
	MAPPING_ID = 1, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES, MAPPING_HAS_LINE_NUMBERS,
	LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE,
	LINE_FUNCTION_ID = 1, LINE_LINE,
	FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME,
};

/* The string table, functions and locations, each numbered in the order first met: a
 * string's index is its handle, a function's and a location's id their handle + 1. */
struct encoder {
	struct intern *strs;
	struct intern *funcs;	/* of struct fn */
	struct intern *locs;	/* of struct loc */
	bool oom;
};

struct fn {
	uint64_t name, file;
};

struct loc {
	uint64_t func, line, pc;
};

/* key's handle in t, plus one for an id (functions and locations count from 1). */
static uint64_t handle(struct encoder *x, struct intern *t, const void *key, size_t len,
		       uint64_t plus)
{
	long h = intern__put(t, key, len, &(bool){ 0 });

	if (h < 0) {
		x->oom = true;
		return 0;
	}
	return (uint64_t)h + plus;
}

static uint64_t str_id(struct encoder *x, const char *s)
{
	return handle(x, x->strs, s, strlen(s), 0);
}

/* A name as the string table holds it: escaped as lxtrace prints names (lib/escape.h), so
 * whatever bytes a trace names, the table holds UTF-8 (a string field must, as protobuf
 * has it) and `pprof -top` sends a terminal no escape sequence. */
static void put_string(struct pbuf *out, const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f) {
		escape__print(f, s, strlen(s));
		if (!fclose(f)) {
			pbuf__bytes(out, PROFILE_STRING_TABLE, text, len);
			free(text);
			return;
		}
	}
	free(text);
	out->oom = true;
}

static uint64_t loc_id(struct encoder *x, const struct st_frame *f)
{
	struct fn fn = { str_id(x, f->func), str_id(x, f->file) };
	struct loc loc = { handle(x, x->funcs, &fn, sizeof(fn), 1), f->line, f->pc };

	return handle(x, x->locs, &loc, sizeof(loc), 1);
}

static void value_type(struct pbuf *out, unsigned field, struct encoder *x, const char *type,
		       const char *unit, struct pbuf *tmp)
{
	pbuf__reset(tmp);
	pbuf__uint(tmp, VALUE_TYPE_TYPE, str_id(x, type));
	pbuf__uint(tmp, VALUE_TYPE_UNIT, str_id(x, unit));
	pbuf__bytes(out, field, tmp->p, tmp->n);
	out->oom |= tmp->oom;
}

/* The samples of tab, each with its count and value at vals[at], vals[at + 1] of nvals, the
 * others 0 (a syscall's blocks come after its calls), and its label. */
static void samples(const struct profile *p, const struct stacktab *tab, size_t at, size_t nvals,
		    struct encoder *x, struct pbuf *out, struct pbuf *tmp, struct pbuf *sub)
{
	const struct st_entry *e = stacktab__entries(tab);
	uint64_t *ids = NULL, vals[4] = { 0 };
	size_t ids_cap = 0;

	for (size_t i = 0; i < stacktab__count(tab); i++) {
		if (grow_array((void **)&ids, &ids_cap, e[i].n + 1, sizeof(*ids), 64)) {
			x->oom = true;
			break;
		}
		for (size_t k = 0; k < e[i].n; k++)
			ids[k] = loc_id(x, &e[i].frames[k]);
		vals[at] = e[i].count;
		vals[at + 1] = e[i].value;
		pbuf__reset(tmp);
		pbuf__packed(tmp, SAMPLE_LOCATION_ID, ids, e[i].n);
		pbuf__packed(tmp, SAMPLE_VALUE, vals, nvals);
		if (kinds[profile__kind(p)].label) {
			pbuf__reset(sub);
			pbuf__uint(sub, LABEL_KEY, str_id(x, kinds[profile__kind(p)].label));
			pbuf__uint(sub, LABEL_STR, str_id(x, profile__label(p, e[i].label)));
			pbuf__bytes(tmp, SAMPLE_LABEL, sub->p, sub->n);
		}
		pbuf__bytes(out, PROFILE_SAMPLE, tmp->p, tmp->n);
		out->oom |= tmp->oom || sub->oom;
	}
	free(ids);
}

/* The profile message, uncompressed, into out. A syscall profile of a file with calls has
 * four values, each call's count and whole length, then its blocks' count and time off the
 * CPU; `go tool pprof` shows the lengths unless asked for another (-sample_index=off-cpu). */
static void encode(const struct profile *p, struct encoder *x, struct pbuf *out)
{
	const struct stacktab *blocks, *main = profile__samples(p, &blocks);
	struct pbuf tmp = { 0 }, sub = { 0 };
	bool two = profile__kind(p) != PROFILE_CPU, four = blocks != NULL;

	str_id(x, "");
	if (four) {
		for (size_t i = 0; i < 4; i++)
			value_type(out, PROFILE_SAMPLE_TYPE, x, syscall_values[i].type,
				   syscall_values[i].unit, &tmp);
	} else {
		value_type(out, PROFILE_SAMPLE_TYPE, x, two ? "count" : "samples", "count", &tmp);
		if (two)
			value_type(out, PROFILE_SAMPLE_TYPE, x, kinds[profile__kind(p)].type,
				   kinds[profile__kind(p)].unit, &tmp);
	}
	samples(p, main, 0, four ? 4 : two ? 2 : 1, x, out, &tmp, &sub);
	if (four)
		samples(p, blocks, 2, 4, x, out, &tmp, &sub);
	/* One mapping that says the functions are known: nothing for pprof to symbolize. */
	pbuf__reset(&tmp);
	pbuf__uint(&tmp, MAPPING_ID, 1);
	pbuf__uint(&tmp, MAPPING_MEMORY_LIMIT, UINT64_MAX);
	pbuf__uint(&tmp, MAPPING_FILENAME, str_id(x, "lxtrace"));
	pbuf__uint(&tmp, MAPPING_HAS_FUNCTIONS, 1);
	pbuf__uint(&tmp, MAPPING_HAS_FILENAMES, 1);
	pbuf__uint(&tmp, MAPPING_HAS_LINE_NUMBERS, 1);
	pbuf__bytes(out, PROFILE_MAPPING, tmp.p, tmp.n);
	for (size_t i = 0; i < intern__count(x->locs); i++) {
		const struct loc *loc = intern__key(x->locs, i);

		pbuf__reset(&sub);
		pbuf__uint(&sub, LINE_FUNCTION_ID, loc->func);
		pbuf__uint(&sub, LINE_LINE, loc->line);
		pbuf__reset(&tmp);
		pbuf__uint(&tmp, LOCATION_ID, i + 1);
		pbuf__uint(&tmp, LOCATION_MAPPING_ID, 1);
		pbuf__uint(&tmp, LOCATION_ADDRESS, loc->pc);
		pbuf__bytes(&tmp, LOCATION_LINE, sub.p, sub.n);
		pbuf__bytes(out, PROFILE_LOCATION, tmp.p, tmp.n);
	}
	for (size_t i = 0; i < intern__count(x->funcs); i++) {
		const struct fn *fn = intern__key(x->funcs, i);

		pbuf__reset(&tmp);
		pbuf__uint(&tmp, FUNCTION_ID, i + 1);
		pbuf__uint(&tmp, FUNCTION_NAME, fn->name);
		pbuf__uint(&tmp, FUNCTION_SYSTEM_NAME, fn->name);
		pbuf__uint(&tmp, FUNCTION_FILENAME, fn->file);
		pbuf__bytes(out, PROFILE_FUNCTION, tmp.p, tmp.n);
	}
	pbuf__uint(out, PROFILE_DURATION_NANOS, profile__span_ns(p));
	value_type(out, PROFILE_PERIOD_TYPE, x, kinds[profile__kind(p)].type,
		   kinds[profile__kind(p)].unit, &tmp);
	pbuf__uint(out, PROFILE_PERIOD, 1);
	if (four)
		pbuf__uint(out, PROFILE_DEFAULT_SAMPLE_TYPE, str_id(x, syscall_values[1].type));
	/* Last: every string is known once the rest is encoded. */
	for (size_t i = 0; i < intern__count(x->strs); i++)
		put_string(out, intern__key(x->strs, i));
	out->oom |= tmp.oom || sub.oom || x->oom;
	pbuf__free(&tmp);
	pbuf__free(&sub);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* data, gzip'd, to fd. */
static int gzip_to(int fd, const uint8_t *data, size_t len)
{
	uint8_t chunk[65536];
	z_stream z = { 0 };
	int ret = 0, zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			ret = -EIO;
			break;
		}
		ret = write_all(fd, chunk, sizeof(chunk) - z.avail_out);
	} while (!ret && zr != Z_STREAM_END);
	deflateEnd(&z);
	return ret;
}

int pprof__write(const struct profile *p, int fd, char *err, size_t errlen)
{
	struct encoder x = { 0 };
	struct pbuf out = { 0 };
	int ret = -ENOMEM;

	/* One message of at most 4 GiB: zlib's avail_in is 32 bits. */
	x.strs = intern__new();
	x.funcs = intern__new();
	x.locs = intern__new();
	if (x.strs && x.funcs && x.locs) {
		encode(p, &x, &out);
		if (!out.oom)
			ret = out.n > UINT32_MAX ? -EFBIG : gzip_to(fd, out.p, out.n);
	}
	if (ret)
		snprintf(err, errlen, "writing the profile: %s", strerror(-ret));
	pbuf__free(&out);
	intern__free(x.strs);
	intern__free(x.funcs);
	intern__free(x.locs);
	return ret;
}
