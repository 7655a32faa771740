/* cut.c - cut of a go1.23 trace by whole generations, copying bytes (cut.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/go123/cut.h"
#include "format/go123/gens.h"

/* The generations in [first, end) read as a trace of their own, as Go 1.23 will read the cut:
 * its first generation's statuses are all it knows (state.h). 0, or an error with err. */
static int check_run(int fd, uint64_t first, uint64_t end, char *err, size_t errlen)
{
	struct go123_reader *r;
	int ret;

	if (lseek(fd, (off_t)first, SEEK_SET) != (off_t)first) {
		snprintf(err, errlen, "not a file that can be read again: %s", strerror(errno));
		return -EIO;
	}
	r = go123_reader__new(&(struct go123_reader_opts){ .sz = sizeof(struct go123_reader_opts),
			    .fd = fd, .limit = end, .header_read = true, .start = first });
	if (!r) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -errno;
	}
	while ((ret = go123_reader__next_generation(r)) == 1)
		;
	if (ret < 0)
		snprintf(err, errlen, "the window's generations are no trace of their own: %s",
			 go123_reader__error(r));
	go123_reader__free(r);
	return ret;
}

int go123_cut(int fd, int out_fd, uint64_t from_ns, uint64_t to_ns, struct go123_cut_report *rep,
	    char *err, size_t errlen)
{
	struct go123_reader *r = go123_gens__reader(fd, err, errlen);
	uint64_t first = 0, end = 0;
	int64_t t0 = 0, lo, hi;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (!r)
		return -EIO;
	while ((ret = go123_reader__next_generation(r)) == 1) {
		go123_reader__gen_span(r, &lo, &hi);
		if (go123_reader__generations(r) == 1)
			t0 = lo;
		/* In unsigned arithmetic: a hostile file's times may be anything. */
		if ((uint64_t)lo - (uint64_t)t0 >= to_ns)
			break;
		if ((uint64_t)hi - (uint64_t)t0 < from_ns)
			continue;
		if (!rep->generations++) {
			first = go123_reader__gen_start(r);
			rep->first_gen = go123_reader__generation(r);
			rep->from_ns = (uint64_t)lo - (uint64_t)t0;
		}
		end = go123_reader__gen_end(r);
		rep->to_ns = (uint64_t)hi - (uint64_t)t0;
		rep->events += go123_reader__gen_events(r);
	}
	if (ret < 0) {
		snprintf(err, errlen, "%s", go123_reader__error(r));
		go123_reader__free(r);
		return ret;
	}
	go123_reader__free(r);
	if (!rep->generations) {
		snprintf(err, errlen, "no generation holds an event in the window");
		return -ENODATA;
	}
	if ((ret = check_run(fd, first, end, err, errlen)))
		return ret;
	rep->bytes = GO123_HEADER_LEN + end - first;
	if ((ret = go123_gens__copy(fd, out_fd, 0, GO123_HEADER_LEN, err, errlen)))
		return ret;
	return go123_gens__copy(fd, out_fd, first, end, err, errlen);
}
