#!/bin/sh
# The command tests/streams/workloads.* were recorded from (see docs/testing.md):
#   sudo build/tests/capture-stream -F 999 --usdt build/tests/workloads/annotated \
#       tests/streams/workloads -- tests/streams/workloads.sh build/tests/workloads
# A short run of workloads that between them make every kind of record: blocking reads and
# wakeups, futex waits, sleeps, yields, thread and process creation, a non-leader exec, exits,
# getppid syscalls, resident memory growth, annotations and CPU-bound samples.
set -e
w=$1
$w/pingpong 300 >/dev/null
$w/futex_contend 2 50 >/dev/null
$w/sleeper 3 >/dev/null
$w/yielder 50 0 >/dev/null
$w/threads 8 >/dev/null
$w/execthread >/dev/null
$w/sysloop 300 >/dev/null
$w/allocator 2 4 10 >/dev/null
$w/annotated 2 >/dev/null
$w/netwait 2 >/dev/null
$w/hotspin chain 200 >/dev/null
