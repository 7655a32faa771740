#!/usr/bin/env bash
# startup.sh - how long lxtrace takes to start recording, idle and under load: from the exec of
# `lxtrace record` to its line on --ready-fd (programs loaded, the machine's threads scanned), to
# the first batch in the file, and the whole of `lxtrace record -- true`, beside `perf record
# -- true` (perf's start on the same machine), and the whole of a 1 s whole-machine recording
# beside `perf record -a -g -- sleep 1`.
#
# Method (docs/bench.md): for each load, the tools' runs alternate; medians with min..max.
# Loads: idle; hogs (2 busy loops per CPU at nice 0); forks (tests/workloads/stress: threads
# and processes created and ended all the time, so the start's scan meets a changing machine);
# sleepers (2,000 threads more, each asleep in read(): the stack of each is read at the start,
# tests/workloads/frameless pool).
#
# lxtrace keeps the unwind rows it compiles in its cache (docs/record.md): by default the runs
# use the machine's, filled by a recording first; --cold gives every lxtrace run an empty one.
#
# Usage: bench/startup.sh [--runs N] [--loads "idle hogs forks sleepers"] [--cold]
# Run as root; needs build/lxtrace, build/tests/workloads/{stress,frameless} (make), perf.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
STRESS=$ROOT/build/tests/workloads/stress
FRAMELESS=$ROOT/build/tests/workloads/frameless
RUNS=5
LOADS="idle hogs forks"
COLD=

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--loads) LOADS=$2; shift ;;
	--cold) COLD=1 ;;
	-h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "startup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "startup.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] && [ -x "$STRESS" ] && [ -x "$FRAMELESS" ] || die "build first (make)"
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
	sleepers)
		"$FRAMELESS" pool 2000 >/dev/null &
		LOAD_PIDS+=($!) ;;
	*) die "unknown load '$1'" ;;
	esac
	sleep 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# With --cold, the next lxtrace run's cache: a directory not made yet.
NCACHE=0
cold_cache() {
	if [ -n "$COLD" ]; then
		NCACHE=$((NCACHE + 1))
		export LXTRACE_CACHE_DIR=$TMP/cache.$NCACHE
	fi
}

# One whole-machine recording: ms to its ready line and to a first batch in the file.
one_start() {
	local out=$TMP/start.trace log=$TMP/start.log t0 rec=- batch=- pid i

	rm -f "$out"
	t0=$(now_ms)
	"$LXTRACE" record -o "$out" --ready-fd 3 3>"$TMP/ready" 2>"$log" &
	pid=$!
	# Killed before giving up: this runs in a subshell, whose exit would leave it recording.
	read -r -t 30 _ <"$TMP/ready" || { kill -INT $pid; wait $pid || true; die "lxtrace did not start: $(cat "$log")"; }
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

echo "## Start-up, ms: median (min..max) of $RUNS runs, $([ -n "$COLD" ] && echo cold || echo warm) cache"
echo "| load | to \"recording\" | to the first batch | lxtrace record -- true |" \
	"perf record -- true | lxtrace record -d 1 | perf record -a -g -- sleep 1 |"
echo "|---|---|---|---|---|---|---|"
# Warm: one recording fills the cache with the machine's binaries first.
[ -n "$COLD" ] || "$LXTRACE" record -o "$TMP/warm.trace" -d 1 2>/dev/null
for load in $LOADS; do
	start_load "$load"
	for f in rec batch lxtrue perftrue lxsec perfsec; do : >"$TMP/$f"; done
	for _ in $(seq "$RUNS"); do
		cold_cache
		read -r rec batch < <(one_start)
		echo "$rec" >>"$TMP/rec"
		echo "$batch" >>"$TMP/batch"
		cold_cache
		one_command "$LXTRACE" record -o "$TMP/true.trace" -- true >>"$TMP/lxtrue"
		one_command perf record -q -o "$TMP/perf.data" -- true >>"$TMP/perftrue"
		cold_cache
		one_command "$LXTRACE" record -o "$TMP/sec.trace" -d 1 >>"$TMP/lxsec"
		one_command perf record -q -a -g -o "$TMP/perf.data" -- sleep 1 >>"$TMP/perfsec"
	done
	stop_load
	echo "| $load | $(grep -v - "$TMP/rec" | stats) | $(grep -v - "$TMP/batch" | stats) |" \
		"$(stats <"$TMP/lxtrue") | $(stats <"$TMP/perftrue") | $(stats <"$TMP/lxsec") |" \
		"$(stats <"$TMP/perfsec") |"
done
