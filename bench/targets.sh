#!/usr/bin/env bash
# targets.sh - what a target recording costs the processes it does not trace: a busy untraced
# workload (pinned `perf bench sched pipe`) run alone, while lxtrace traces an idle target
# (-p of a sleeping process: every program runs and filters, nothing is recorded), and while
# lxtrace traces the whole machine, for comparison.
#
# Method (docs/bench.md): the three modes alternate (none target all, all target none, ...)
# for --pairs rounds; medians with min..max; the machine's CPU time (/proc/stat) while the
# workload runs, since the reader competes for the 2 vCPUs; the records each recording wrote.
#
# Usage: bench/targets.sh [--pairs N] [--loops N]
# Run as root; needs build/lxtrace (make), perf, taskset, python3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
PAIRS=5
LOOPS=200000

while [ $# -gt 0 ]; do
	case $1 in
	--pairs) PAIRS=$2; shift ;;
	--loops) LOOPS=$2; shift ;;
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "targets.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "targets.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (tracing needs it)"
for t in perf taskset python3; do command -v $t >/dev/null || die "$t not found (make deps)"; done
[ -x "$LXTRACE" ] || die "$LXTRACE not built (make)"

TMP=$(mktemp -d /tmp/lxtrace-bench-targets.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
TRACER_PID=
IDLE_PID=

# Whatever happens, no tracer or idle target of ours outlives the script, nor its files.
cleanup() {
	if [ -n "$TRACER_PID" ] && kill -0 "$TRACER_PID" 2>/dev/null; then
		kill -INT "$TRACER_PID" 2>/dev/null || true
		wait "$TRACER_PID" 2>/dev/null || true
	fi
	if [ -n "$IDLE_PID" ]; then
		kill "$IDLE_PID" 2>/dev/null || true
		wait "$IDLE_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

sleep 100000 &
IDLE_PID=$!

busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }

# run MODE: one workload run, traced per MODE; appends "MODE seconds cpu_s records" to results.
run() {
	local mode=$1 t0 t1 secs records=0
	case $mode in
	target) "$LXTRACE" record -o "$TMP/t.trace" --ready-fd 3 -p "$IDLE_PID" 3>"$TMP/ready" \
		2>"$TMP/err" & TRACER_PID=$! ;;
	all) "$LXTRACE" record -o "$TMP/t.trace" --ready-fd 3 3>"$TMP/ready" 2>"$TMP/err" &
		TRACER_PID=$! ;;
	esac
	if [ "$mode" != none ]; then
		read -r -t 30 _ <"$TMP/ready" || die "lxtrace did not start: $(cat "$TMP/err")"
	fi
	t0=$(busy_jiffies)
	secs=$(taskset -c 1 perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/Total time/{print $3}')
	t1=$(busy_jiffies)
	if [ "$mode" != none ]; then
		kill -INT "$TRACER_PID"
		wait "$TRACER_PID" || die "lxtrace failed: $(cat "$TMP/err")"
		TRACER_PID=
		records=$(sed -n 's/.* s, \([0-9]*\) records.*/\1/p' "$TMP/err")
	fi
	echo "$mode $secs $(( (t1 - t0) ))e-2 $records" >>"$TMP/results"
}

echo "targets.sh: $PAIRS rounds of taskset -c 1 perf bench sched pipe -l $LOOPS" >&2
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) = 1 ]; then order="none target all"; else order="all target none"; fi
	for m in $order; do run "$m"; done
done

python3 - "$TMP/results" "$LOOPS" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
loops = int(sys.argv[2])
by = {}
for mode, secs, cpu, rec in rows:
    by.setdefault(mode, []).append((float(secs), float(cpu), int(rec)))
base = statistics.median(s for s, _, _ in by["none"])
print("| mode | wall s, median (min..max) | slowdown | machine CPU s | records | ns per pipe round trip added |")
print("|---|---|---|---|---|---|")
for mode in ("none", "target", "all"):
    v = by[mode]
    w = [s for s, _, _ in v]
    med = statistics.median(w)
    print(f"| {mode} | {med:.3f} ({min(w):.3f}..{max(w):.3f}) | {med / base:.3f}x "
          f"| {statistics.median(c for _, c, _ in v):.2f} | {statistics.median(r for _, _, r in v):.0f} "
          f"| {(med - base) / loops * 1e9:.0f} |")
EOF
