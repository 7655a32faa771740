/* sudo_user.c - the invoking user of a sudo run (sudo_user.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/sudo_user.h"

int sudo_user__ids(uid_t *uid, gid_t *gid, char *why, size_t whylen)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long u, g;
	char *end_u = NULL, *end_g = NULL;

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (!su)
		return 0;
	errno = 0;
	u = strtoul(su, &end_u, 10);
	g = sg ? strtoul(sg, &end_g, 10) : 0;
	if (errno || end_u == su || *end_u || u >= (uid_t)-1 ||
	    (sg && (end_g == sg || *end_g || g >= (gid_t)-1))) {
		snprintf(why, whylen, "SUDO_UID=%s SUDO_GID=%s: not a user and group id", su,
			 sg ? sg : "");
		return -EINVAL;
	}
	*uid = (uid_t)u;
	*gid = sg ? (gid_t)g : (gid_t)-1;
	return 0;
}
