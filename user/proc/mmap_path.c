/* mmap_path.c - rebuilds a mapped file's path from the dentry names BPF sent (mmap_path.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "user/proc/mmap_path.h"

int mmap_path__get(const struct lx_mmap *r, char *path, size_t size)
{
	const char *names[LX_PATH_LEN / 2];
	size_t n = 0, off = 0, len = 0;

	if (size)
		path[0] = '\0';
	/* NUL-terminated names, leaf first, ending with the root's "/" or an empty name (the
	 * walk stopped early). */
	while (off < LX_PATH_LEN && r->path[off] && n < sizeof(names) / sizeof(names[0])) {
		size_t l = strnlen(r->path + off, LX_PATH_LEN - off);

		if (off + l >= LX_PATH_LEN)
			return -ENOENT;
		names[n++] = r->path + off;
		off += l + 1;
	}
	if (n < 2 || strcmp(names[n - 1], "/"))
		return -ENOENT;
	for (size_t i = n - 1; i-- > 0;) {
		int w = snprintf(path + len, size - len, "/%s", names[i]);

		if (w < 0 || (size_t)w >= size - len) {
			path[0] = '\0';
			return -ENOENT;
		}
		len += (size_t)w;
	}
	return 0;
}
