#!/usr/bin/env bash
# stacks.sh - what CPU sampling and call stacks cost: lxtrace record -F HZ against perf record
# -g -F HZ on a CPU-bound workload; stacks on scheduler events on pinned pipe ping-pong, lxtrace
# in its modes beside perf and bpftrace taking a stack at every switch and wakeup; and the
# daemon's time spent symbolizing; a Go program's blocking stacks (part go: Go 1.23 ping-pong
# through pipes, its code unwound from its pc tables); a CPython program's (part python: a
# ping-pong of two threads and a sampled loop, under a Python whose frames lxtrace walks, and
# under pyenv's 3.9, which it leaves native: the cost of the Python frames).
#
# Method (docs/bench.md): alternate untraced and traced runs (A B B A ...), medians with
# min..max. The CPU-bound workload (tests/workloads/hotspin chain, pinned to CPU 1) runs for a
# fixed time and counts its rounds, so the slowdown is untraced rounds / traced rounds.
#
# Usage: bench/stacks.sh [--pairs N] [--part "sampling stacks symbolize go"] [--old LXTRACE]
# (part python runs only when named: --part python.)
# --old: another build of lxtrace (before a change), whose runs alternate with this one's as
# old-NAME. Every run also has lxcompat and lxproc: this build on what kernels 5.10 and 6.1
# give it (LXTRACE_MASK_FEATURES, docs/testing.md).
# Run as root; needs build/lxtrace, build/tests/workloads/hotspin and
# build/tests/symfix/gostacks-go1.23 (make), perf, bpftrace, taskset; part python the Pythons of
# PYTHONS (default: /usr/bin/python3, walked, and pyenv's 3.9.18, left native).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
HOTSPIN=$ROOT/build/tests/workloads/hotspin
GOSTACKS=$ROOT/build/tests/symfix/gostacks-go1.23
PAIRS=5
PARTS="sampling stacks symbolize go"
SPIN_MS=3000
PIPE_N=100000
GO_N=100000
PYSPIN=$ROOT/build/tests/workloads/pyspin.py
PYTHONS=${PYTHONS:-"/usr/bin/python3 /root/.pyenv/versions/3.9.18/bin/python3"}
PY_N=50000
OLD=

while [ $# -gt 0 ]; do
	case $1 in
	--pairs) PAIRS=$2; shift ;;
	--part) PARTS=$2; shift ;;
	--old) OLD=$2; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "stacks.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "stacks.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] && [ -x "$HOTSPIN" ] || die "build first (make)"
[ -z "$OLD" ] || [ -x "$OLD" ] || die "--old $OLD: not an executable"
# The masks of docs/record.md "Kernels": what 5.10 and 6.1 lack.
MASK_5_10=modern,switch_state,exit_group,vma_iter,mmap_tp,sleepable_uprobe,bpf_cookie
MASK_6_1=vma_iter,exit_group
command -v perf >/dev/null || die "perf not found"
command -v bpftrace >/dev/null || die "bpftrace not found (scripts/deps.sh installs it)"

TMP=$(mktemp -d /tmp/lxtrace-stacks.XXXXXX)
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

# A stack at every switch and wakeup, aggregated in the kernel: bpftrace's cheapest form.
BPFTRACE_PROG='tracepoint:sched:sched_switch, tracepoint:sched:sched_waking { @[ustack, kstack] = count(); }'

# Starts tracer $1 writing $TMP/out: none, lxoff (-F 0), lx-HZ, lxboth-HZ, perf-HZ (cpu-clock
# samples); on scheduler events: lxdefault (the defaults), lxnone (-F 0 --stacks=none), lxboth
# (--stacks=both), perfsched (perf record -g of switches and wakeups), bpftrace.
start_tracer() {
	local log=$TMP/tracer.log name=$1 lx=$LXTRACE
	# $lx recording ARGS to $TMP/out, its line on $TMP/ready once it records. Only run in the
	# background (&): it execs, so that $! is lxtrace's pid.
	lx_record() { exec "$lx" record -v -o "$TMP/out" --ready-fd 3 "$@" 3>"$TMP/ready" 2>"$log"; }
	: >"$log"
	case $name in old-*) lx=$OLD; name=${name#old-} ;; esac
	case $name in
	none) TRACER_PID=; return ;;
	lx-*) lx_record -F "${name#lx-}" & ;;
	lxoff) lx_record -F 0 & ;;
	lxdefault) lx_record & ;;
	lxcompat) LXTRACE_MASK_FEATURES=$MASK_5_10 lx_record & ;;
	lxproc) LXTRACE_MASK_FEATURES=$MASK_6_1 lx_record & ;;
	lxnone) lx_record -F 0 --stacks=none & ;;
	lxboth) lx_record --stacks=both & ;;
	lxboth-*) lx_record -F "${name#lxboth-}" --stacks=both & ;;
	perf-*) perf record -q -a -g -e cpu-clock -F "${1#perf-}" -o "$TMP/out" 2>"$log" & ;;
	perfsched) perf record -q -a -g -e sched:sched_switch -e sched:sched_wakeup -o "$TMP/out" \
			2>"$log" & ;;
	bpftrace) bpftrace -e "$BPFTRACE_PROG" >"$TMP/out" 2>"$log" & ;;
	esac
	TRACER_PID=$!
	case $name in
	perf*) sleep 1 ;;
	bpftrace) for _ in $(seq 300); do grep -q Attaching "$TMP/out" && break; sleep 0.1; done ;;
	*) read -r -t 30 _ <"$TMP/ready" || die "$name did not start: $(cat "$log")" ;;
	esac
}

stop_tracer() {
	[ -n "$TRACER_PID" ] || return 0
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" 2>/dev/null || true
	TRACER_PID=
}

# One run of the CPU-bound workload: prints its rounds.
spin_run() {
	taskset -c 1 "$HOTSPIN" chain "$SPIN_MS" | awk '$2 == "rounds" { print $3 }'
}

# One pinned pipe ping-pong: prints its wall time in seconds.
pipe_run() {
	local t0 t1
	t0=$(date +%s.%N)
	taskset -c 1 perf bench sched pipe -l "$PIPE_N" >/dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# One pinned Go ping-pong (two locked threads, blocking pipe reads): prints its wall time in s.
go_run() {
	local t0 t1
	t0=$(date +%s.%N)
	taskset -c 1 "$GOSTACKS" pingpong "$GO_N"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# One pinned CPython ping-pong of $PY (two threads handing a token through queues: a switch and
# a wakeup with a stack per hand): prints its wall time in s, the interpreter's start included.
pypong_run() {
	local t0 t1
	t0=$(date +%s.%N)
	taskset -c 1 "$PY" "$PYSPIN" pingpong "$PY_N" >/dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# One pinned CPU-bound loop of $PY (lx_hidden_outer -> middle -> inner for SPIN_MS): prints its
# rounds.
pyspin_run() {
	taskset -c 1 "$PY" "$PYSPIN" spin "$(echo "$SPIN_MS / 1000" | bc -l)" |
		awk '$1 == "stat" && $2 == "rounds" { print $3 }'
}

# median (min..max) of the numbers on stdin
stats() {
	python3 -c 'import sys, statistics as s
v = [float(x) for x in sys.stdin.read().split()]
print("%.4g (%.4g..%.4g)" % (s.median(v), min(v), max(v)) if v else "-")'
}

# ratio of two medians: $1 / $2 (files of numbers)
ratio() {
	python3 -c 'import sys, statistics as s
a = [float(x) for x in open(sys.argv[1]).read().split()]
b = [float(x) for x in open(sys.argv[2]).read().split()]
print("%.3fx" % (s.median(a) / s.median(b)))' "$1" "$2"
}

# A warning when the middle half of the untraced runs of file $1 spreads by more than 15% of
# their median: on this 2-vCPU VM that is another tenant's load, and the run's ratios then
# compare little (docs/bench.md: e.g. --stacks=none measured below 1.0x). One slow run alone,
# which quiet hours have too, does not warn.
spread_note() {
	python3 -c 'import sys, statistics as s
v = [float(x) for x in open(sys.argv[1]).read().split()]
q = s.quantiles(v, n=4) if len(v) >= 4 else None
d = (q[2] - q[0]) / q[1] if q else 0
if d > 0.15:
    print("warning: the middle half of the untraced runs spreads by %.0f%% of their median: "
          "the host is contended, and these ratios compare little" % (100 * d))' "$1"
}

# The table of a part's wall times: $1 its title, then its tracers (slowdown: traced / untraced).
wall_table() {
	local title=$1 t
	shift
	echo "## $title: wall s, median (min..max) of $PAIRS"
	echo "| tracer | wall s | slowdown |"
	echo "|---|---|---|"
	for t in none "$@"; do
		echo "| $t | $(stats <"$TMP/$t.vals") | $(ratio "$TMP/$t.vals" "$TMP/none.vals") |"
	done
	spread_note "$TMP/none.vals"
}

# The same for rounds done in a fixed time (slowdown: untraced / traced).
rounds_table() {
	local title=$1 t
	shift
	echo "## $title: rounds, median (min..max) of $PAIRS"
	echo "| tracer | rounds | slowdown (untraced / traced) |"
	echo "|---|---|---|"
	for t in none "$@"; do
		echo "| $t | $(stats <"$TMP/$t.vals") | $(ratio "$TMP/none.vals" "$TMP/$t.vals") |"
	done
	spread_note "$TMP/none.vals"
}

# Alternates the untraced baseline with each tracer in $2, running $1 (spin_run or pipe_run).
compare() {
	local fn=$1 tracers=$2 i t order
	for t in none $tracers; do : >"$TMP/$t.vals"; done
	for i in $(seq "$PAIRS"); do
		if [ $((i % 2)) = 1 ]; then order="none $tracers"; else order="$(echo $tracers | tr ' ' '\n' | tac | tr '\n' ' ') none"; fi
		for t in $order; do
			start_tracer "$t"
			$fn >>"$TMP/$t.vals"
			stop_tracer
			[ "$t" != none ] && cp "$TMP/tracer.log" "$TMP/$t.log" 2>/dev/null || true
		done
	done
}

# The tracers of a part, and with --old the old build's runs of the lxtrace ones (not of the
# masked modes: an older build may not know LXTRACE_MASK_FEATURES).
with_old() {
	local t
	echo "$@"
	[ -n "$OLD" ] || return 0
	for t in "$@"; do case $t in lxcompat|lxproc) ;; lx*) echo "old-$t" ;; esac; done
}

if [[ " $PARTS " == *" sampling "* ]]; then
	SAMPLERS=$(with_old lxoff lx-99 perf-99 lx-999 perf-999 | tr '\n' ' ')
	compare spin_run "$SAMPLERS"
	# shellcheck disable=SC2086
	rounds_table "CPU-bound workload (taskset -c 1 hotspin chain $SPIN_MS)" $SAMPLERS
	grep -h "samples" "$TMP"/lx-999.log | head -1 || true
	echo
fi

if [[ " $PARTS " == *" stacks "* ]]; then
	PEERS=$(with_old lxnone lxdefault lxboth lxcompat lxproc perfsched bpftrace | tr '\n' ' ')
	compare pipe_run "$PEERS"
	# shellcheck disable=SC2086
	wall_table "taskset -c 1 perf bench sched pipe -l $PIPE_N" $PEERS
	for t in lxdefault lxboth lxcompat lxproc; do
		echo "$t:"
		grep -h "call stacks\|user stacks\|unwind rows\|daemon CPU\|by kind" "$TMP/$t.log" | tr -s ' '
	done
	echo
fi

if [[ " $PARTS " == *" symbolize "* ]]; then
	echo "## Symbolization in a recording: 3 s, --stacks=both -F 999, messaging + hotspin"
	start_tracer lxboth-999
	perf bench sched messaging -l 300 >/dev/null 2>&1
	"$HOTSPIN" chain 1000 >/dev/null
	stop_tracer
	grep -h "call stacks\|user stacks\|unwind rows\|daemon CPU\|by kind" "$TMP/tracer.log"
fi

if [[ " $PARTS " == *" go "* ]]; then
	[ -x "$GOSTACKS" ] || die "build first (make): no $GOSTACKS"
	GOPEERS=$(with_old lxnone lxdefault | tr '\n' ' ')
	compare go_run "$GOPEERS"
	# shellcheck disable=SC2086
	wall_table "taskset -c 1 gostacks-go1.23 pingpong $GO_N" $GOPEERS
	for t in $GOPEERS; do
		case $t in *lxnone) continue ;; esac
		echo "$t:"
		grep -h "call stacks\|user stacks\|unwind rows\|daemon CPU" "$TMP/$t.log" | tr -s ' '
	done
	echo
fi

if [[ " $PARTS " == *" python "* ]]; then
	[ -f "$PYSPIN" ] || die "build first (make): no $PYSPIN"
	for PY in $PYTHONS; do
		[ -x "$PY" ] || { echo "$PY: not installed, skipped"; continue; }
		PYV=$("$PY" -V 2>&1)
		PYPEERS=$(with_old lxnone lxdefault perfsched | tr '\n' ' ')
		compare pypong_run "$PYPEERS"
		# shellcheck disable=SC2086
		wall_table "$PYV: taskset -c 1 pyspin.py pingpong $PY_N" $PYPEERS
		grep -h "python:" "$TMP/lxdefault.log" | tr -s ' ' || true
		PYSAMPLERS=$(with_old lx-999 perf-999 | tr '\n' ' ')
		compare pyspin_run "$PYSAMPLERS"
		# shellcheck disable=SC2086
		rounds_table "$PYV: taskset -c 1 pyspin.py spin $SPIN_MS ms" $PYSAMPLERS
		grep -h "python:" "$TMP/lx-999.log" | tr -s ' ' || true
		echo
	done
fi
