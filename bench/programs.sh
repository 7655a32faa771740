#!/usr/bin/env bash
# programs.sh - what each BPF program costs per run, as the kernel measures it
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt of every program), during a pinned pipe
# ping-pong: the scheduler's programs at their hottest. A wall-time ratio (bench/stacks.sh)
# carries the machine's noise of a few percent; this is the programs' own time, so two builds
# or two modes compare to a few ns.
#
# Usage: bench/programs.sh [--runs N] [--mode "OPTIONS"] [--mask FEATURES] [--old LXTRACE] [--go]
# --mode: lxtrace record's options (default: "-F 99", the defaults); --mask: features taken for
# missing (LXTRACE_MASK_FEATURES, docs/testing.md), to measure an older kernel's programs here;
# --old: another build, whose runs alternate with this one's; --go: the ping-pong is a Go
# program's (build/tests/symfix/gostacks-go1.23 pingpong: two locked threads, blocking pipe
# reads), recorded alone, whose stacks are walked through Go code. Prints the median (min..max) ns per run of
# each program that ran over 1,000 times. Run as root; needs bpftool, perf.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
RUNS=6
MODE="-F 99"
MASK=
OLD=
GO=
PIPE_N=100000
GOSTACKS=$ROOT/build/tests/symfix/gostacks-go1.23

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--mode) MODE=$2; shift ;;
	--mask) MASK=$2; shift ;;
	--old) OLD=$2; shift ;;
	--go) GO=1 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "programs.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "programs.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] || die "$LXTRACE not built (make)"
[ -z "$OLD" ] || [ -x "$OLD" ] || die "--old $OLD: not an executable"
command -v bpftool >/dev/null && command -v perf >/dev/null || die "needs bpftool and perf"
[ -z "$GO" ] || [ -x "$GOSTACKS" ] || die "$GOSTACKS not built (make)"

TMP=$(mktemp -d /tmp/lxtrace-programs.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
TRACER_PID=
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	if [ -n "$TRACER_PID" ] && kill -0 "$TRACER_PID" 2>/dev/null; then
		kill -INT "$TRACER_PID" 2>/dev/null || true
		wait "$TRACER_PID" 2>/dev/null || true
	fi
	sysctl -q kernel.bpf_stats_enabled="$STATS_WAS" || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The busy programs of bpftool's JSON on stdin: "LABEL PROGRAM NS" each.
busy() {
	python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("run_cnt", 0) > 1000:
        print(sys.argv[1], p.get("name", "?"), p["run_time_ns"] / p["run_cnt"])' "$1"
}

# One recording by $2 (label $1) of the pipe ping-pong: "LABEL PROGRAM NS" per busy program.
# The Go one is recorded alone (the command), which reads the counters before it exits.
measure() {
	local label=$1 lx=$2
	: >"$TMP/log"
	if [ -n "$GO" ]; then
		LXTRACE_MASK_FEATURES=$MASK "$lx" record -o "$TMP/out" $MODE -- sh -c \
			"taskset -c 1 $GOSTACKS pingpong $PIPE_N && bpftool prog show -j >$TMP/progs" \
			2>"$TMP/log" || die "$label: lxtrace failed: $(tail -n 3 "$TMP/log")"
		busy "$label" <"$TMP/progs"
		return
	fi
	LXTRACE_MASK_FEATURES=$MASK "$lx" record -o "$TMP/out" --ready-fd 3 $MODE 3>"$TMP/ready" \
		2>"$TMP/log" &
	TRACER_PID=$!
	read -r -t 30 _ <"$TMP/ready" || die "$label: lxtrace did not start: $(tail -n 3 "$TMP/log")"
	taskset -c 1 perf bench sched pipe -l "$PIPE_N" >/dev/null
	# The counters live with the programs: read them before the recorder lets go.
	bpftool prog show -j | busy "$label"
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" || die "$label: lxtrace failed: $(tail -n 3 "$TMP/log")"
	TRACER_PID=
}

sysctl -q kernel.bpf_stats_enabled=1
for i in $(seq "$RUNS"); do
	# Alternate which build goes first, so drift hits both alike.
	if [ -n "$OLD" ] && [ $((i % 2)) = 0 ]; then
		measure old "$OLD"
		measure new "$LXTRACE"
	else
		measure new "$LXTRACE"
		[ -z "$OLD" ] || measure old "$OLD"
	fi
done >"$TMP/ns"

echo "## ns per program run (kernel.bpf_stats_enabled), pinned ${GO:+Go }pipe -l $PIPE_N, lxtrace record" \
	"$MODE${MASK:+, LXTRACE_MASK_FEATURES=$MASK}: median (min..max) of $RUNS"
python3 - "$TMP/ns" <<'EOF'
import statistics as st, sys
d = {}
for line in open(sys.argv[1]):
    build, prog, ns = line.split()
    d.setdefault((prog, build), []).append(float(ns))
print("| program | build | ns per run |")
print("|---|---|---|")
for (prog, build), v in sorted(d.items()):
    print(f"| {prog} | {build} | {st.median(v):.1f} ({min(v):.1f}..{max(v):.1f}) |")
EOF
