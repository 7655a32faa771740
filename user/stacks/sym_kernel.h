/* sym_kernel.h - kernel text addresses to function names, from a kallsyms file read once.
 *
 * Covers the kernel, its modules and loaded BPF programs (module "bpf"), as /proc/kallsyms
 * lists them. Addresses are only visible with kptr_restrict permitting (root, kptr_restrict
 * <= 1); a file of zero addresses is refused.
 */
#ifndef LXTRACE_USER_SYM_KERNEL_H
#define LXTRACE_USER_SYM_KERNEL_H

#include <stdint.h>

struct sym_kernel;

/* Reads and sorts the text symbols of path (e.g. "/proc/kallsyms"). NULL with errno set:
 * EPERM when every address reads 0 (hidden by kptr_restrict), ENODATA when there is no text
 * symbol, or the error of opening or reading the file. */
struct sym_kernel *sym_kernel__load(const char *path);

/* The function holding addr, or NULL when addr is below the first text symbol or too far
 * past the nearest one to belong to it. *module is the module's name ("bpf" for BPF
 * programs) or NULL for the kernel image. Strings live as long as k. */
const char *sym_kernel__find(const struct sym_kernel *k, uint64_t addr, const char **module);

size_t sym_kernel__count(const struct sym_kernel *k);

/* Accepts NULL. */
void sym_kernel__free(struct sym_kernel *k);

#endif
