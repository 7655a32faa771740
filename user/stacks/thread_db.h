/* thread_db.h - where glibc keeps what lxtrace reads of a thread in its struct pthread (the
 * thread's pthread_t, at its thread pointer on x86_64): its kernel tid, and the values of its
 * pthread keys. From the descriptors glibc publishes for debuggers (libthread_db's
 * _thread_db_* symbols: in libc.so.6 since 2.34, libpthread.so.0 before), read from the file a
 * process maps. docs/stacks.md, "Python frames".
 */
#ifndef LXTRACE_USER_STACKS_THREAD_DB_H
#define LXTRACE_USER_STACKS_THREAD_DB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct thread_db {
	bool has_tid;
	uint32_t tid;		/* offset of the kernel tid (a pid_t) */
	bool has_keys;
	/* A key's value: specific[key / block_keys] points to the block of values the key is
	 * in, where value key % block_keys is a struct pthread_key_data, its data at
	 * value_data. */
	uint32_t specific;	/* offset of specific[] */
	uint32_t blocks;	/* its pointers */
	uint32_t block_keys;	/* values in a block */
	uint32_t block_data;	/* offset of the values in a block */
	uint32_t value_size;	/* sizeof(struct pthread_key_data) */
	uint32_t value_data;	/* offset of its data */
};

/* The descriptors of the glibc process pid (under proc_root) maps into *out; false when it
 * maps none (musl, a static binary), or none with a tid's descriptor lxtrace can use. */
bool thread_db__read(const char *proc_root, pid_t pid, struct thread_db *out);

/* Where the value of pthread key key is: *block, the offset from the thread pointer of the
 * pointer to its block; *value, its data's offset in that block. False when db describes no
 * keys, or not that one. */
bool thread_db__key(const struct thread_db *db, uint32_t key, uint32_t *block, uint32_t *value);

#endif
