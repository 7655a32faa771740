/* gens.c - whole generations as bytes, for repair and cut (gens.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/go123/gens.h"

int go123_gens__copy(int in, int out, uint64_t from, uint64_t to, char *err, size_t errlen)
{
	char buf[64 << 10];

	while (from < to) {
		size_t want = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n = pread(in, buf, want, (off_t)from), w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "reading: %s", n ? strerror(errno) : "file shrank");
			return n ? -errno : -EIO;
		}
		for (ssize_t done = 0; done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0) {
				snprintf(err, errlen, "writing: %s", strerror(errno));
				return -errno;
			}
		}
		from += (uint64_t)n;
	}
	return 0;
}

struct go123_reader *go123_gens__reader(int fd, char *err, size_t errlen)
{
	struct go123_reader *r;

	if (lseek(fd, 0, SEEK_SET)) {
		snprintf(err, errlen, "not a file that can be read again: %s", strerror(errno));
		return NULL;
	}
	r = go123_reader__new(&(struct go123_reader_opts){ .sz = sizeof(struct go123_reader_opts),
			    .fd = fd });
	if (!r)
		snprintf(err, errlen, "%s", strerror(errno));
	return r;
}
