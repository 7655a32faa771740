/* sym_unknowns.h - the symbolizer's frames of addresses nothing names ("[unknown] 0x7f...",
 * "[unknown] NAME+0x..."), in bounded memory.
 *
 * Every distinct unknown address is a frame of its own, and a whole machine brings new ones
 * all the time (short processes' anonymous memory, addresses of processes never seen): kept
 * for the file's life, as named frames are, they grew without end (8.4 MB in 3 minutes of
 * bench/soak.sh). So they are kept in two generations (lib/u64cache.h): a frame is put in
 * the young one, a frame found in the old one moves to the young one, and when the young one
 * holds its frames the old one is forgotten and the young one becomes old. A frame unused for
 * a whole generation is forgotten; met again, it is made again with a new id, which its PC
 * claim (pcclaims.h) then tells apart from the old one: its frames stay right, its PC may
 * move.
 *
 * Ids are handed out from SYM_UNKNOWN_ID up, never twice, apart from the named frames' ids
 * (below 2^32). A frame's strings stay valid until two generations later: whatever was handed
 * out for one stack is still there when the stack is written, as a stack has far fewer frames
 * than a generation.
 */
#ifndef LXTRACE_USER_STACKS_SYM_UNKNOWNS_H
#define LXTRACE_USER_STACKS_SYM_UNKNOWNS_H

#include <stddef.h>
#include <stdint.h>

#define SYM_UNKNOWN_ID (1ull << 32)

struct sym_unknowns;

/* gen_frames (>= 1024): frames a generation holds. NULL with errno set. */
struct sym_unknowns *sym_unknowns__new(size_t gen_frames);

/* The frame named func in file (an interned string, stable for good): its id in *id and its
 * func's copy. NULL on ENOMEM. */
const char *sym_unknowns__get(struct sym_unknowns *u, const char *file, const char *func,
			      uint64_t *id);

/* Frames held now, in both generations. */
size_t sym_unknowns__held(const struct sym_unknowns *u);

/* Accepts NULL. */
void sym_unknowns__free(struct sym_unknowns *u);

#endif
