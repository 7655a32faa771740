#!/usr/bin/env bash
# stop.sh - how long `lxtrace record` takes to stop, with and without annotation probes (-u):
# from the SIGINT to the end of its summary on stderr (the file is complete by then), and to
# its exit. The probes are those of tests/workloads/annotated (13 call sites: 13 uprobes),
# which runs once while each recording does.
#
# Method (docs/bench.md): the modes alternate (plain, -u, plain, ...) for --runs rounds, each
# recording 1 s of the whole machine; medians with min..max, in ms. With --old LXTRACE, another
# build (with --ready-fd) runs each mode too, beside this one.
#
# Usage: bench/stop.sh [--runs N] [--old LXTRACE]
# Run as root; needs build/lxtrace and build/tests/workloads/annotated (make).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
ANNOTATED=$ROOT/build/tests/workloads/annotated
RUNS=5
OLD=

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--old) OLD=$2; shift ;;
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "stop.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "stop.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (tracing needs it)"
[ -x "$LXTRACE" ] || die "$LXTRACE not built (make)"
[ -x "$ANNOTATED" ] || die "$ANNOTATED not built (make)"
[ -z "$OLD" ] || [ -x "$OLD" ] || die "--old $OLD: not an executable"

TMP=$(mktemp -d /tmp/lxtrace-stop.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
TRACER_PID=

cleanup() {
	if [ -n "$TRACER_PID" ] && kill -0 "$TRACER_PID" 2>/dev/null; then
		kill -INT "$TRACER_PID" 2>/dev/null || true
		wait "$TRACER_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ns() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One recording by $2 (label $1) with options $3: appends "LABEL SUMMARY_MS EXIT_MS".
measure() {
	local label=$1 lx=$2 opts=$3 err=$TMP/rec.err t0 t1 ts poller
	rm -f "$TMP/out" "$TMP/summary_at"
	# shellcheck disable=SC2086 # opts are words
	"$lx" record -o "$TMP/out" --ready-fd 3 $opts 3>"$TMP/ready" 2>"$err" &
	TRACER_PID=$!
	read -r -t 30 _ <"$TMP/ready" || die "$label: lxtrace did not start: $(cat "$err")"
	"$ANNOTATED" 2 >/dev/null
	sleep 1
	# The summary's last line names the file.
	(until grep -q 'open it:' "$err"; do sleep 0.002; done; now_ns >"$TMP/summary_at") &
	poller=$!
	t0=$(now_ns)
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" || die "$label: lxtrace failed: $(tail -n 3 "$err")"
	t1=$(now_ns)
	TRACER_PID=
	wait "$poller"
	ts=$(cat "$TMP/summary_at")
	echo "$label $(((ts - t0) / 1000000)) $(((t1 - t0) / 1000000))" >>"$TMP/results"
}

: >"$TMP/results"
for _ in $(seq "$RUNS"); do
	for build in new ${OLD:+old}; do
		lx=$LXTRACE
		[ "$build" = new ] || lx=$OLD
		measure "$build plain" "$lx" ""
		measure "$build -u" "$lx" "-u $ANNOTATED"
	done
done

echo "## Stopping, ms from SIGINT: median (min..max) of $RUNS runs"
echo "| build | mode | to the summary's end | to the exit |"
echo "|---|---|---|---|"
for label in "new plain" "new -u" ${OLD:+"old plain" "old -u"}; do
	row="| ${label% *} | ${label#* } |"
	for col in 2 3; do
		vals=$(awk -v l="$label" -v c="$col" '$1 " " $2 == l { print $(c + 1) }' "$TMP/results")
		row="$row $(echo "$vals" | median) ($(echo "$vals" | sort -n | head -1)..$(echo "$vals" | sort -n | tail -1)) |"
	done
	echo "$row"
done
