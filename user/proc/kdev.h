/* kdev.h - a device number as the kernel writes it into records (s_dev: major << 20 | minor,
 * the BPF side's lx_map.dev, lx_mmap.dev, lx_cfi_want.dev) and as user space has it (st_dev,
 * makedev's encoding), one way and the other. */
#ifndef LXTRACE_USER_PROC_KDEV_H
#define LXTRACE_USER_PROC_KDEV_H

#include <stdint.h>
#include <sys/sysmacros.h>

static inline uint64_t kdev__to_dev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

static inline uint32_t kdev__from_dev(uint64_t dev)
{
	return major(dev) << 20 | minor(dev);
}

#endif
