#!/usr/bin/env bash
# Short recordings by an ASan+UBSan build (make sanitize-test): every record kind the
# daemon handles (stacks of both kinds, samples at 999 Hz, every syscall, annotations, a
# command with children) while workloads run, then `lxtrace dump` of the file; once as this
# kernel allows, and once each as kernels 6.1 and 5.10 would (LXTRACE_MASK_FEATURES,
# docs/testing.md: mapping tables answered from /proc by a thread, the compat programs). Any
# sanitizer finding aborts the program, so a non-zero exit here is the finding.
# Usage: scripts/sanitize-record.sh BUILD_DIR   (root)
set -euo pipefail
out=$1
lxtrace=$out/lxtrace
workloads=$out/tests/workloads
trace=$out/sanitize.trace

# One recording with the features of $1 taken for missing ("": none).
record_once() {
	local mask=$1 rec

	: >"$out/sanitize-record.log"
	rm -f "$out/sanitize-ready"
	mkfifo "$out/sanitize-ready"
	LXTRACE_MASK_FEATURES=$mask "$lxtrace" record -d 2 -F 999 --stacks=both --syscalls=all \
		--usdt "$workloads/annotated" -o "$trace" --ready-fd 3 3>"$out/sanitize-ready" \
		2>"$out/sanitize-record.log" &
	rec=$!
	trap 'kill -INT $rec 2>/dev/null || true' EXIT
	# Its line once it records (docs/record.md); end of file: it failed, said below.
	read -r -t 60 _ <"$out/sanitize-ready" || true
	rm -f "$out/sanitize-ready"
	"$workloads/stress" 300 2 4 >/dev/null
	"$workloads/annotated" 2 >/dev/null
	"$workloads/execthread" >/dev/null 2>&1 || true
	if ! wait $rec; then
		trap - EXIT
		cat "$out/sanitize-record.log" >&2
		echo "sanitize-test: the recording failed${mask:+ (features taken for missing: $mask)}" >&2
		exit 1
	fi
	trap - EXIT
	"$lxtrace" dump "$trace" >/dev/null
	echo "sanitize-test: recording and dump clean under ASan+UBSan ($(stat -c %s "$trace")" \
		"bytes${mask:+; features taken for missing: $mask})"
}

record_once ""
record_once vma_iter,exit_group
record_once modern,switch_state,exit_group,vma_iter,mmap_tp,sleepable_uprobe,bpf_cookie
