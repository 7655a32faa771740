/* vdso.h - the kernel's vDSO as a file, so the unwinder's rows and the symbolizer can read it
 * like any binary. Every process of one kernel maps the same vDSO image, so lxtrace's own copy
 * stands for all of them; the BPF side names it by (dev 0, LX_VDSO_INO) (bpf/unwind.h). */
#ifndef LXTRACE_USER_STACKS_VDSO_H
#define LXTRACE_USER_STACKS_VDSO_H

/* A new read-only fd (a memfd) holding this process's vDSO, or -errno (-ENOENT: none). */
int vdso__open(void);

#endif
