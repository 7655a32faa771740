/* procmaps.h - one line of /proc/PID/maps, parsed: what the symbolizer and the annotation
 * auto-attach both read to learn which files a process runs code from. */
#ifndef LXTRACE_USER_PROCMAPS_H
#define LXTRACE_USER_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>

struct procmaps_entry {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;	/* the file's (makedev(major, minor), inode); ino 0: not a file */
	const char *name;	/* the path as the process sees it, "[vdso]", or "" (anonymous) */
	bool deleted;		/* the file was unlinked or replaced since it was mapped */
};

/* Parses line (a line of /proc/PID/maps, modified in place: e->name points into it, its newline
 * and " (deleted)" cut off). True when it is an executable mapping. */
bool procmaps__parse_exec(char *line, struct procmaps_entry *e);

#endif
