/* usdt_files.h - the files whose annotation probes (include/lxtrace/annotate.h) lxtrace record
 * attaches to: the user's --usdt paths, and those it finds itself for a target, each file once
 * (by device and inode, whatever path named it). A file is found when it carries a
 * .note.stapsdt note of provider "lxtrace": a target command's program, or a program or shared
 * library a target process has mapped executable.
 *
 * Functions return 0 or a negative errno, reported on stderr as one line naming the file or
 * process and the cause.
 */
#ifndef LXTRACE_USER_USDT_FILES_H
#define LXTRACE_USER_USDT_FILES_H

#include <stddef.h>
#include <sys/types.h>

struct usdt_files;

/* An empty set; NULL with errno set. */
struct usdt_files *usdt_files__new(void);

/* Adds path whether or not it has probes (a --usdt path: the attach says when it has none). */
int usdt_files__add(struct usdt_files *s, const char *path);

/* Adds path if it carries lxtrace probes; a file that is not ELF or cannot be read has none. */
int usdt_files__add_annotated(struct usdt_files *s, const char *path);

/* Adds every file process pid has mapped executable that carries lxtrace probes, named so that
 * this process can open it (by its path when that is still the mapped file, else through
 * /proc/PID/map_files). A process that is gone (-ESRCH) is not reported. */
int usdt_files__add_process(struct usdt_files *s, pid_t pid);

/* The files to attach to, in the order added. */
size_t usdt_files__count(const struct usdt_files *s);
const char *usdt_files__path(const struct usdt_files *s, size_t i);

/* Accepts NULL. */
void usdt_files__free(struct usdt_files *s);

#endif
