/* test_maps_proc.c - the answers for a kernel without the VMA iterator (user/capture/maps_proc.h)
 * from a fake /proc: an exec's mappings become LX_REC_MMAP records as the BPF side would send
 * them (the path leaf first, the device in the kernel's encoding, the offset in bytes, the vDSO
 * by its inode), a process gone is counted and reported nothing of. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/unwind.h"
#include "tests/lib/tfile.h"
#include "user/capture/maps_proc.h"
#include "user/proc/mmap_path.h"

#define PID 4242
#define MAX_RECS 16

static char root[64];
static struct lx_mmap recs[MAX_RECS];
static size_t nrecs;

static int collect(void *ctx, uint32_t cpu, const void *rec, size_t size)
{
	cr_assert_eq(size, sizeof(struct lx_mmap));
	cr_assert_eq(cpu, 1, "a record on CPU %u, not its ask's", cpu);
	cr_assert_lt(nrecs, MAX_RECS);
	memcpy(&recs[nrecs++], rec, size);
	return 0;
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/lxtrace-proc-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	nrecs = 0;
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (root[0] && system(cmd))
		fprintf(stderr, "test_maps_proc: cannot remove %s\n", root);
}

TestSuite(maps_proc, .init = setup, .fini = teardown, .timeout = 20);

static struct maps_proc *start(void)
{
	struct maps_proc *mp = maps_proc__new(&(struct maps_proc_opts){
		.sz = sizeof(struct maps_proc_opts), .proc_root = root, .ring_fd = -1,
		.tables_fd = -1, .emit = collect });

	cr_assert_not_null(mp);
	return mp;
}

/* Flushes until the thread has answered the asks made (or 5 s have passed). */
static void wait_answers(struct maps_proc *mp, uint64_t asked)
{
	struct maps_proc_stats st;

	for (int i = 0; i < 500; i++) {
		maps_proc__stats(mp, &st);
		if (st.answered + st.gone >= asked)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	cr_assert_eq(maps_proc__flush(mp), 0);
}

static void exec_of(struct maps_proc *mp, uint32_t pid, uint64_t ts)
{
	struct lx_exec e = { .h = { .ts = ts, .tid = pid, .cpu = 1, .type = LX_REC_EXEC },
			     .pid = pid };

	cr_assert_eq(maps_proc__exec(mp, &e), 0);
}

Test(maps_proc, an_execs_code_mappings_become_mapping_records)
{
	char path[128], longname[400], text[1024], got[LX_PATH_LEN * 2];
	struct maps_proc *mp;
	struct maps_proc_stats st;

	memset(longname, 'n', 300);
	longname[300] = '\0';
	snprintf(path, sizeof(path), "%s/%d", root, PID);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(text, sizeof(text),
		 "55d0c0000000-55d0c0001000 r--p 00000000 fd:01 1234 /usr/bin/prog\n"
		 "55d0c0001000-55d0c0005000 r-xp 00001000 fd:01 1234 /usr/bin/prog\n"
		 "7f0000000000-7f0000020000 r-xp 00000000 00:00 0\n"
		 "7f1000000000-7f1000100000 r-xp 00028000 fd:01 99 /usr/lib/libc.so.6 (deleted)\n"
		 "7f2000000000-7f2000001000 r-xp 00000000 fd:01 77 /%s\n"
		 "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n"
		 "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n", longname);
	snprintf(path, sizeof(path), "%s/%d/maps", root, PID);
	cr_assert_eq(tfile_write(path, text, 0644), 0);

	mp = start();
	exec_of(mp, PID, 1000);
	exec_of(mp, PID + 1, 2000);	/* no such process */
	wait_answers(mp, 2);
	maps_proc__stats(mp, &st);
	cr_expect_eq(st.answered, 1);
	cr_expect_eq(st.gone, 1);
	cr_assert_eq(nrecs, 5, "%zu records, expected the 5 code mappings below 2^47", nrecs);
	for (size_t i = 0; i < nrecs; i++) {
		cr_expect_eq(recs[i].h.type, LX_REC_MMAP);
		cr_expect_eq(recs[i].h.ts, 1000, "stamped with the exec's time");
		cr_expect_eq(recs[i].pid, PID);
		cr_expect_eq(recs[i].flags,
			     LX_MMAP_SNAPSHOT | (i == 0 ? LX_MMAP_NEW_IMAGE : 0),
			     "record %zu: flags %#x", i, recs[i].flags);
	}
	cr_expect_eq(recs[0].start, 0x55d0c0001000ull);
	cr_expect_eq(recs[0].pgoff, 0x1000, "the offset in bytes");
	cr_expect_eq(recs[0].dev, 0xfd << 20 | 1, "the device as the kernel encodes it");
	cr_expect_eq(recs[0].ino, 1234);
	cr_expect_eq(mmap_path__get(&recs[0], got, sizeof(got)), 0);
	cr_expect_str_eq(got, "/usr/bin/prog");
	cr_expect_eq(recs[1].ino, 0, "anonymous code (JIT) has no file");
	cr_expect_eq(recs[1].path[0], '\0');
	cr_expect_eq(mmap_path__get(&recs[2], got, sizeof(got)), 0);
	cr_expect_str_eq(got, "/usr/lib/libc.so.6");
	cr_expect_eq(mmap_path__get(&recs[3], got, sizeof(got)), -ENOENT,
		     "a path longer than the record holds is incomplete, as a walk cut short");
	cr_expect_eq(recs[4].ino, LX_VDSO_INO);
	maps_proc__free(mp);
}

/* The answers are stamped with their asks' times: the reader holds back the records after an
 * ask until its answer is handed over (capture.c), so an ask is open from the moment it is
 * made until maps_proc__flush hands its records on, answered or not. A process that exited
 * but is not reaped yet has a maps file with nothing in it: gone, as a reaped one. */
Test(maps_proc, an_ask_is_open_until_its_answer_is_flushed)
{
	struct maps_proc_stats st;
	struct maps_proc *mp;
	char path[128];
	bool unread = true;

	snprintf(path, sizeof(path), "%s/%d", root, PID);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", root, PID);
	cr_assert_eq(tfile_write(path, "55d0c0001000-55d0c0005000 r-xp 00001000 fd:01 1234 "
				 "/usr/bin/prog\n", 0644), 0);
	snprintf(path, sizeof(path), "%s/%d", root, PID + 2);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", root, PID + 2);
	cr_assert_eq(tfile_write(path, "", 0644), 0);

	mp = start();
	cr_expect_eq(maps_proc__oldest_open(mp, &unread), UINT64_MAX, "nothing asked yet");
	cr_expect_not(unread, "no ring to read");
	exec_of(mp, PID + 1, 3000);	/* no such process */
	exec_of(mp, PID, 1000);
	exec_of(mp, PID + 2, 2000);	/* exited, not reaped */
	cr_expect_eq(maps_proc__oldest_open(mp, &unread), 1000, "open once handed over");
	for (int i = 0; i < 500; i++) {
		maps_proc__stats(mp, &st);
		if (st.answered + st.gone >= 3)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	cr_expect_eq(st.answered, 1);
	cr_expect_eq(st.gone, 2, "%llu processes counted gone, expected the reaped and the exited",
		     (unsigned long long)st.gone);
	cr_expect_eq(maps_proc__oldest_open(mp, &unread), 1000,
		     "answered, not handed on yet: still open");
	cr_assert_eq(maps_proc__flush(mp), 0);
	cr_expect_eq(nrecs, 1);
	cr_expect_eq(maps_proc__oldest_open(mp, &unread), UINT64_MAX, "open after the flush");
	maps_proc__free(mp);
}
