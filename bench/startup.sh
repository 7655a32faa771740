#!/usr/bin/env bash
# startup.sh - how long lxtrace takes to start recording, idle and under load: from the exec of
# `lxtrace record` to its line on --ready-fd (programs loaded, the machine's threads scanned), to
# the first batch in the file, and the whole of `lxtrace record -- true`, beside `perf record
# -- true` (perf's start on the same machine).
#
# Method (docs/bench.md): for each load, the tools' runs alternate; medians with min..max.
# Loads: idle; hogs (2 busy loops per CPU at nice 0); forks (tests/workloads/stress: threads
# and processes created and ended all the time, so the start's scan meets a changing machine).
#
# Usage: bench/startup.sh [--runs N] [--loads "idle hogs forks"]
# Run as root; needs build/lxtrace and build/tests/workloads/stress (make), perf.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
STRESS=$ROOT/build/tests/workloads/stress
RUNS=5
LOADS="idle hogs forks"

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--loads) LOADS=$2; shift ;;
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "startup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "startup.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] && [ -x "$STRESS" ] || die "build first (make)"
command -v perf >/dev/null || die "perf not found (make deps)"

TMP=$(mktemp -d /tmp/lxtrace-startup.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
LOAD_PIDS=()
stop_load() {
	for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	LOAD_PIDS=()
}
trap 'stop_load; rm -rf "$TMP"' EXIT

start_load() {
	case $1 in
	idle) ;;
	hogs)
		for _ in $(seq $((2 * $(nproc)))); do
			sh -c 'while :; do :; done' &
			LOAD_PIDS+=($!)
		done ;;
	forks)
		# Rounds of thread and process churn, again and again until stopped.
		sh -c "while :; do '$STRESS' 3000 2 4 >/dev/null; done" &
		LOAD_PIDS+=($!) ;;
	*) die "unknown load '$1'" ;;
	esac
	sleep 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# One whole-machine recording: ms to its ready line and to a first batch in the file.
one_start() {
	local out=$TMP/start.trace log=$TMP/start.log t0 rec=- batch=- pid i

	rm -f "$out"
	t0=$(now_ms)
	"$LXTRACE" record -o "$out" --ready-fd 3 3>"$TMP/ready" 2>"$log" &
	pid=$!
	read -r -t 30 _ <"$TMP/ready" || die "lxtrace did not start: $(cat "$log")"
	rec=$(($(now_ms) - t0))
	for i in $(seq 2000); do
		if [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" -gt 16 ]; then
			batch=$(($(now_ms) - t0))
			break
		fi
		sleep 0.01
	done
	kill -INT $pid
	wait $pid || true
	echo "$rec $batch"
}

one_command() {
	local t0

	t0=$(now_ms)
	"$@" >/dev/null 2>&1 || true
	echo $(($(now_ms) - t0))
}

# median (min..max) of the numbers on stdin
stats() {
	sort -n | awk '{v[NR]=$1} END {if (!NR) {print "-"; exit}
		m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%d (%d..%d)\n", m, v[1], v[NR]}'
}

echo "## Start-up, ms: median (min..max) of $RUNS runs"
echo "| load | to \"recording\" | to the first batch | lxtrace record -- true | perf record -- true |"
echo "|---|---|---|---|---|"
for load in $LOADS; do
	start_load "$load"
	: >"$TMP/rec" ; : >"$TMP/batch"; : >"$TMP/lxtrue"; : >"$TMP/perftrue"
	for _ in $(seq "$RUNS"); do
		read -r rec batch < <(one_start)
		echo "$rec" >>"$TMP/rec"
		echo "$batch" >>"$TMP/batch"
		one_command "$LXTRACE" record -o "$TMP/true.trace" -- true >>"$TMP/lxtrue"
		one_command perf record -q -o "$TMP/perf.data" -- true >>"$TMP/perftrue"
	done
	stop_load
	echo "| $load | $(grep -v - "$TMP/rec" | stats) | $(grep -v - "$TMP/batch" | stats) |" \
		"$(stats <"$TMP/lxtrue") | $(stats <"$TMP/perftrue") |"
done
