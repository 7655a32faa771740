/* repair.c - repair of a Go 1.22+ trace by whole generations, copying bytes (repair.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/v2/gens.h"
#include "format/v2/repair.h"

int gt2_repair(int fd, int out_fd, struct gt2_repair_report *rep, char *err, size_t errlen)
{
	struct gt2_reader *r = gt2_gens__reader(fd, err, errlen);
	struct stat st;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (!r)
		return -EIO;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s", strerror(errno));
		gt2_reader__free(r);
		return -EIO;
	}
	rep->size = (uint64_t)st.st_size;
	while ((ret = gt2_reader__next_generation(r)) == 1) {
		rep->kept = gt2_reader__gen_end(r);
		rep->generations++;
		rep->events += gt2_reader__gen_events(r);
	}
	if (ret < 0)
		snprintf(rep->why, sizeof(rep->why), "%s", gt2_reader__error(r));
	gt2_reader__free(r);
	if (ret < 0 && ret != -EINVAL && ret != -EFBIG) {
		snprintf(err, errlen, "%s", rep->why);
		return ret;
	}
	if (!rep->generations) {
		snprintf(err, errlen, "no whole generation to keep: %s", rep->why);
		return -ENODATA;
	}
	if (out_fd >= 0)
		return gt2_gens__copy(fd, out_fd, 0, rep->kept, err, errlen);
	if (rep->kept < rep->size && ftruncate(fd, (off_t)rep->kept)) {
		snprintf(err, errlen, "cutting the file to %llu bytes: %s",
			 (unsigned long long)rep->kept, strerror(errno));
		return -errno;
	}
	return 0;
}
