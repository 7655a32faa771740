/* mutants.c - `lxtrace repair` and `lxtrace dump` over a few hundred mutated traces (the golden
 * and generated traces of tests/streams/, one of them a real recording): every file repair
 * writes passes both Go parsers, or it exits non-zero with one line saying why and leaves no
 * output behind (in place, every fourth: the file as it was); dump refuses every input the
 * parsers refuse.
 *
 * The mutator is deterministic (a fixed seed per mutant): byte flips, a value of a record
 * changed, truncations, a string renumbered, two batches swapped, a time moved, a record
 * dropped. Records are decoded into values and encoded again, so a changed value keeps the
 * record well-formed and tests the state checks rather than the byte-level ones.
 * LXTRACE_MUTANTS sets how many (default 320); LXTRACE_TEST_KEEP keeps the first failing input.
 *
 * The same for a go1.23 trace (format/go123/, judged by Go 1.23's reader alone): its batches
 * and their events decoded by the format's table and encoded again, mutated by byte flips,
 * truncations, batches dropped or swapped, a batch header's value, an event's value or an
 * event dropped.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "format/go123/spec.h"
#include "format/varint.h"
#include "tests/integration/itest.h"
#include "tests/lib/go123story.h"

#define SOURCE_DIR LXTRACE_SRCDIR "/tests/streams/"

static const char *const sources[] = { "workloads.trace", "generated.trace",
				       "generated-nosys.trace" };

/* One record of a trace: its header byte, values and, for strings and logs, the bytes after
 * them. A String's values are its id; its bytes follow. */
struct mrec {
	uint8_t b;
	size_t v0, nv;		/* values: vals[v0 .. v0 + nv) */
	const uint8_t *tail;	/* String bytes, UserLog message */
	size_t tail_len;
};

struct mtrace {
	struct mrec *recs;
	size_t n;
	uint64_t *vals;
	size_t nvals;
};

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size);
	cr_assert(buf);
	cr_assert_eq(read(fd, buf, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

static uint64_t get(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	size_t n = gt_varint_get(*p, end, &v);

	cr_assert(n, "the source trace has a bad varint");
	*p += n;
	return v;
}

static void add_val(struct mtrace *t, uint64_t v)
{
	t->vals = realloc(t->vals, (t->nvals + 1) * sizeof(*t->vals));
	cr_assert(t->vals);
	t->vals[t->nvals++] = v;
}

/* Decodes a valid trace into records (the sources are lxtrace's own files). */
static void decode(const uint8_t *buf, size_t len, struct mtrace *t)
{
	const uint8_t *p = buf + GT_HEADER_LEN, *end = buf + len;

	memset(t, 0, sizeof(*t));
	while (p < end) {
		struct mrec r = { .b = *p++ };
		uint8_t type = r.b & 0x3f;

		r.v0 = t->nvals;
		if (type == GT_EV_STRING) {
			add_val(t, get(&p, end));
			r.tail_len = (size_t)get(&p, end);
			r.tail = p;
			p += r.tail_len;
		} else if (r.b >> 6 < 3) {
			for (unsigned i = 0; i <= r.b >> 6; i++)
				add_val(t, get(&p, end));
		} else {
			uint64_t l = get(&p, end);
			const uint8_t *body_end = p + l;

			while (p < body_end)
				add_val(t, get(&p, body_end));
			if (type == GT_EV_USER_LOG) {
				r.tail_len = (size_t)get(&p, end);
				r.tail = p;
				p += r.tail_len;
			}
		}
		r.nv = t->nvals - r.v0;
		t->recs = realloc(t->recs, (t->n + 1) * sizeof(*t->recs));
		cr_assert(t->recs);
		t->recs[t->n++] = r;
	}
}

/* Encodes the records in the order of idx (n of them) after a header, into a malloc'd buffer. */
static uint8_t *encode(const struct mtrace *t, const size_t *idx, size_t n, size_t *len)
{
	size_t cap = GT_HEADER_LEN, at = GT_HEADER_LEN;
	uint8_t *out, body[GT_MAX_VARINT_LEN * (2 + 4 * GT_MAX_STACK_FRAMES)];

	for (size_t i = 0; i < n; i++) {
		const struct mrec *r = &t->recs[idx[i]];

		cap += 1 + 2 * GT_MAX_VARINT_LEN * (r->nv + 2) + r->tail_len;
	}
	out = malloc(cap);
	cr_assert(out);
	memcpy(out, GT_HEADER, GT_HEADER_LEN);
	for (size_t i = 0; i < n; i++) {
		const struct mrec *r = &t->recs[idx[i]];
		uint8_t *p = body;

		out[at++] = r->b;
		for (size_t k = 0; k < r->nv; k++)
			p = gt_varint_put(p, t->vals[r->v0 + k]);
		if ((r->b >> 6) == 3 && (r->b & 0x3f) != GT_EV_STRING)
			at = (size_t)(gt_varint_put(out + at, (uint64_t)(p - body)) - out);
		memcpy(out + at, body, (size_t)(p - body));
		at += (size_t)(p - body);
		if (r->tail) {
			at = (size_t)(gt_varint_put(out + at, r->tail_len) - out);
			memcpy(out + at, r->tail, r->tail_len);
			at += r->tail_len;
		}
	}
	*len = at;
	return out;
}

static bool is_type(const struct mrec *r, uint8_t type)
{
	return (r->b & 0x3f) == type;
}

/* A random record index satisfying pred, or SIZE_MAX after many misses. */
static size_t pick(const struct mtrace *t, uint64_t *s, bool (*pred)(const struct mrec *))
{
	for (int tries = 0; tries < 10000; tries++) {
		size_t i = (size_t)(rng(s) % t->n);

		if (pred(&t->recs[i]))
			return i;
	}
	return SIZE_MAX;
}

static bool any(const struct mrec *r)
{
	return r->nv > 0;
}

static bool string_rec(const struct mrec *r)
{
	return is_type(r, GT_EV_STRING);
}

static bool timed(const struct mrec *r)
{
	uint8_t type = r->b & 0x3f;

	return r->nv && type != GT_EV_STRING && type != GT_EV_STACK &&
	       !(gt_specs[type].flags & GT_NO_TS);
}

/* A new value near or far from v. */
static uint64_t other_value(uint64_t v, uint64_t *s)
{
	switch (rng(s) % 6) {
	case 0: return v + 1;
	case 1: return v - 1;
	case 2: return v * 2 + 1;
	case 3: return 0;
	case 4: return rng(s) % 64;
	default: return rng(s);
	}
}

static const char *const kinds[] = { "byte flip", "value", "truncation", "string renumbered",
				     "batches swapped", "time", "record dropped" };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Mutant number `seed` of the source (decoded as t, raw as src): a malloc'd file. */
static uint8_t *mutate(struct mtrace *t, const uint8_t *src, size_t srclen, unsigned kind,
		       uint64_t seed, size_t *len)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1, saved;
	size_t *idx = malloc(t->n * sizeof(*idx)), n = t->n, i, j, a, b, a_end, b_end;
	uint8_t *out = NULL;

	cr_assert(idx);
	for (i = 0; i < t->n; i++)
		idx[i] = i;
	switch (kind) {
	case 0:	/* byte flip */
		out = malloc(srclen);
		cr_assert(out);
		memcpy(out, src, srclen);
		for (unsigned k = 0; k <= rng(&s) % 3; k++)
			out[GT_HEADER_LEN + rng(&s) % (srclen - GT_HEADER_LEN)] ^= (uint8_t)(1 + rng(&s) % 255);
		*len = srclen;
		break;
	case 1:	/* value */
	case 3:	/* string renumbered */
	case 5:	/* time */
		i = pick(t, &s, kind == 1 ? any : kind == 3 ? string_rec : timed);
		cr_assert_neq(i, SIZE_MAX);
		j = t->recs[i].v0 + (kind == 1 ? rng(&s) % t->recs[i].nv : 0);
		if (kind == 5 && is_type(&t->recs[i], GT_EV_BATCH))
			j++;	/* a batch's base time */
		saved = t->vals[j];
		t->vals[j] = kind == 5 ? saved + (rng(&s) % 2 ? 1 : -1) * (1 + rng(&s) % 100000) :
			     other_value(saved, &s);
		out = encode(t, idx, n, len);
		t->vals[j] = saved;
		break;
	case 2:	/* truncation */
		*len = GT_HEADER_LEN + rng(&s) % (srclen - GT_HEADER_LEN);
		out = malloc(*len);
		cr_assert(out);
		memcpy(out, src, *len);
		break;
	case 4: { /* batches swapped: the records from batch a to its end with those of b */
		size_t *tmp = malloc(t->n * sizeof(*tmp)), k = 0;

		cr_assert(tmp);
		a = pick(t, &s, timed);
		while (a > 0 && !is_type(&t->recs[a], GT_EV_BATCH))
			a--;
		b = pick(t, &s, timed);
		while (b > 0 && !is_type(&t->recs[b], GT_EV_BATCH))
			b--;
		if (a > b) {
			i = a;
			a = b;
			b = i;
		}
		for (a_end = a + 1; a_end < t->n && !is_type(&t->recs[a_end], GT_EV_BATCH); a_end++)
			;
		for (b_end = b + 1; b_end < t->n && !is_type(&t->recs[b_end], GT_EV_BATCH); b_end++)
			;
		if (a == b) {
			b = b_end;
			for (b_end = b + 1 < t->n ? b + 1 : t->n;
			     b_end < t->n && !is_type(&t->recs[b_end], GT_EV_BATCH); b_end++)
				;
		}
		for (i = 0; i < a; i++)
			tmp[k++] = i;
		for (i = b; i < b_end; i++)
			tmp[k++] = i;
		for (i = a_end; i < b; i++)
			tmp[k++] = i;
		for (i = a; i < a_end; i++)
			tmp[k++] = i;
		for (i = b_end; i < t->n; i++)
			tmp[k++] = i;
		cr_assert_eq(k, t->n);
		out = encode(t, tmp, k, len);
		free(tmp);
		break;
	}
	default: /* record dropped */
		i = pick(t, &s, any);
		cr_assert_neq(i, SIZE_MAX);
		memmove(idx + i, idx + i + 1, (n - i - 1) * sizeof(*idx));
		out = encode(t, idx, n - 1, len);
		break;
	}
	free(idx);
	return out;
}

static void write_file(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* path holds exactly the len bytes of buf. */
static bool unchanged(const char *path, const uint8_t *buf, size_t len)
{
	size_t n;
	uint8_t *now = slurp(path, &n);
	bool same = n == len && !memcmp(now, buf, len);

	free(now);
	return same;
}

/* The stderr of a failed command is one line, with something on it. */
static bool one_line(const char *err)
{
	const char *nl = err ? strchr(err, '\n') : NULL;

	return nl && nl > err && !nl[1];
}

/* What one mutant (buf, len) showed: repair and dump run on it, their results judged by
 * parsers_ok (the Go parsers of its format). */
struct verdict {
	unsigned repaired, refused, bad_out, bad_refusal, dump_missed, rejected;
	int dump_st, repair_st;	/* the exit statuses of the last mutant's */
};

static void check_mutant(const char *lx, const char *in, const char *out, const uint8_t *buf,
			 size_t len, bool in_place,
			 bool (*parsers_ok)(const char *, char *, size_t), struct verdict *v,
			 char *note, size_t notelen)
{
	const char *repair[] = { lx, "repair", in_place ? out : in, in_place ? NULL : "-o", out,
				 NULL };
	const char *dump[] = { lx, "dump", in, NULL };
	char *err = NULL, why[1024];
	bool in_ok;
	int st;

	note[0] = '\0';
	write_file(in, buf, len);
	unlink(out);
	if (in_place)
		write_file(out, buf, len);
	in_ok = parsers_ok(in, why, sizeof(why));
	v->rejected += !in_ok;
	st = run_capture(dump, 60, NULL, &err);
	if (!in_ok && st == 0) {
		v->dump_missed++;
		snprintf(note, notelen, "dump took what the parsers refuse (%s)", why);
	} else if (st && !one_line(err)) {
		v->bad_refusal++;
		snprintf(note, notelen, "dump exited %d, stderr not one line: %s", st,
			 err ? err : "(none)");
	}
	free(err);
	v->dump_st = st;
	st = run_capture(repair, 60, NULL, &err);
	v->repair_st = st;
	if (st == 0) {
		v->repaired++;
		if (access(out, F_OK))
			snprintf(note, notelen, "repair exited 0 and wrote nothing");
		else if (!parsers_ok(out, why, sizeof(why)))
			snprintf(note, notelen, "repair wrote a file the parsers refuse: %s", why);
		v->bad_out += !!note[0] && !strncmp(note, "repair", 6);
	} else {
		v->refused++;
		if (!one_line(err) || (in_place ? !unchanged(out, buf, len) : !access(out, F_OK))) {
			v->bad_refusal++;
			snprintf(note, notelen, "repair%s exited %d with %s%s",
				 in_place ? " in place" : "", st, !one_line(err) ?
				 "stderr not one line: " : in_place ? "the file changed: " :
				 "its output left behind: ", err ? err : "(none)");
		}
	}
	free(err);
}

/* Keeps the first failing input when asked. */
static void keep_first(const char *in, unsigned m, const char *note, char *first, size_t len,
		       const char *what)
{
	if (!note[0] || first[0])
		return;
	snprintf(first, len, "mutant %u (%s): %s", m, what, note);
	if (getenv("LXTRACE_TEST_KEEP")) {
		char keep[96];

		snprintf(keep, sizeof(keep), "%s.mutant%u", in, m);
		rename(in, keep);
		cr_log_warn("kept %s", keep);
	}
}

static unsigned mutants_wanted(void)
{
	const char *env = getenv("LXTRACE_MUTANTS");

	return env ? (unsigned)atoi(env) : 320;
}

Test(mutants, repair_writes_only_what_both_parsers_take, .timeout = 600)
{
	unsigned total = mutants_wanted();
	struct verdict v = { 0 };
	char in[64], out[80], first[2048] = "";
	const char *lx = record__build_path("lxtrace");
	struct mtrace traces[3];
	uint8_t *raw[3];
	size_t rawlen[3];

	for (unsigned k = 0; k < 3; k++) {
		char path[128];

		snprintf(path, sizeof(path), SOURCE_DIR "%s", sources[k]);
		raw[k] = slurp(path, &rawlen[k]);
		decode(raw[k], rawlen[k], &traces[k]);
	}
	cr_assert_eq(record__tmpfile(in, sizeof(in), ".trace"), 0);
	snprintf(out, sizeof(out), "%s.out", in);
	for (unsigned m = 0; m < total; m++) {
		unsigned src = m % 3, kind = (m / 3) % NKINDS;
		size_t len;
		uint8_t *buf = mutate(&traces[src], raw[src], rawlen[src], kind, m, &len);
		char note[1536], what[128];

		/* Every fourth in place: OUT starts as a copy of the input. */
		check_mutant(lx, in, out, buf, len, m % 4 == 3, goparse_both_ok, &v, note,
			     sizeof(note));
		snprintf(what, sizeof(what), "%s of %s", kinds[kind], sources[src]);
		keep_first(in, m, note, first, sizeof(first), what);
		free(buf);
	}
	unlink(in);
	unlink(out);
	fprintf(stderr, "mutants: %u, %u refused by the Go parsers; repair: %u exit 0 (%u of them "
		"written files the parsers refuse), %u refused; %u refusals of repair or dump not in "
		"one line or with the output left; dump took %u the parsers refuse\n", total,
		v.rejected, v.repaired, v.bad_out, v.refused, v.bad_refusal, v.dump_missed);
	for (unsigned k = 0; k < 3; k++) {
		free(traces[k].recs);
		free(traces[k].vals);
		free(raw[k]);
	}
	cr_assert(!v.bad_out && !v.bad_refusal && !v.dump_missed, "%u bad outputs, %u bad "
		  "refusals, %u missed by dump; the first: %s", v.bad_out, v.bad_refusal,
		  v.dump_missed, first);
}

/* ---- go1.23 -------------------------------------------------------------------------------- */

/* A batch of a go1.23 trace: its header's values and its bytes. */
struct v2batch {
	uint64_t gen, m, base;
	const uint8_t *body;
	size_t len;
};

static size_t go123_decode(const uint8_t *buf, size_t len, struct v2batch **out)
{
	const uint8_t *p = buf + GO123_HEADER_LEN, *end = buf + len;
	size_t n = 0;

	*out = NULL;
	while (p < end) {
		struct v2batch b;
		uint64_t l;

		cr_assert_eq(*p++, GO123_EV_BATCH);
		b.gen = get(&p, end);
		b.m = get(&p, end);
		b.base = get(&p, end);
		l = get(&p, end);
		b.body = p;
		b.len = (size_t)l;
		p += l;
		*out = realloc(*out, (n + 1) * sizeof(**out));
		cr_assert(*out);
		(*out)[n++] = b;
	}
	return n;
}

/* Appends batch b (its body given apart) to out at *at. */
static void go123_put(uint8_t *out, size_t *at, const struct v2batch *b, const uint8_t *body,
		   size_t len)
{
	uint8_t *p = out + *at;

	*p++ = GO123_EV_BATCH;
	p = gt_varint_put(p, b->gen);
	p = gt_varint_put(p, b->m);
	p = gt_varint_put(p, b->base);
	p = gt_varint_put(p, len);
	memcpy(p, body, len);
	*at = (size_t)(p - out) + len;
}

/* The event starting at body[off] of an event batch: its values (dt, then the arguments) and
 * its length, 0 when it is not a timed event (a table batch). */
static size_t go123_event(const uint8_t *body, size_t len, size_t off, uint64_t *vals, size_t *nv)
{
	const struct go123_spec *s = go123_spec(body[off]);
	const uint8_t *p = body + off + 1;

	if (!s)
		return 0;
	*nv = 1u + s->nargs;
	for (size_t i = 0; i < *nv; i++)
		vals[i] = get(&p, body + len);
	return (size_t)(p - (body + off));
}

static const char *const go123_kinds[] = { "byte flip", "truncation", "batch dropped",
					"batches swapped", "batch header value", "event value",
					"event dropped" };
#define GO123_NKINDS (sizeof(go123_kinds) / sizeof(go123_kinds[0]))

/* Mutant number seed of the source (raw src, batches b): a malloc'd file. */
static uint8_t *go123_mutate(const uint8_t *src, size_t srclen, const struct v2batch *b, size_t nb,
			  unsigned kind, uint64_t seed, size_t *len)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	uint8_t *out = malloc(srclen + 64 + nb * 64);
	size_t at = GO123_HEADER_LEN, x = (size_t)(rng(&s) % nb), y = (size_t)(rng(&s) % nb);

	cr_assert(out);
	memcpy(out, src, GO123_HEADER_LEN);
	if (kind == 0 || kind == 1) {
		memcpy(out, src, srclen);
		*len = kind ? GO123_HEADER_LEN + rng(&s) % (srclen - GO123_HEADER_LEN) : srclen;
		for (unsigned k = 0; !kind && k <= rng(&s) % 3; k++)
			out[GO123_HEADER_LEN + rng(&s) % (srclen - GO123_HEADER_LEN)] ^=
				(uint8_t)(1 + rng(&s) % 255);
		return out;
	}
	/* An event batch for the kinds that change events: its first byte a timed event. */
	for (size_t tries = 0; kind >= 5 && tries < 1000 && (!b[x].len || !go123_spec(b[x].body[0]));
	     tries++)
		x = (size_t)(rng(&s) % nb);
	for (size_t i = 0; i < nb; i++) {
		size_t k = kind == 3 && i == x ? y : kind == 3 && i == y ? x : i;
		struct v2batch h = b[k];

		if (kind == 2 && i == x)
			continue;
		if (kind == 4 && i == x) {
			uint64_t *f[] = { &h.gen, &h.m, &h.base };
			uint64_t *v = f[rng(&s) % 3];

			*v = other_value(*v, &s);
		}
		if (kind >= 5 && i == x) {
			uint8_t body[GO123_MAX_BATCH + 64], *p = body;
			size_t nev = 0, pick;

			for (size_t off = 0, n; off < h.len; off += n, nev++) {
				uint64_t vals[8];
				size_t nv;

				n = go123_event(h.body, h.len, off, vals, &nv);
				cr_assert(n);
			}
			pick = (size_t)(rng(&s) % nev);
			nev = 0;
			for (size_t off = 0, n; off < h.len; off += n, nev++) {
				uint64_t vals[8];
				size_t nv;

				n = go123_event(h.body, h.len, off, vals, &nv);
				if (nev == pick && kind == 6)
					continue;
				if (nev == pick) {
					size_t a = (size_t)(rng(&s) % nv);

					vals[a] = other_value(vals[a], &s);
				}
				*p++ = h.body[off];
				for (size_t v = 0; v < nv; v++)
					p = gt_varint_put(p, vals[v]);
			}
			go123_put(out, &at, &h, body, (size_t)(p - body));
			continue;
		}
		go123_put(out, &at, &h, h.body, h.len);
	}
	*len = at;
	return out;
}

/* Go 1.23's reader (-d=1) takes path. */
static bool go123_ok(const char *path, char *why, size_t whylen)
{
	struct goparse_result r;

	if (goparse_123(path, &r)) {
		snprintf(why, whylen, "go 1.23 could not run");
		return false;
	}
	if (!r.ok)
		snprintf(why, whylen, "go 1.23 trace -d=1: %s", r.error);
	return r.ok;
}

/* A mutant Go 1.23 takes (it may stop early without an error: at a table entry whose batch
 * ends where a number should start): repair keeps every event Go shows, and dump refuses it
 * only when the file holds more than Go shows. Counts in *over, the reason in note. */
/* Whether lxtrace refuses the file at path for a time past 2^63 ns: Go 1.23 takes such a
 * file, but with its times wrapped (format/go123/reader.c, check_generation), so lxtrace's tools
 * refuse it in one line instead of showing them (docs/format.md §18.1). */
static bool refused_for_time(const char *path)
{
	char *err = NULL;
	bool yes;

	run_capture((const char *[]){ record__build_path("lxtrace"), "dump", path, NULL }, 60,
		    NULL, &err);
	yes = err && strstr(err, "past 2^63 ns");
	free(err);
	return yes;
}

static void go123_over(const char *in, const char *out, size_t len, const struct verdict *v,
		    unsigned *over, char *note, size_t notelen)
{
	struct goparse_result a, b;
	struct stat st;

	if (note[0] || goparse_123(in, &a) || !a.ok || refused_for_time(in))
		return;
	if (v->repair_st)
		snprintf(note, notelen, "repair refused a file Go 1.23 takes");
	else if (goparse_123(out, &b) || b.events < a.events)
		snprintf(note, notelen, "repair kept %zu of the %zu events Go 1.23 shows", b.events,
			 a.events);
	else if (v->dump_st && !stat(out, &st) && (size_t)st.st_size == len)
		snprintf(note, notelen, "dump refused a file Go 1.23 takes whole");
	*over += !!note[0];
}

/* Repair keeps whole generations, and the reader checks each as Go 1.23 does, its structure
 * and its scheduler state (format/go123/reader.h, state.h): dump refuses exactly the mutants Go
 * 1.23 refuses, and repair writes only what it takes, keeping all it shows. */
Test(mutants, go123_repair_writes_only_what_go_1_23_takes, .timeout = 600)
{
	/* Half as many: one parser, but Go 1.23 reads slower than 1.19. */
	unsigned total = mutants_wanted() / 2;
	struct verdict v[GO123_NKINDS] = { 0 }, all = { 0 };
	unsigned over[GO123_NKINDS] = { 0 }, all_over = 0;
	char in[64], out[80], src[96], first[2048] = "", why[256];
	const char *lx = record__build_path("lxtrace");
	struct go123_writer_stats st;
	struct v2batch *b;
	uint8_t *raw;
	size_t rawlen, nb;

	cr_assert_eq(record__tmpfile(in, sizeof(in), ".trace"), 0);
	snprintf(out, sizeof(out), "%s.out", in);
	snprintf(src, sizeof(src), "%s.src", in);
	cr_assert_eq(go123story__write(src, 12, 3000, &st, why, sizeof(why)), 0, "%s", why);
	raw = slurp(src, &rawlen);
	unlink(src);
	nb = go123_decode(raw, rawlen, &b);
	for (unsigned m = 0; m < total; m++) {
		unsigned kind = m % GO123_NKINDS;
		size_t len;
		uint8_t *buf = go123_mutate(raw, rawlen, b, nb, kind, m, &len);
		char note[1536];

		check_mutant(lx, in, out, buf, len, m % 4 == 3, go123_ok, &v[kind], note,
			     sizeof(note));
		go123_over(in, out, len, &v[kind], &over[kind], note, sizeof(note));
		keep_first(in, m, note, first, sizeof(first), go123_kinds[kind]);
		free(buf);
	}
	unlink(in);
	unlink(out);
	for (unsigned k = 0; k < GO123_NKINDS; k++) {
		fprintf(stderr, "go123 mutants, %s: %u refused by Go 1.23; repair %u exit 0 (%u the "
			"parser refuses), %u refused; dump took %u the parser refuses; %u the parser "
			"takes refused\n", go123_kinds[k], v[k].rejected, v[k].repaired, v[k].bad_out,
			v[k].refused, v[k].dump_missed, over[k]);
		all.bad_refusal += v[k].bad_refusal;
		all.bad_out += v[k].bad_out;
		all.dump_missed += v[k].dump_missed;
		all_over += over[k];
	}
	free(b);
	free(raw);
	cr_assert(!all.bad_refusal && !all.bad_out && !all.dump_missed && !all_over && !first[0],
		  "the first: %s", first);
}
