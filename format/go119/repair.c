/* repair.c - `lxtrace repair`: whole batches kept, what they leave open closed (repair.h).
 *
 * Streaming passes: the first replays the whole file into the state tracker; when it meets
 * a bad record or an event the parsers would refuse, the whole batches before the batch
 * holding it are replayed again alone (the first replay already applied part of the bad
 * batch), until a pass finds nothing (a cut can leave a stack named and no longer defined:
 * that needs another). What is appended is written by an appending gt_writer, with string
 * and stack ids above the file's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go119/close.h"
#include "format/go119/repair.h"

#define COPY_CHUNK (1 << 20)
/* Passes before giving up on finding a prefix both parsers take. */
#define MAX_PASSES 8

/* Replays fd from its start, up to limit bytes (0: all), into a new state, stopping at the
 * first event the state does not allow. 0 for a whole trace; -EINVAL at a bad record;
 * -EPROTO at such an event, *cut then the offset of its batch; else a system error. *rp and
 * *sp are set whatever it returns (NULL on ENOMEM). */
static int replay(int fd, uint64_t limit, struct gt_reader **rp, struct gt_state **sp,
		  uint64_t *cut)
{
	struct gt_event e;
	int ret;

	*rp = NULL;
	*sp = gt_state__new();
	if (lseek(fd, 0, SEEK_SET))
		return -errno;
	*rp = gt_reader__new(&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts),
						      .fd = fd, .limit = limit });
	if (!*rp || !*sp)
		return -ENOMEM;
	while ((ret = gt_reader__next(*rp, &e)) == 1) {
		ret = gt_state__event(*sp, &e);
		if (ret == -EPROTO)
			*cut = gt_reader__batch_offset(*rp);
		if (ret)
			return ret;
	}
	return ret;
}

/* Where the whole batches end before the bad record the reader stopped at: the start of the
 * batch holding it, or the bad record itself when it is a batch header. */
static uint64_t whole_end(int fd, const struct gt_reader *r)
{
	uint64_t bad = gt_reader__record_offset(r);
	uint8_t b;

	if (pread(fd, &b, 1, (off_t)bad) == 1 && b == gt_header_byte(GT_EV_BATCH))
		return bad;
	return gt_reader__batch_offset(r);
}

static int copy_prefix(int in, int out, uint64_t len)
{
	uint8_t *buf = malloc(COPY_CHUNK);
	uint64_t done = 0;
	int err = buf ? 0 : -ENOMEM;

	while (!err && done < len) {
		size_t want = len - done < COPY_CHUNK ? (size_t)(len - done) : COPY_CHUNK;
		ssize_t n = pread(in, buf, want, (off_t)done), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : -EIO;
			break;
		}
		while (!err && w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0 && errno != EINTR)
				err = -errno;
			else if (k > 0)
				w += k;
		}
		done += (uint64_t)n;
	}
	free(buf);
	return err;
}

static void count(struct gt_repair_report *rep, const struct gt_open *o)
{
	for (size_t i = 0; i < o->nprocs; i++) {
		rep->goroutines += !!o->procs[i].g;
		rep->procs += o->procs[i].started;
		rep->phases += o->procs[i].sweep;
	}
	rep->phases += o->gc + o->stw;
}

/* Appends what closes o to ofd (positioned at the end of the kept bytes). */
static int append_close(int ofd, const struct gt_open *o, const struct gt_state *s,
			const struct gt_dict *d, struct gt_repair_report *rep)
{
	struct gt_state_stats st;
	struct gt_writer_stats ws;
	struct gt_close_note note;
	struct gt_writer *w;
	char msg[512];
	uint32_t np;
	int err;

	gt_state__stats(s, &st);
	np = st.max_p >= 0 ? (uint32_t)st.max_p : 0;
	if (st.max_p >= (1 << 24))
		return -ERANGE;
	/* Its goroutine and stack take ids above the file's: none may be left. */
	if (st.max_goid == UINT64_MAX || gt_dict__max_stack_id(d) >= UINT32_MAX)
		return -EOVERFLOW;
	snprintf(msg, sizeof(msg), "lxtrace repair: kept %llu of %llu bytes%s%s%s; stopped %llu "
		 "running goroutines and %llu Ps, ended %llu GC phases",
		 (unsigned long long)rep->kept, (unsigned long long)rep->size,
		 rep->why[0] ? " (dropped the rest: " : "", rep->why, rep->why[0] ? ")" : "",
		 (unsigned long long)rep->goroutines, (unsigned long long)rep->procs,
		 (unsigned long long)rep->phases);
	note = (struct gt_close_note){ st.max_goid + 1, np, "lxtrace repair", "lxtrace.repair",
				       msg };
	w = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts),
		.fd = ofd, .nprocs = np + 1, .append = true,
		.string_base = gt_dict__max_string_id(d), .stack_base = gt_dict__max_stack_id(d) });
	if (!w)
		return -errno;
	err = gt_close__write(w, o, &note);
	gt_writer__stats(w, &ws);
	rep->appended = ws.bytes;
	gt_writer__free(w);
	return err;
}

int gt_repair(int fd, int out_fd, struct gt_repair_report *rep, char *err, size_t errlen)
{
	struct gt_reader *r = NULL;
	struct gt_state *s = NULL;
	struct gt_open o = { 0 };
	struct gt_state_stats st;
	struct stat sb;
	int ret, ofd = out_fd >= 0 ? out_fd : fd;

	memset(rep, 0, sizeof(*rep));
	err[0] = '\0';
	if (fstat(fd, &sb)) {
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		return -EINVAL;
	}
	rep->size = (uint64_t)sb.st_size;
	/* Replay; at a bad record or event, again up to the whole batches before it. The first
	 * reason is the one reported: the later ones come from the cut. */
	rep->kept = rep->size;
	for (unsigned pass = 0;; pass++) {
		uint64_t cut = 0;

		ret = replay(fd, pass ? rep->kept : 0, &r, &s, &cut);
		if (ret != -EINVAL && ret != -EPROTO)
			break;
		if (!rep->why[0])
			snprintf(rep->why, sizeof(rep->why), "%s", ret == -EPROTO ?
				 gt_state__problem(s) : gt_reader__error(r));
		rep->kept = ret == -EPROTO ? cut : whole_end(fd, r);
		if (rep->kept <= GT_HEADER_LEN || pass + 1 == MAX_PASSES) {
			snprintf(err, errlen, "nothing to repair: %s", ret == -EPROTO ?
				 gt_state__problem(s) : gt_reader__error(r));
			ret = -ENODATA;
			goto out;
		}
		gt_reader__free(r);
		gt_state__free(s);
	}
	if (ret) {
		snprintf(err, errlen, "%s", r && *gt_reader__error(r) ? gt_reader__error(r) :
			 strerror(-ret));
		goto out;
	}
	gt_state__stats(s, &st);
	rep->events = st.events;
	ret = gt_close__plan(s, st.last_ts, &o);
	if (ret) {
		snprintf(err, errlen, "%s",
			 ret == -ERANGE ? "a P id out of range" : strerror(-ret));
		goto out;
	}
	count(rep, &o);

	/* Write: the kept bytes, then the closing batches; nothing when all is whole and closed. */
	if (out_fd >= 0)
		ret = copy_prefix(fd, out_fd, rep->kept);
	else if (rep->kept < rep->size && ftruncate(fd, (off_t)rep->kept))
		ret = -errno;
	if (!ret && lseek(ofd, 0, SEEK_END) < 0)
		ret = -errno;
	if (!ret && (rep->kept < rep->size || gt_close__needed(&o)))
		ret = append_close(ofd, &o, s, gt_reader__dict(r), rep);
	if (ret == -EOVERFLOW)
		snprintf(err, errlen, "the file's goroutine or stack ids leave none above them for "
			 "the repair's own (Go 1.23 reads stack ids as 32 bits)");
	else if (ret)
		snprintf(err, errlen, "writing: %s", strerror(-ret));
out:
	gt_close__release(&o);
	gt_reader__free(r);
	gt_state__free(s);
	return ret;
}
