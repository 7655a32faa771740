/* sym_elf.h - one ELF binary's function names, source lines and inlined calls, via libdwfl.
 *
 * The binary is reported to its own Dwfl at load bias 0, so it is looked up by its ELF
 * virtual addresses whatever process maps it where: one sym_elf serves every process that
 * maps the file. Separate debug files are found by build id or .gnu_debuglink under the
 * debuginfo path, root's SYM_ELF_DEBUG_ROOT by default, never beside the binary (libdwfl's
 * default also looks there, in directories the binary's owner controls). DWARF is read on the
 * first lookup, not on open.
 */
#ifndef LXTRACE_USER_SYM_ELF_H
#define LXTRACE_USER_SYM_ELF_H

#include <stdbool.h>
#include <stdint.h>

/* Where separate debug files are looked for unless the caller names other places. */
#define SYM_ELF_DEBUG_ROOT "/usr/lib/debug"

struct sym_elf;

/* One frame: func is demangled; file is NULL and line 0 without DWARF line information. */
struct sym_elf_frame {
	const char *func;
	const char *file;
	uint64_t line;
};

/* The memory libdw and sym_elf may take per byte of a file's own DWARF: a CU's line table is
 * parsed whole on the CU's first lookup, and one of one-byte rows took 104 bytes a byte. */
#define SYM_ELF_DWARF_COST 128

/* Takes ownership of fd (closed by sym_elf__free, or on failure). path names the file for
 * messages and .gnu_debuglink; the bytes come from fd. debuginfo_path: libdwfl's syntax
 * (directories separated by ':'), NULL for SYM_ELF_DEBUG_ROOT. budget: NULL for a trusted
 * file; else the memory that reading the file may still take, what it takes is taken from it:
 * a file whose compressed sections would inflate to more (libelf holds them once read) is
 * refused (ENOBUFS); one whose own DWARF would cost more (SYM_ELF_DWARF_COST a byte) keeps its
 * symbols but not its DWARF (sym_elf__dwarf_refused). Separate debug files come from the
 * debug path only, and are not charged. NULL with errno set (EINVAL: not an ELF file libdwfl
 * accepts). */
struct sym_elf *sym_elf__open(int fd, const char *path, const char *debuginfo_path,
			      uint64_t *budget);

/* Whether e's own DWARF was left unread for the budget of sym_elf__open. */
bool sym_elf__dwarf_refused(const struct sym_elf *e);

/* A PT_LOAD segment: file offsets [off, off + size) are loaded at ELF virtual address vaddr. */
struct sym_elf_load {
	uint64_t off, size, vaddr;
};

/* e's PT_LOAD segments, up to max of them, in out; returns how many e has (more than max:
 * the rest were left out), or -ENOENT. */
int sym_elf__loads(struct sym_elf *e, struct sym_elf_load *out, int max);

/* Expands vaddr into frames, innermost first: each inlined call its own frame with the
 * callee's location, the caller's frame at the call site, the function that holds the
 * code last. Returns the number written (0: no symbol covers vaddr) or -errno. Strings stay
 * valid until the next call on e. */
int sym_elf__frames(struct sym_elf *e, uint64_t vaddr, struct sym_elf_frame *out, int max);

/* Reads now what the first lookup would read: the symbol table, and the DWARF (whose sections
 * a separate debug file usually keeps compressed: 85 ms to inflate libc's 4 MiB one) when the
 * file holding it is no larger than max_bytes; a larger one is read on first use as before.
 * Whether DWARF was read. */
bool sym_elf__prepare(struct sym_elf *e, uint64_t max_bytes);

/* Gives back the pages of e's files that reading them touched (symbol tables, DWARF), which
 * count in the recorder's RSS while mapped: what libdw parsed from them is kept, and a later
 * lookup that reads the file again faults its pages back in. */
void sym_elf__page_out(struct sym_elf *e);

/* mangled demangled when it is a C++ or Rust (legacy) symbol, else NULL. The result is
 * malloc'd, the caller frees it. */
char *sym_elf__demangle(const char *mangled);

/* What e holds in memory, as counted from what lookups made it read: the sorted symbols; the
 * DWARF file's sections libelf inflated; per CU looked up, its line table (libdw parses a
 * CU's whole table on its first lookup: most of what a binary costs) and its function table.
 * An estimate (libdw's own blocks are not measured), for a budget of open binaries; it grows
 * only when a lookup meets a new CU (or the first symbol), and sym_elf__free gives it back. */
uint64_t sym_elf__bytes(const struct sym_elf *e);

/* Accepts NULL. */
void sym_elf__free(struct sym_elf *e);

#endif
