/* repair.c - repair of a go1.23 trace by whole generations, copying bytes (repair.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/go123/gens.h"
#include "format/go123/repair.h"

int go123_repair(int fd, int out_fd, struct go123_repair_report *rep, char *err, size_t errlen)
{
	struct go123_reader *r = go123_gens__reader(fd, err, errlen);
	struct stat st;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (!r)
		return -EIO;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s", strerror(errno));
		go123_reader__free(r);
		return -EIO;
	}
	rep->size = (uint64_t)st.st_size;
	while ((ret = go123_reader__next_generation(r)) == 1) {
		rep->kept = go123_reader__gen_end(r);
		rep->generations++;
		rep->events += go123_reader__gen_events(r);
	}
	if (ret < 0)
		snprintf(rep->why, sizeof(rep->why), "%s", go123_reader__error(r));
	go123_reader__free(r);
	if (ret < 0 && ret != -EINVAL && ret != -EFBIG) {
		snprintf(err, errlen, "%s", rep->why);
		return ret;
	}
	if (!rep->generations) {
		snprintf(err, errlen, "no whole generation to keep: %s", rep->why);
		return -ENODATA;
	}
	if (out_fd >= 0)
		return go123_gens__copy(fd, out_fd, 0, rep->kept, err, errlen);
	if (rep->kept < rep->size && ftruncate(fd, (off_t)rep->kept)) {
		snprintf(err, errlen, "cutting the file to %llu bytes: %s",
			 (unsigned long long)rep->kept, strerror(errno));
		return -errno;
	}
	return 0;
}
