#!/usr/bin/env bash
# Records a short demo trace of the whole machine while a few of the test workloads run,
# so the timeline has something to show: threads ping-ponging, sleeping and contending.
# The workloads start when the recorder says it is recording (--ready-fd): a fixed sleep
# lost the race on a freshly booted machine, whose first start-up is the slowest.
set -euo pipefail
lxtrace=${1:-build/lxtrace}
out=${2:-demo.trace}
workloads=$(dirname "$lxtrace")/tests/workloads

tmp=$(mktemp -d)
mkfifo "$tmp/ready"
"$lxtrace" record -d 3 -o "$out" --ready-fd 3 3>"$tmp/ready" &
rec=$!
trap 'kill -INT $rec 2>/dev/null || true; rm -rf "$tmp"' EXIT
# End of file before the line: the recorder did not start, and said why.
read -r _ <"$tmp/ready" || { wait $rec && exit 1 || exit; }
rm -r "$tmp"
pids=()
"$workloads/pingpong" 5000 >/dev/null & pids+=($!)
"$workloads/sleeper" 20 >/dev/null & pids+=($!)
"$workloads/futex_contend" >/dev/null & pids+=($!)
wait "${pids[@]}"
wait $rec
trap - EXIT
echo "demo: wrote $out; open it with: go tool trace $out"
