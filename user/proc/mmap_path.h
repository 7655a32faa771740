/* mmap_path.h - the path of the file an LX_REC_MMAP record names. The BPF side sends the
 * names of the file's dentries leaf first, each NUL-terminated, up to the file system's root
 * ("/") when the walk got there; this puts them in order. The path is relative to the root of
 * the file's mount, so it is only a hint: whoever opens it checks the device and inode. */
#ifndef LXTRACE_USER_PROC_MMAP_PATH_H
#define LXTRACE_USER_PROC_MMAP_PATH_H

#include <stddef.h>

#include "bpf/lxtrace.h"

/* Writes "/dir/.../name" into path (size bytes): 0, or -ENOENT when the record has no complete
 * path (no file, a walk cut short, a path longer than size); path is then "". */
int mmap_path__get(const struct lx_mmap *r, char *path, size_t size);

#endif
