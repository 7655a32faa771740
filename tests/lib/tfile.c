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

/* Writes zlib's stream of size zero bytes to f; windowBits as deflateInit2's (15: zlib's
 * format, 31: gzip's). */
static int deflate_zeros(FILE *f, uint64_t size, int window_bits)
{
	static unsigned char in[1 << 20], out[1 << 16];
	z_stream z = { 0 };
	int flush, err = 0;

	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -EIO;
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
	return err;
}

int tfile_zsection(const char *path, uint64_t size)
{
	unsigned char head[12] = "ZLIB";
	FILE *f = fopen(path, "we");
	int err;

	if (!f)
		return -errno;
	for (int i = 0; i < 8; i++)
		head[4 + i] = (unsigned char)(size >> (56 - 8 * i));
	err = fwrite(head, 1, sizeof(head), f) == sizeof(head) ? deflate_zeros(f, size, 15) : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int tfile_gzip_zeros(const char *path, uint64_t size)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f)
		return -errno;
	err = deflate_zeros(f, size, 31);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int tfile_costly_cfi(const char *path, int rows)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fprintf(f, ".text\n.globl main\n.type main,@function\nmain:\n.cfi_startproc\n");
	for (int i = 0; i < rows; i++)
		fprintf(f, "nop\n.cfi_adjust_cfa_offset %d\n", i % 2 ? -8 : 8);
	fprintf(f, "jmp main\n.cfi_endproc\n.size main,.-main\n"
		   ".section .note.GNU-stack,\"\",@progbits\n");
	return fclose(f) ? -errno : 0;
}
