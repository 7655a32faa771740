/* go123text.h - what tests read from Go 1.23's -d=1 text of a go1.23 file (goparse.h's
 * goparse_123_text). */
#ifndef LXTRACE_TESTS_LIB_GO123TEXT_H
#define LXTRACE_TESTS_LIB_GO123TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Syscalls of thread tid (its goroutines: the low 32 bits of their ids) whose entry's stack
 * names func: how many, and in *sum their summed length in the file's ticks, each from the
 * goroutine's Running->Syscall to its next Syscall-> transition. One still open at the end is
 * not counted. */
size_t go123text_syscalls(const char *text, uint32_t tid, const char *func, long long *sum);

#endif
