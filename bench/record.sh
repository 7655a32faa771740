#!/usr/bin/env bash
# record.sh - what system-wide tracing costs a workload: lxtrace record (default and
# --syscalls=all, each in both formats) against perf record and trace-cmd record on the same
# tracepoints.
#
# Method (docs/bench.md): for each workload and tracer, alternate untraced (A) and traced (B)
# runs, A B B A ..., and compare medians; count the events each tracer captured and lost, the
# bytes it wrote per event, and the CPU the whole machine spent (/proc/stat) while the workload
# ran, since with 2 vCPUs the tracer's reader competes with the workload.
#
# Usage: bench/record.sh [--quick] [--pairs N] [--tracers "lxtrace lxtrace-go123 lxtrace-all
#                        lxtrace-all-go123 perf trace-cmd"]
#                        [--workloads "pipe syscall messaging"] [--keep DIR] [--old LXTRACE]
# Tracers also: lxtrace-compat (-F 0 --stacks=none on what a 5.10 kernel gives the programs,
# LXTRACE_MASK_FEATURES); with --old LXTRACE, another build (before a change) as old-lxtrace,
# old-lxtrace-all, old-lxtrace-all-go123, old-lxtrace-compat.
# Run as root from anywhere; needs build/lxtrace (make), perf, trace-cmd, taskset, python3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
PAIRS=5
QUICK=0
TRACERS="lxtrace lxtrace-go123 lxtrace-all lxtrace-all-go123 perf trace-cmd"
WORKLOADS="pipe syscall messaging"
KEEP=
OLD=
# What a 5.10 kernel lacks (docs/record.md, "Kernels").
MASK_5_10=modern,switch_state,exit_group,vma_iter,mmap_tp,sleepable_uprobe,bpf_cookie

while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; PAIRS=2 ;;
	--pairs) PAIRS=$2; shift ;;
	--tracers) TRACERS=$2; shift ;;
	--workloads) WORKLOADS=$2; shift ;;
	--keep) KEEP=$2; shift ;;
	--old) OLD=$2; shift ;;
	-h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "record.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ "$QUICK" = 1 ]; then
	PIPE_N=50000 SYS_N=1000000 MSG_GROUPS=4 MSG_LOOPS=100
else
	PIPE_N=200000 SYS_N=5000000 MSG_GROUPS=4 MSG_LOOPS=500
fi

die() { echo "record.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (tracers need it)"
for t in perf trace-cmd taskset python3; do
	command -v $t >/dev/null || die "$t not found (make deps)"
done
case " $TRACERS " in *" lxtrace"*) [ -x "$LXTRACE" ] || die "$LXTRACE not built (make)" ;; esac
case " $TRACERS " in *" old-lxtrace"*) [ -x "$OLD" ] || die "old-lxtrace needs --old LXTRACE" ;; esac

TMP=$(mktemp -d /tmp/lxtrace-bench.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
RESULTS=$TMP/results.tsv
TRACER_PID=

# Whatever happens, no tracer of ours outlives the script and no temp file stays behind.
cleanup() {
	if [ -n "$TRACER_PID" ] && kill -0 "$TRACER_PID" 2>/dev/null; then
		kill -INT "$TRACER_PID" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$TRACER_PID" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$TRACER_PID" 2>/dev/null || true
		wait "$TRACER_PID" 2>/dev/null || true
	fi
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP" && cp "$RESULTS" "$KEEP/" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

workload_cmd() {
	case $1 in
	pipe) echo "taskset -c 1 perf bench sched pipe -l $PIPE_N" ;;
	syscall) echo "perf bench syscall basic -l $SYS_N" ;;
	messaging) echo "perf bench sched messaging -g $MSG_GROUPS -l $MSG_LOOPS" ;;
	*) die "unknown workload '$1'" ;;
	esac
}

# A leftover tracer (an orphaned trace-cmd reading trace_pipe_raw, another perf or lxtrace)
# steals or adds work: wait for the machine to be free of them, up to a minute.
other_tracers() {
	for name in perf trace-cmd lxtrace bpftrace; do pgrep -x "$name" || true; done | while read -r p; do
		# perf bench is a workload, not a tracer.
		grep -qa 'bench' /proc/$p/cmdline 2>/dev/null || echo "$p"
	done
}
wait_quiet() {
	for _ in $(seq 60); do
		[ -z "$(other_tracers)" ] && return 0
		sleep 1
	done
	echo "record.sh: warning: other tracers still running: $(other_tracers | tr '\n' ' ')" >&2
}

# Busy jiffies of all CPUs (everything but idle and iowait).
cpu_busy() {
	awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# Runs workload $1 once; prints "wall_ns busy_jiffies".
run_workload() {
	local cmd b0 b1 t0 t1
	cmd=$(workload_cmd "$1")
	b0=$(cpu_busy); t0=$(date +%s%N)
	$cmd >/dev/null 2>&1 || die "workload failed: $cmd"
	t1=$(date +%s%N); b1=$(cpu_busy)
	echo "$((t1 - t0)) $((b1 - b0))"
}

# Starts tracer $1 writing $2 (stderr in $2.err) and waits until it is recording.
start_tracer() {
	local tracer=$1 out=$2 lx=$LXTRACE
	case $tracer in old-*) lx=$OLD; tracer=${tracer#old-} ;; esac
	case $tracer in
	# The same events as perf and trace-cmd are asked for: no call stacks, no CPU samples
	# (their cost is measured by bench/stacks.sh).
	lxtrace) "$lx" record -F 0 --stacks=none -o "$out" --ready-fd 3 3>"$TMP/ready" \
		>"$out.err" 2>&1 & ;;
	lxtrace-all) "$lx" record -F 0 --stacks=none --syscalls=all -o "$out" --ready-fd 3 \
		3>"$TMP/ready" >"$out.err" 2>&1 & ;;
	# The same in the go1.23 format (docs/format.md §18).
	lxtrace-go123) "$lx" record --format=go1.23 -F 0 --stacks=none -o "$out" --ready-fd 3 \
		3>"$TMP/ready" >"$out.err" 2>&1 & ;;
	lxtrace-all-go123) "$lx" record --format=go1.23 -F 0 --stacks=none --syscalls=all \
		-o "$out" --ready-fd 3 3>"$TMP/ready" >"$out.err" 2>&1 & ;;
	lxtrace-compat) LXTRACE_MASK_FEATURES=$MASK_5_10 "$lx" record -F 0 --stacks=none -o "$out" \
		--ready-fd 3 3>"$TMP/ready" >"$out.err" 2>&1 & ;;
	perf) perf record -q -e sched:sched_switch -e sched:sched_wakeup \
		-e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -a -o "$out" >"$out.err" 2>&1 & ;;
	trace-cmd) trace-cmd record --no-filter -d -e sched:sched_switch -e sched:sched_wakeup \
		-e raw_syscalls -o "$out" >"$out.err" 2>&1 & ;;
	*) die "unknown tracer '$tracer'" ;;
	esac
	TRACER_PID=$!
	# lxtrace says when its programs are attached. perf record only writes its header first,
	# and trace-cmd buffers its "Hit Ctrl^C" line, but creates its per-CPU files once its
	# readers run: then give either half a second more.
	local file=$out
	case $tracer in
	lxtrace*)
		read -r -t 30 _ <"$TMP/ready" && return 0
		cat "$out.err" >&2
		die "$tracer did not start" ;;
	trace-cmd) file=$out.cpu0 ;;
	esac
	for _ in $(seq 150); do
		kill -0 "$TRACER_PID" 2>/dev/null || { cat "$out.err" >&2; die "$tracer exited before recording"; }
		if [ -e "$file" ]; then
			sleep 0.5
			return 0
		fi
		sleep 0.1
	done
	echo "record.sh: warning: $tracer never said it was ready; going on" >&2
}

# SIGINT, wait; sets STOP_MS to the time it took to finish writing. Not in a subshell: only
# this shell can wait for its child. perf record exits 130 (interrupted) after writing a
# complete file, and trace-cmd 3.1.6 exits 1 at cleanup: their statuses are not checked.
stop_tracer() {
	local tracer=${1#old-} out=$2 t0 t1 rc=0
	t0=$(date +%s%N)
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" || rc=$?
	t1=$(date +%s%N)
	TRACER_PID=
	if [ "$rc" != 0 ] && [ "${tracer#lxtrace}" != "$tracer" ]; then
		cat "$out.err" >&2
		die "$tracer exited with status $rc"
	fi
	STOP_MS=$(( (t1 - t0) / 1000000 ))
}

# Prints "events lost bytes" for the file tracer $1 wrote at $2: events captured (kernel
# records), events lost, bytes per the file (trace-cmd: uncompressed ring-buffer bytes).
tracer_stats() {
	local tracer=${1#old-} out=$2
	case $tracer in
	lxtrace*)
		# Its summary: "lxtrace: FILE: 1.0 s, N records (R/s)" and "  records lost:  N ...".
		awk '/ records \([0-9.]+\/s\)/ { for (i = 1; i < NF; i++) if ($(i + 1) == "records") ev = $i }
		     /^ *records lost:/ { lost = $3 }
		     END { printf "%d %d ", ev, lost }' "$out.err"
		stat -c %s "$out"
		;;
	perf)
		perf report --stats -i "$out" 2>/dev/null | awk '
			/stats:$/ { inev = 1 }
			inev && /SAMPLE events:/ { ev += $3 }
			inev && /LOST_SAMPLES events:/ { lost += $3 }
			END { printf "%d %d ", ev, lost }'
		stat -c %s "$out"
		;;
	trace-cmd)
		trace-cmd report --stat -i "$out" 2>/dev/null | awk '
			/^read events:/ { ev += $3 }
			/^overrun:/ { lost += $2 }
			/^dropped events:/ { lost += $3 }
			END { printf "%d %d ", ev, lost }'
		# Ring-buffer bytes before trace-cmd compresses them, as recorded.
		awk '/uncompressed/ { gsub(/[()]/, ""); raw += $(NF-1) } END { print raw + 0 }' "$out.err"
		;;
	esac
}

echo -e "workload\ttracer\tkind\tpair\twall_ns\tbusy_jiffies\tevents\tlost\tbytes\tstop_ms" >"$RESULTS"
echo "record.sh: $PAIRS pairs per tracer and workload; tracers: $TRACERS; workloads: $WORKLOADS" >&2
echo "record.sh: pipe -l $PIPE_N, syscall -l $SYS_N, messaging -g $MSG_GROUPS -l $MSG_LOOPS" >&2
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

run_pair_half() {
	local w=$1 tracer=$2 kind=$3 pair=$4 out m s events lost bytes
	wait_quiet
	if [ "$kind" = A ]; then
		m=$(run_workload "$w")
		echo -e "$w\t$tracer\tA\t$pair\t${m% *}\t${m#* }\t0\t0\t0\t0" >>"$RESULTS"
		return
	fi
	out=$TMP/$tracer.$w.$pair
	start_tracer "$tracer" "$out"
	m=$(run_workload "$w")
	stop_tracer "$tracer" "$out"
	s=$STOP_MS
	read -r events lost bytes < <(tracer_stats "$tracer" "$out")
	echo -e "$w\t$tracer\tB\t$pair\t${m% *}\t${m#* }\t$events\t$lost\t$bytes\t$s" >>"$RESULTS"
	rm -f "$out" "$out.err"
}

for w in $WORKLOADS; do
	run_workload "$w" >/dev/null	# warm caches and page tables
	for tracer in $TRACERS; do
		echo "record.sh: $w under $tracer" >&2
		for p in $(seq "$PAIRS"); do
			# A B B A: each pair's order flips so drift hits both sides alike.
			if [ $((p % 2)) = 1 ]; then order="A B"; else order="B A"; fi
			for kind in $order; do
				run_pair_half "$w" "$tracer" "$kind" "$p"
			done
		done
	done
done

python3 - "$RESULTS" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
hz = 100.0  # USER_HZ: /proc/stat jiffies
def med(xs): return st.median(xs) if xs else float("nan")
print()
print("| workload | tracer | untraced s (min..max) | traced s (min..max) | slowdown (pairs min..max) "
      "| ns/event | events captured | lost | B/event | CPU s untraced -> traced | stop s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
keys = []
for r in rows:
    k = (r["workload"], r["tracer"])
    if k not in keys: keys.append(k)
for w, t in keys:
    sel = [r for r in rows if r["workload"] == w and r["tracer"] == t]
    A = {int(r["pair"]): int(r["wall_ns"]) / 1e9 for r in sel if r["kind"] == "A"}
    B = {int(r["pair"]): int(r["wall_ns"]) / 1e9 for r in sel if r["kind"] == "B"}
    Bs = [r for r in sel if r["kind"] == "B"]
    ca = med([int(r["busy_jiffies"]) / hz for r in sel if r["kind"] == "A"])
    cb = med([int(r["busy_jiffies"]) / hz for r in Bs])
    ev = med([int(r["events"]) for r in Bs]); lost = med([int(r["lost"]) for r in Bs])
    by = med([int(r["bytes"]) for r in Bs]); stop = med([int(r["stop_ms"]) / 1e3 for r in Bs])
    ma, mb = med(list(A.values())), med(list(B.values()))
    ratios = [B[p] / A[p] for p in A if p in B and A[p] > 0]
    per_ev = (mb - ma) * 1e9 / (ev + lost) if ev + lost > 0 else float("nan")
    lost_pct = 100.0 * lost / (ev + lost) if ev + lost > 0 else 0.0
    print(f"| {w} | {t} | {ma:.3f} ({min(A.values()):.3f}..{max(A.values()):.3f}) "
          f"| {mb:.3f} ({min(B.values()):.3f}..{max(B.values()):.3f}) "
          f"| {mb / ma:.2f}x ({min(ratios):.2f}..{max(ratios):.2f}) | {per_ev:.0f} "
          f"| {ev:.0f} | {lost:.0f} ({lost_pct:.0f}%) | {by / ev if ev else float('nan'):.1f} "
          f"| {ca:.2f} -> {cb:.2f} | {stop:.2f} |")
print()
print("slowdown = median traced / median untraced wall time; ns/event = (traced - untraced median) "
      "/ (captured + lost); CPU = busy time of all CPUs during the workload (/proc/stat).")
print(f"load average before: {sys.argv[2]}; after: {sys.argv[3]} (other work on the machine skews "
      "every figure)")
EOF
