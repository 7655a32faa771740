/* procmaps.c - parses the lines of /proc/PID/maps. */
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "user/proc/procmaps.h"

bool procmaps__parse_exec(char *line, struct procmaps_entry *e)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int major, minor;
	char perms[8], *del;
	int off = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &major,
		   &minor, &ino, &off) < 7 || !off || perms[2] != 'x')
		return false;
	*e = (struct procmaps_entry){ start, end, pgoff, makedev(major, minor), ino, line + off,
				      false };
	line[off + strcspn(line + off, "\n")] = '\0';
	del = strstr(line + off, " (deleted)");
	if (del && !del[10]) {
		*del = '\0';
		e->deleted = true;
	}
	return true;
}
