/* test_thread_db.c - glibc's struct pthread as its libthread_db descriptors describe it,
 * read from the libc this test maps, against glibc itself: the tid they place is gettid()'s,
 * and a pthread key's value found at the offsets they give, from the thread pointer, is the one
 * pthread_getspecific returns, for keys in the first block (inside struct pthread) and past
 * it, in this thread and in another. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "user/stacks/thread_db.h"

/* More keys than a block holds (32 in glibc): one of them in a block of its own. */
#define NKEYS 40

static struct thread_db db;
static pthread_key_t keys[NKEYS];

/* The value of key k of the calling thread, found as BPF finds it: at the thread pointer
 * (pthread_self() in glibc on x86_64), the pointer to k's block, then k's value there. *ok false
 * when db does not describe k. */
static void *value_by_offsets(pthread_key_t k, bool *ok)
{
	uint32_t block, value;
	const char *tp = (const char *)pthread_self(), *b;

	if (!thread_db__key(&db, (uint32_t)k, &block, &value)) {
		*ok = false;
		return NULL;
	}
	memcpy(&b, tp + block, sizeof(b));
	return b ? *(void *const *)(b + value) : NULL;
}

static void setup(void)
{
	cr_assert(thread_db__read("/proc", getpid(), &db), "no descriptors in the libc mapped");
	cr_assert(db.has_keys, "glibc's descriptors of pthread keys were not read");
	for (int i = 0; i < NKEYS; i++)
		cr_assert_eq(pthread_key_create(&keys[i], NULL), 0);
}

static void teardown(void)
{
	for (int i = 0; i < NKEYS; i++)
		pthread_key_delete(keys[i]);
}

TestSuite(thread_db, .init = setup, .fini = teardown);

/* In the calling thread: each key's value found by the offsets, unset, then set; how many
 * differ from glibc's own (asserts only in the test's thread: this runs in others too). */
static void *mismatches(void *arg)
{
	static char marks[NKEYS];
	uintptr_t bad = 0;
	bool ok = true;

	(void)arg;
	for (int i = 0; i < NKEYS; i++) {
		bad += value_by_offsets(keys[i], &ok) != NULL;
		bad += pthread_setspecific(keys[i], &marks[i]) != 0;
	}
	for (int i = 0; i < NKEYS; i++)
		bad += value_by_offsets(keys[i], &ok) != pthread_getspecific(keys[i]);
	return (void *)(bad + !ok);
}

Test(thread_db, the_tid_is_where_the_descriptor_says)
{
	pid_t tid;

	cr_assert(db.has_tid);
	memcpy(&tid, (const char *)pthread_self() + db.tid, sizeof(tid));
	cr_assert_eq(tid, gettid());
}

Test(thread_db, key_values_are_where_the_descriptors_say)
{
	cr_assert_geq(keys[NKEYS - 1], db.block_keys, "no key past the first block");
	cr_assert_eq(mismatches(NULL), NULL, "keys whose value the offsets do not find");
}

Test(thread_db, key_values_of_another_thread_are_where_the_descriptors_say)
{
	void *bad = (void *)1;
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, mismatches, NULL), 0);
	cr_assert_eq(pthread_join(t, &bad), 0);
	cr_assert_eq(bad, NULL, "keys whose value the offsets do not find in another thread");
}

Test(thread_db, a_key_past_what_glibc_describes_is_refused)
{
	uint32_t block, value;

	cr_assert_not(thread_db__key(&db, db.blocks * db.block_keys, &block, &value));
}
