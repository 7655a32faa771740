#!/usr/bin/env bash
# python.sh - what Python frames cost: the switch and waking programs' own time per run
# (kernel.bpf_stats_enabled) while a CPython ping-pong (tests/workloads/pyspin.py pingpong:
# two threads hand a token through queues, a switch and a wakeup with a stack per hand),
# pinned to one CPU, is recorded with -p -F 0: with Pythons whose frames lxtrace walks
# (Debian's 3.11; pyenv's 3.10, whose frames are objects read 104 bytes each) and one it leaves
# native (pyenv's 3.9: no known layout).
#
# Usage: bench/python.sh [--rounds N]. Run as root after make.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
SCRIPT=$ROOT/build/tests/workloads/pyspin.py
PYTHONS="/usr/bin/python3 /root/.pyenv/versions/3.10.13/bin/python3 /root/.pyenv/versions/3.9.18/bin/python3"
ROUNDS=20000

while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "python.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Run time per run of a program, from bpftool's run_time_ns and run_cnt.
prog_stats() { bpftool prog show name "$1" 2>/dev/null | grep -o 'run_time_ns [0-9]* run_cnt [0-9]*' | head -1; }

for py in $PYTHONS; do
	[ -x "$py" ] || { echo "$py: not installed, skipped"; continue; }
	echo "$py ($("$py" -V 2>&1)), $ROUNDS hands:"
	# The programs' own time, the process alone recorded (-p), its pingpong after the start.
	sysctl -qw kernel.bpf_stats_enabled=1
	coproc PY { exec taskset -c 1 "$py" "$SCRIPT" pingpong "$ROUNDS" wait; }
	"$LXTRACE" record -F 0 -p "$PY_PID" -o "$TMP/p.trace" 2>"$TMP/rec.err" &
	rec=$!
	until grep -q "recording" "$TMP/rec.err" 2>/dev/null; do sleep 0.2; done
	sleep 0.5
	s0=$(prog_stats btf_switch); w0=$(prog_stats btf_waking)
	echo go >&"${PY[1]}"
	wait "$PY_PID" || true
	s1=$(prog_stats btf_switch); w1=$(prog_stats btf_waking)
	kill -INT "$rec" 2>/dev/null || true	# it ends by itself once its target has
	wait "$rec" || true
	sysctl -qw kernel.bpf_stats_enabled=0
	awk -v a="$s0" -v b="$s1" -v c="$w0" -v d="$w1" 'BEGIN {
		split(a, x, " "); split(b, y, " "); split(c, u, " "); split(d, v, " ");
		printf "  switch program: %.0f ns per run over %d runs; waking program: %.0f ns per run over %d runs\n",
			(y[2] - x[2]) / (y[4] - x[4]), y[4] - x[4], (v[2] - u[2]) / (v[4] - u[4]), v[4] - u[4] }'
	grep -E "python:" "$TMP/rec.err" || true
done
