#!/usr/bin/env bash
# readers.sh - what lxtrace's trace readers cost: `lxtrace dump` on endless garbage (2 GB of
# zeros after a valid header, /dev/zero) and on a recording, against Go 1.19's and 1.23's
# parsers on the same files; `lxtrace repair` on recordings killed with SIGKILL; `lxtrace cut`
# of one second of a recording. Time (wall) and peak RSS of each, median of --runs runs.
#
# Not a test (docs/bench.md): figures for the docs, measured side by side in one session.
#
# Usage: bench/readers.sh [--runs N] [--seconds S]   (S: length of the recording, default 5)
# Run as root; needs build/lxtrace and build/tests/workloads/stress (make), Go 1.19 and 1.23.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
STRESS=$ROOT/build/tests/workloads/stress
GO119=/usr/lib/go-1.19/pkg/tool/linux_amd64/trace
GO123=/usr/lib/go-1.23/pkg/tool/linux_amd64/trace
RUNS=5
SECONDS_REC=5

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--seconds) SECONDS_REC=$2; shift ;;
	-h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "readers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "readers.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] && [ -x "$STRESS" ] || die "build first (make)"
[ -x "$GO119" ] && [ -x "$GO123" ] || die "needs Go 1.19 and 1.23 (make deps)"

TMP=$(mktemp -d /tmp/lxtrace-readers.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
TRACER_PID=
cleanup() {
	if [ -n "$TRACER_PID" ] && kill -0 "$TRACER_PID" 2>/dev/null; then
		kill -KILL "$TRACER_PID" 2>/dev/null || true
		wait "$TRACER_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs "$@" RUNS times (output discarded, exit status ignored: refusals are the point);
# prints "median s (min..max), median peak RSS MiB".
measure() {
	local i times=() rss=()
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>&1 || true
		# time says "Command exited with non-zero status N" first when it did.
		read -r t m < <(tail -n 1 "$TMP/time")
		times+=("$t")
		rss+=("$m")
	done
	printf '%s\n' "${times[@]}" | sort -n >"$TMP/t"
	printf '%s\n' "${rss[@]}" | sort -n >"$TMP/m"
	awk -v n="$RUNS" 'NR == FNR { t[FNR] = $1; next } { m[FNR] = $1 }
		END { printf "%.3f s (%.3f..%.3f), %.1f MiB\n", t[int((n + 1) / 2)], t[1], t[n],
		      m[int((n + 1) / 2)] / 1024 }' "$TMP/t" "$TMP/m"
}

row() { printf '| %-34s | %-28s | %s\n' "$1" "$2" "$3"; }

# Records SECONDS_REC seconds of the stress workload into $1; with $2 = kill, SIGKILLs the
# recorder at a moment drawn in the second half.
record() {
	local out=$1 how=${2:-} log=$TMP/rec.log
	: >"$log"
	"$LXTRACE" record -o "$out" --ready-fd 3 3>"$TMP/ready" 2>"$log" &
	TRACER_PID=$!
	read -r -t 30 _ <"$TMP/ready" || die "lxtrace did not start: $(cat "$log")"
	"$STRESS" $((SECONDS_REC * 1000)) 2 4 >/dev/null &
	local wl=$!
	if [ "$how" = kill ]; then
		sleep "$(awk -v s="$SECONDS_REC" -v r="$RANDOM" 'BEGIN { printf "%.2f", s / 2 + s / 2 * r / 32768 }')"
		kill -KILL "$TRACER_PID"
	else
		wait "$wl" || true
		kill -INT "$TRACER_PID"
	fi
	wait "$TRACER_PID" 2>/dev/null || true
	TRACER_PID=
	kill "$wl" 2>/dev/null || true
	wait "$wl" 2>/dev/null || true
}

echo "# lxtrace readers, $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs each, median (min..max)"
echo
row "input" "reader" "time, peak RSS"
row "---" "---" "---"

printf 'go 1.19 trace\0\0\0' >"$TMP/zeros.trace"
truncate -s $((16 + (2 << 30))) "$TMP/zeros.trace"
for input in "$TMP/zeros.trace" /dev/zero; do
	name=$([ "$input" = /dev/zero ] && echo "/dev/zero" || echo "2 GB of zeros after a header")
	row "$name" "lxtrace dump" "$(measure "$LXTRACE" dump "$input")"
	row "$name" "go 1.19 trace -d" "$(measure env GOROOT=/usr/lib/go-1.19 "$GO119" -d "$input")"
	row "$name" "go 1.23 trace -d=1" "$(measure env GOROOT=/usr/lib/go-1.23 "$GO123" -d=1 "$input")"
done
rm -f "$TMP/zeros.trace"

record "$TMP/rec.trace"
size=$(stat -c %s "$TMP/rec.trace")
name="recording, $((size / 1024)) KiB"
row "$name" "lxtrace dump" "$(measure "$LXTRACE" dump "$TMP/rec.trace")"
row "$name" "go 1.19 trace -d" "$(measure env GOROOT=/usr/lib/go-1.19 "$GO119" -d "$TMP/rec.trace")"
row "$name" "go 1.23 trace -d=1" "$(measure env GOROOT=/usr/lib/go-1.23 "$GO123" -d=1 "$TMP/rec.trace")"
row "$name" "lxtrace cut 1 s (middle)" \
	"$(measure "$LXTRACE" cut "$TMP/rec.trace" --from 1 --to 2 -o "$TMP/cut.trace")"
echo
echo "cut of 1 s: $(stat -c %s "$TMP/cut.trace") bytes of $size"

echo
row "recording killed with SIGKILL" "lxtrace repair" "time, peak RSS; what it did"
row "---" "---" "---"
for ((k = 0; k < RUNS; k++)); do
	record "$TMP/killed.trace" kill
	cp "$TMP/killed.trace" "$TMP/work.trace"
	/usr/bin/time -f "%e %M" -o "$TMP/time" "$LXTRACE" repair "$TMP/work.trace" >"$TMP/said" 2>&1 || true
	read -r t m < <(tail -n 1 "$TMP/time")
	row "$(($(stat -c %s "$TMP/killed.trace") / 1024)) KiB" "lxtrace repair" \
		"$t s, $((m / 1024)) MiB; $(cut -d: -f2- "$TMP/said" | head -c 160)"
done
