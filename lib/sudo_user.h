/* sudo_user.h - the invoking user of a sudo run, read from SUDO_UID and SUDO_GID in one way for
 * everything lxtrace does on that user's behalf: the files it writes go to that user, and a
 * command it runs runs as that user. */
#ifndef LXTRACE_LIB_SUDO_USER_H
#define LXTRACE_LIB_SUDO_USER_H

#include <stddef.h>
#include <sys/types.h>

/* The ids; (uid_t)-1 and (gid_t)-1 without sudo (gid alone: no SUDO_GID). A SUDO_UID or
 * SUDO_GID that is no id is an error, said in why: nothing may go to a guess. 0 or -EINVAL. */
int sudo_user__ids(uid_t *uid, gid_t *gid, char *why, size_t whylen);

#endif
