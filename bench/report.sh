#!/usr/bin/env bash
# report.sh - what `lxtrace report` costs on a big recording, next to `perf sched latency` on
# perf's recording of the same run: 30 s of `perf bench sched messaging` (bench/view.sh's busy
# machine) recorded system-wide by `lxtrace record` (its defaults) and `perf sched record` at
# once; then, three times each, the wall time and peak RSS of `lxtrace report FILE` (every
# section), `lxtrace report FILE --sched`, `lxtrace pprof FILE --offcpu` and
# `perf sched latency`.
#
# Usage: bench/report.sh [--seconds N] [--format F] [--trace FILE --perf-data FILE] [--keep DIR]
#   --seconds N        length of the recording (default 30)
#   --format F         the recording's format (lxtrace record --format: go1.19, go1.23)
#   --trace FILE       measure FILE (and --perf-data's perf.data) instead of recording
#   --perf-data FILE
#   --keep DIR         keep the recordings in DIR
# Run as root (recording needs it); needs build/lxtrace, perf and python3 (make deps). Not a
# test: figures on a shared 2-vCPU VM are noisy (docs/bench.md). Take the lock the other
# benchmarks take: flock /tmp/lxtrace-itest.lock bench/report.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
SECONDS_REC=30
FORMAT=go1.19
TRACE=
PERF_DATA=
KEEP=

while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECONDS_REC=$2; shift ;;
	--format) FORMAT=$2; shift ;;
	--trace) TRACE=$2; shift ;;
	--perf-data) PERF_DATA=$2; shift ;;
	--keep) KEEP=$2; shift ;;
	-h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "report.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "report.sh: $*" >&2; exit 1; }
command -v perf >/dev/null || die "perf not found (make deps)"
command -v python3 >/dev/null || die "python3 not found (make deps)"
[ -x "$LXTRACE" ] || die "$LXTRACE not built (make)"
if [ -z "$TRACE" ]; then
	[ "$(id -u)" = 0 ] || die "must run as root to record (or give --trace and --perf-data)"
else
	[ -n "$PERF_DATA" ] || die "--trace needs --perf-data"
fi

TMP=$(mktemp -d /tmp/lxtrace-report.XXXXXX)
mkfifo "$TMP/ready"
PIDS=()
MOUNTED=0

# Whatever happens, no recorder or workload of ours outlives the script, nor our mount.
cleanup() {
	for p in "${PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ "$MOUNTED" = 1 ] && umount /sys/kernel/tracing
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP" && cp -r "$TMP"/. "$KEEP/" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Both tools record one run of the workload. perf needs tracefs for its tracepoints.
record() {
	if ! [ -d /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing && MOUNTED=1
	fi
	"$LXTRACE" record -d "$SECONDS_REC" --format="$FORMAT" -o "$TMP/messaging.trace" \
		--ready-fd 3 3>"$TMP/ready" 2>"$TMP/record.log" &
	PIDS+=($!)
	local rec=$!
	read -r -t 30 _ <"$TMP/ready" || die "lxtrace record did not start: $(cat "$TMP/record.log")"
	perf sched record -a -o "$TMP/perf.data" -- sleep "$((SECONDS_REC - 1))" \
		>/dev/null 2>"$TMP/perf.log" &
	PIDS+=($!)
	local prec=$!
	timeout "$((SECONDS_REC - 2))" bash -c \
		'while :; do perf bench sched messaging -l 100000 >/dev/null 2>&1; done' || true
	wait "$prec" || die "perf sched record failed: $(cat "$TMP/perf.log")"
	wait "$rec" || die "lxtrace record failed: $(cat "$TMP/record.log")"
	PIDS=()
	grep -E ' s, [0-9]+ records|records lost:' "$TMP/record.log" | sed 's/^ */  /' >&2
	grep -E 'Captured|lost' "$TMP/perf.log" | sed 's/^ */  /' >&2 || true
	TRACE=$TMP/messaging.trace
	PERF_DATA=$TMP/perf.data
}

# Runs a command three times: the median and range of its wall time, its peak RSS.
measure() {
	local label=$1
	shift
	python3 - "$label" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
walls, rss = [], []
for _ in range(3):
    pid_start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    walls.append(time.monotonic() - pid_start)
    rss.append(ru.ru_maxrss / 1024)
    if status:
        sys.exit("report.sh: %s exited %d" % (" ".join(cmd), os.waitstatus_to_exitcode(status)))
print("| %s | %.2f (%.2f..%.2f) | %.0f |" % (label, statistics.median(walls), min(walls),
                                           max(walls), max(rss)))
PY
}

[ -n "$TRACE" ] || record
echo "trace: $(($(stat -c %s "$TRACE") / 1000000)) MB, perf.data: $(($(stat -c %s "$PERF_DATA") / 1000000)) MB" >&2
echo "| command | wall s, median (min..max) of 3 | peak RSS MiB |"
echo "|---|---|---|"
measure "lxtrace report FILE" "$LXTRACE" report "$TRACE"
measure "lxtrace report FILE --sched" "$LXTRACE" report "$TRACE" --sched
measure "lxtrace pprof FILE --offcpu -o OUT" "$LXTRACE" pprof "$TRACE" --offcpu -o "$TMP/off.pb.gz"
measure "perf sched latency -i perf.data" perf sched latency -i "$PERF_DATA"
