/* tfile.c - files the tests make (tfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/tfile.h"

int tfile_write(const char *path, const char *text, mode_t mode)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fchmod(fd, mode))
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int tfile_zsection(const char *path, uint64_t size)
{
	static unsigned char in[1 << 20], out[1 << 16];
	unsigned char head[12] = "ZLIB";
	FILE *f = fopen(path, "we");
	z_stream z = { 0 };
	int flush, err = 0;

	if (!f)
		return -errno;
	for (int i = 0; i < 8; i++)
		head[4 + i] = (unsigned char)(size >> (56 - 8 * i));
	if (fwrite(head, 1, sizeof(head), f) != sizeof(head) ||
	    deflateInit(&z, Z_BEST_COMPRESSION) != Z_OK) {
		fclose(f);
		return -EIO;
	}
	for (uint64_t left = size; !err && (left || z.avail_in);) {
		if (!z.avail_in) {
			z.next_in = in;
			z.avail_in = left < sizeof(in) ? (uInt)left : sizeof(in);
			left -= z.avail_in;
		}
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			deflate(&z, flush);
			if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out)
				err = -EIO;
		} while (!err && !z.avail_out);
	}
	deflateEnd(&z);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
