/* cut.c - cut of a Go 1.22+ trace by whole generations, copying bytes (cut.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/v2/cut.h"
#include "format/v2/gens.h"

/* The generations in [first, end) read as a trace of their own, as Go 1.23 will read the cut:
 * its first generation's statuses are all it knows (state.h). 0, or an error with err. */
static int check_run(int fd, uint64_t first, uint64_t end, char *err, size_t errlen)
{
	struct gt2_reader *r;
	int ret;

	if (lseek(fd, (off_t)first, SEEK_SET) != (off_t)first) {
		snprintf(err, errlen, "not a file that can be read again: %s", strerror(errno));
		return -EIO;
	}
	r = gt2_reader__new(&(struct gt2_reader_opts){ .sz = sizeof(struct gt2_reader_opts),
			    .fd = fd, .limit = end, .header_read = true, .start = first });
	if (!r) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -errno;
	}
	while ((ret = gt2_reader__next_generation(r)) == 1)
		;
	if (ret < 0)
		snprintf(err, errlen, "the window's generations are no trace of their own: %s",
			 gt2_reader__error(r));
	gt2_reader__free(r);
	return ret;
}

int gt2_cut(int fd, int out_fd, uint64_t from_ns, uint64_t to_ns, struct gt2_cut_report *rep,
	    char *err, size_t errlen)
{
	struct gt2_reader *r = gt2_gens__reader(fd, err, errlen);
	uint64_t first = 0, end = 0;
	int64_t t0 = 0, lo, hi;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (!r)
		return -EIO;
	while ((ret = gt2_reader__next_generation(r)) == 1) {
		gt2_reader__gen_span(r, &lo, &hi);
		if (gt2_reader__generations(r) == 1)
			t0 = lo;
		/* In unsigned arithmetic: a hostile file's times may be anything. */
		if ((uint64_t)lo - (uint64_t)t0 >= to_ns)
			break;
		if ((uint64_t)hi - (uint64_t)t0 < from_ns)
			continue;
		if (!rep->generations++) {
			first = gt2_reader__gen_start(r);
			rep->first_gen = gt2_reader__generation(r);
			rep->from_ns = (uint64_t)lo - (uint64_t)t0;
		}
		end = gt2_reader__gen_end(r);
		rep->to_ns = (uint64_t)hi - (uint64_t)t0;
		rep->events += gt2_reader__gen_events(r);
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", gt2_reader__error(r));
		gt2_reader__free(r);
		return ret;
	}
	gt2_reader__free(r);
	if (!rep->generations) {
		snprintf(err, errlen, "no generation holds an event in the window");
		return -ENODATA;
	}
	if ((ret = check_run(fd, first, end, err, errlen)))
		return ret;
	rep->bytes = GT2_HEADER_LEN + end - first;
	if ((ret = gt2_gens__copy(fd, out_fd, 0, GT2_HEADER_LEN, err, errlen)))
		return ret;
	return gt2_gens__copy(fd, out_fd, first, end, err, errlen);
}
