/* sym_perfmap.h - JIT code names from a perf map file (/tmp/perf-PID.map).
 *
 * JIT runtimes (V8/node --perf-basic-prof, the JVM's perf-map-agent, LuaJIT, .NET with
 * DOTNET_PerfMapEnabled) append "START SIZE NAME" lines, in hex, as they emit code. The file
 * is read again whenever its size or modification time changed since the last read.
 */
#ifndef LXTRACE_USER_SYM_PERFMAP_H
#define LXTRACE_USER_SYM_PERFMAP_H

#include <stdint.h>

struct sym_perfmap;

/* Nothing is read yet; a missing file is not an error. NULL with errno set. */
struct sym_perfmap *sym_perfmap__new(const char *path);

/* The name of the code holding addr, or NULL. When regions overlap (code reused), the line
 * written last wins. Valid until the next call on m. */
const char *sym_perfmap__find(struct sym_perfmap *m, uint64_t addr);

const char *sym_perfmap__path(const struct sym_perfmap *m);

/* Accepts NULL. */
void sym_perfmap__free(struct sym_perfmap *m);

#endif
