/* sym_perfmap.h - JIT code names from a perf map file (/tmp/perf-PID.map).
 *
 * JIT runtimes (V8/node --perf-basic-prof, the JVM's perf-map-agent, LuaJIT, .NET with
 * DOTNET_PerfMapEnabled) append "START SIZE NAME" lines, in hex, as they emit code; OpenJDK 17
 * writes the whole map at its exit (-XX:+DumpPerfMapAtExit) or when asked (jcmd PID
 * Compiler.perfmap), its numbers with 0x. Lines are read as perf reads them (docs/symbolize.md,
 * "JIT code: perf maps").
 *
 * The file is the process's user's, and he decides what is at that path: it is opened through
 * lib/foreign_file.h (no symlink, no mount on it, a regular file of root's or his own with no
 * other hard link: perf's rule, tightened) and read in lines of at most SYM_PERFMAP_MAX_LINE
 * bytes, up to SYM_PERFMAP_MAX_BYTES of it. Only what was appended since the last read is read
 * again; a file that shrank is read anew. Memory: an index of 24 bytes per line (start, size,
 * where the name is in the file); a name is read from the file when a lookup finds it. All
 * the maps of one symbolizer share one budget of index bytes: lines beyond it are not read.
 * A map refused or cut short is named once in the env's log and not read again.
 */
#ifndef LXTRACE_USER_SYM_PERFMAP_H
#define LXTRACE_USER_SYM_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A perf map line's longest name is a C++ or Java signature: a longer line is not a perf map. */
#define SYM_PERFMAP_MAX_LINE 16384
/* What one map is read up to: a busy node process's map reaches 100 MB in hours. */
#define SYM_PERFMAP_MAX_BYTES (512ull << 20)
/* Index bytes that all the maps of a symbolizer may hold together (24 bytes per line). */
#define SYM_PERFMAP_BUDGET (64ull << 20)

struct foreign_log;

/* What the perf maps of one symbolizer share. */
struct sym_perfmap_env {
	int dirfd;			/* the maps' directory (/tmp), or -1: no maps */
	const char *dir;		/* its path, for the names in messages */
	uint64_t budget;		/* index bytes still free for all maps */
	struct foreign_log *refused;	/* where a map refused or cut short is named */
	char name[SYM_PERFMAP_MAX_LINE + 1];	/* the name a lookup found */
};

struct sym_perfmap;

/* The map of process pid, whose files belong to uid (or root). Nothing is read yet; a missing
 * file is not an error. env must outlive the map. NULL with errno set. */
struct sym_perfmap *sym_perfmap__new(struct sym_perfmap_env *env, pid_t pid, uid_t uid);

/* The name of the code holding addr, or NULL. When regions overlap (code reused), the line
 * written last wins. Reads what was appended to the file since the last call. Valid until
 * the next lookup in a map of the same env. */
const char *sym_perfmap__find(struct sym_perfmap *m, uint64_t addr);

/* Whether m was refused or given up: it is not read again. */
bool sym_perfmap__given_up(const struct sym_perfmap *m);

/* Whether m's file was not there at the last lookup. */
bool sym_perfmap__absent(const struct sym_perfmap *m);

/* The file's path, for frames. */
const char *sym_perfmap__path(const struct sym_perfmap *m);

/* Gives its index bytes back to the env's budget. Accepts NULL. */
void sym_perfmap__free(struct sym_perfmap *m);

#endif
