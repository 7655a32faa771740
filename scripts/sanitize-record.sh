#!/usr/bin/env bash
# One short recording by an ASan+UBSan build (make sanitize-test): every record kind the
# daemon handles (stacks of both kinds, samples at 999 Hz, every syscall, annotations, a
# command with children) while workloads run, then `lxtrace dump` of the file. Any sanitizer
# finding aborts the program, so a non-zero exit here is the finding.
# Usage: scripts/sanitize-record.sh BUILD_DIR   (root)
set -euo pipefail
out=$1
lxtrace=$out/lxtrace
workloads=$out/tests/workloads
trace=$out/sanitize.trace

: >"$out/sanitize-record.log"
"$lxtrace" record -d 2 -F 999 --stacks=both --syscalls=all --usdt "$workloads/annotated" \
	-o "$trace" 2>"$out/sanitize-record.log" &
rec=$!
trap 'kill -INT $rec 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q recording "$out/sanitize-record.log" && break; sleep 0.1; done
"$workloads/stress" 300 2 4 >/dev/null
"$workloads/annotated" 2 >/dev/null
"$workloads/execthread" >/dev/null 2>&1 || true
if ! wait $rec; then
	trap - EXIT
	cat "$out/sanitize-record.log" >&2
	echo "sanitize-test: the recording failed" >&2
	exit 1
fi
trap - EXIT
"$lxtrace" dump "$trace" >/dev/null
echo "sanitize-test: recording and dump clean under ASan+UBSan ($(stat -c %s "$trace") bytes)"
