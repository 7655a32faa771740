#!/usr/bin/env bash
# Records a short demo trace of the whole machine while a few of the test workloads run,
# so the timeline has something to show: threads ping-ponging, sleeping and contending.
set -euo pipefail
lxtrace=${1:-build/lxtrace}
out=${2:-demo.trace}
workloads=$(dirname "$lxtrace")/tests/workloads

"$lxtrace" record -d 3 -o "$out" &
rec=$!
trap 'kill -INT $rec 2>/dev/null || true' EXIT
sleep 0.5
pids=()
"$workloads/pingpong" 5000 >/dev/null & pids+=($!)
"$workloads/sleeper" 20 >/dev/null & pids+=($!)
"$workloads/futex_contend" >/dev/null & pids+=($!)
wait "${pids[@]}"
wait $rec
trap - EXIT
echo "demo: wrote $out; open it with: go tool trace $out"
