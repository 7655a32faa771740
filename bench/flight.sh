#!/usr/bin/env bash
# flight.sh - what the flight recorder (lxtrace record --flight-recorder) costs and holds:
#   idle   its cost while no trigger fires, against plain `lxtrace record` with the same
#          options in the same run: messaging's wall time and the recorder's own CPU time;
#   memory the window's memory per second of trace at messaging load (default options and
#          --syscalls=all), the recorder's RSS against plain record's, and that a 60 s run
#          under a small --flight-size never passes it;
#   file   the time from a trigger (SIGUSR1) to its file complete on disk, at messaging load.
#
# Method (docs/bench.md): ratios measured side by side in one run; runs alternated (A B C C B A)
# and medians quoted. The window's bytes and memory (its pages in memory, mincore) are what the
# recorder's summary reports; the recorder's whole RSS is sampled every second.
#
# Usage: bench/flight.sh [--quick] [--pairs N] [--parts "idle memory file"] [--seconds S]
# Run as root from anywhere; needs build/lxtrace (make), perf and python3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
PAIRS=3
PARTS="idle memory file"
SECONDS_RUN=60
MSG="perf bench sched messaging -g 4 -l 500"

while [ $# -gt 0 ]; do
	case $1 in
	--quick) PAIRS=2; SECONDS_RUN=20 ;;
	--pairs) PAIRS=$2; shift ;;
	--parts) PARTS=$2; shift ;;
	--seconds) SECONDS_RUN=$2; shift ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "flight.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "flight.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (tracers need it)"
for t in perf python3; do command -v $t >/dev/null || die "$t not found (make deps)"; done
[ -x "$LXTRACE" ] || die "$LXTRACE not built (make)"

TMP=$(mktemp -d /tmp/lxtrace-flight.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
TRACER_PID=
LOAD_PID=
cleanup() {
	for p in $LOAD_PID $TRACER_PID; do
		kill -INT "$p" 2>/dev/null || true
	done
	for p in $LOAD_PID $TRACER_PID; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ns() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Starts `lxtrace record ARGS...` with stderr in $TMP/rec.err; waits until it records.
start_rec() {
	"$LXTRACE" record --ready-fd 3 "$@" 3>"$TMP/ready" 2>"$TMP/rec.err" &
	TRACER_PID=$!
	read -r -t 30 _ <"$TMP/ready" || { cat "$TMP/rec.err" >&2; die "lxtrace did not start"; }
}

# CPU seconds the recorder used so far (utime + stime).
rec_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$TRACER_PID/stat"
}

stop_rec() {
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" || die "lxtrace exited with status $?: $(cat "$TMP/rec.err")"
	TRACER_PID=
}

# The recorder's resident memory in bytes.
rss_bytes() {
	awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$TRACER_PID/status"
}

# Messaging in a loop for $1 seconds, in the background.
load_for() {
	( end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do $MSG >/dev/null 2>&1; done ) &
	LOAD_PID=$!
}

part_idle() {
	local mode out w0 w1 cpu
	echo "## idle: messaging under plain record and under the flight recorder (no trigger fires)"
	echo "round	mode	wall_s	recorder_cpu_s"
	for pair in $(seq "$PAIRS"); do
		for mode in none plain flight flight plain none; do
			out=$TMP/idle.out
			case $mode in
			plain) start_rec -o "$out" ;;
			# A trigger the model checks at every start and that never fires.
			flight) start_rec -o "$out" --flight-recorder=10 \
					--trigger 'sched-latency>10s,comm=nosuchthread' ;;
			esac
			w0=$(now_ns)
			$MSG >/dev/null 2>&1
			w1=$(now_ns)
			cpu=-
			if [ "$mode" != none ]; then
				cpu=$(rec_cpu)
				stop_rec
			fi
			echo "$pair	$mode	$(awk -v d=$((w1 - w0)) 'BEGIN { printf "%.3f", d / 1e9 }')	$cpu"
		done
	done | tee "$TMP/idle.tsv"
	for mode in none plain flight; do
		printf "median %-6s wall %s s" "$mode" \
			"$(awk -v m=$mode '$2 == m { print $3 }' "$TMP/idle.tsv" | median)"
		[ "$mode" = none ] || printf ", recorder CPU %s s" \
			"$(awk -v m=$mode '$2 == m { print $4 }' "$TMP/idle.tsv" | median)"
		echo
	done
}

# The recorder's RSS every second for $1 s of messaging; prints "first max last" in MiB.
sample_rss() {
	local first= max=0 b=0
	load_for "$1"
	for _ in $(seq "$1"); do
		sleep 1
		b=$(rss_bytes)
		[ -n "$first" ] || first=$b
		[ "$b" -gt "$max" ] && max=$b
	done
	wait "$LOAD_PID" || true
	LOAD_PID=
	awk -v f="$first" -v m="$max" -v l="$b" 'BEGIN { printf "%.1f %.1f %.1f", f / 1048576, m / 1048576, l / 1048576 }'
}

# "window: ... MiB held, at most H of ..." of the summary: the most the window held.
held_mib() {
	sed -n 's/^ *window:.* at most \([0-9.]*\) of .*/\1/p' "$TMP/rec.err"
}

part_memory() {
	local opts r
	echo "## memory: a 10 s window at messaging load for ${SECONDS_RUN} s (memory per second of window)"
	for opts in "" "--syscalls=all"; do
		start_rec -o "$TMP/mem.out" $opts
		r=$(sample_rss "$SECONDS_RUN")
		stop_rec
		echo "${opts:-default options}, plain record: recorder RSS first/max/last $r MiB"
		start_rec -o "$TMP/mem.out" --flight-recorder=10 --flight-size 1024 $opts
		r=$(sample_rss "$SECONDS_RUN")
		stop_rec
		echo "${opts:-default options}, flight recorder: at most $(held_mib) MiB held for 10 s:" \
		     "$(awk -v h="$(held_mib)" 'BEGIN { printf "%.2f", h / 10 }') MiB per second of window;" \
		     "recorder RSS first/max/last $r MiB"
		grep -E "records lost|window:" "$TMP/rec.err" | sed 's/^ */  /'
	done
	echo "## memory: --flight-size 16 for ${SECONDS_RUN} s of messaging (the bound)"
	start_rec -o "$TMP/mem.out" --flight-recorder=30 --flight-size 16 --syscalls=all
	r=$(sample_rss "$SECONDS_RUN")
	stop_rec
	echo "recorder RSS first/max/last $r MiB"
	grep -E "window:" "$TMP/rec.err" | sed 's/^ */  /'
}

part_file() {
	local n t0 t1 name
	echo "## file: SIGUSR1 -> file complete on disk, 10 s window at messaging load"
	start_rec -o "$TMP/f.out" --flight-recorder=10 --min-gap 0
	load_for 45
	sleep 12
	for n in 1 2 3; do
		name=$(printf '%s/f-%03d.out' "$TMP" "$n")
		t0=$(now_ns)
		kill -USR1 "$TRACER_PID"
		# Complete once the recorder says it wrote it.
		until grep -q "f-$(printf %03d "$n").out: .* into the recording" "$TMP/rec.err"; do sleep 0.005; done
		t1=$(now_ns)
		echo "file $n: $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.0f", d / 1e6 }') ms from the signal; recorder: $(grep -o "f-$(printf %03d "$n").out: .*" "$TMP/rec.err")"
		sleep 8
	done
	wait "$LOAD_PID" || true
	LOAD_PID=
	stop_rec
	grep -E "records lost" "$TMP/rec.err" | sed 's/^ */  /'
}

echo "flight.sh: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $LXTRACE"
for part in $PARTS; do
	"part_$part"
done
