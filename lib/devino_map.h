/* devino_map.h - a map from a file's identity, its device and inode, to a uint64_t value, that
 * no two files can share an entry of. Keyed on a 64-bit hash of both, every entry checked
 * against the pair it holds and the next salt tried on a collision, so that a file whose
 * inode another user chooses (a FUSE mount's) cannot take the entry of libc's. */
#ifndef LXTRACE_LIB_DEVINO_MAP_H
#define LXTRACE_LIB_DEVINO_MAP_H

#include <stdbool.h>
#include <stdint.h>

struct devino_map;

/* NULL with errno set. */
struct devino_map *devino_map__new(void);
/* Pointer to the value of (dev, ino), or NULL. Valid until the next put. */
uint64_t *devino_map__get(const struct devino_map *m, uint64_t dev, uint64_t ino);
/* Pointer to the value of (dev, ino), inserted as 0 when absent (*added tells which); NULL with
 * errno = ENOMEM. Valid until the next put. */
uint64_t *devino_map__put(struct devino_map *m, uint64_t dev, uint64_t ino, bool *added);
void devino_map__del(struct devino_map *m, uint64_t dev, uint64_t ino);
/* Accepts NULL. */
void devino_map__free(struct devino_map *m);

#endif
