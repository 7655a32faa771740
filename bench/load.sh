#!/usr/bin/env bash
# load.sh - lxtrace and perf record on a busy machine (scripts/load.sh: CPU hogs beyond the
# cores, exec churn of distinct binaries, direct-IO reads, the page cache dropped every 5 s),
# in turn: a whole-machine recording of D seconds at F Hz with call stacks, each tool's
#
#   start   from its exec to recording (lxtrace: its --ready-fd line; perf: its whole run less
#           D and its stop, as perf says no "ready")
#   stop    from the end of D to the file complete and the tool exited (lxtrace: from its
#           SIGINT, sent D s after its ready line)
#   named   the share of CPU samples whose leaf frame has a name (not [unknown], not an
#           address in a file): lxtrace's folded CPU profile, perf script's symbols
#   whole   lxtrace's share with no frame unnamed and none cut ([truncated]); perf's
#           frame-pointer walk drops the callers of frameless code unmarked, so it has none
#   rss     the tool's peak resident memory (its wait4 rusage, GNU time)
#   cpu     lxtrace's CPU (user and system, all its threads) per record it wrote, in us
#
# Method (docs/bench.md): the tools alternate, RUNS times each; medians with min..max. With
# --old LXTRACE another build runs each round too, beside this one, in the same load.
# Usage: bench/load.sh [--runs N] [--duration D] [--freq F] [--old LXTRACE]
#        (LXTRACE= names another binary)
# Run as root; needs build/lxtrace (make), perf and GNU time (make deps).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
RUNS=${RUNS:-3}
D=${D:-8}
F=${F:-999}
OLD=${OLD:-}

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--duration) D=$2; shift ;;
	--freq) F=$2; shift ;;
	--old) OLD=$2; shift ;;
	-h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--inner) shift; break ;;
	*) echo "load.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "load.sh: $*" >&2; exit 1; }

# Outside the load: start it, and run this script again inside it.
if [ "${LOAD_SH_INNER:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || die "must run as root"
	[ -x "$LXTRACE" ] || die "build first (make)"
	[ -z "$OLD" ] || [ -x "$OLD" ] || die "--old $OLD: not an executable"
	command -v perf >/dev/null || die "perf not found (make deps)"
	[ -x /usr/bin/time ] || die "GNU time not found (make deps)"
	LOAD_SH_INNER=1 exec bash "$ROOT/scripts/load.sh" --quiet -- \
		env LOAD_SH_INNER=1 RUNS="$RUNS" D="$D" F="$F" LXTRACE="$LXTRACE" OLD="$OLD" \
		bash "$0" --inner
fi

TMP=$(mktemp -d /tmp/lxtrace-loadbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkfifo "$TMP/ready"
# Let the load settle: the hogs queued, the cache dropped once.
sleep 6

now_ms() { echo $(($(date +%s%N) / 1000000)); }
peak_kb() { awk '/Maximum resident set size/ { print $NF }' "$1"; }

# The share (percent) of samples, folded "ROOT;...;LEAF COUNT" lines, whose leaf frame is named
# (not [unknown], not shed unsymbolized by a recorder behind, not a bare address or one in a
# file, FILE+0x...); with "whole", none of whose
# frames is unnamed and none [truncated].
named_share() {
	awk -v whole="${2:-}" '{ n = $NF; all += n; $NF = ""; sub(/ +$/, "")
	       k = split($0, f, ";"); leaf = f[k]
	       bad = leaf ~ /\[unknown\]|\[not symbolized|\+0x[0-9a-f]+$|^0x[0-9a-f]+$/
	       if (whole != "")
		       bad = $0 ~ /\[unknown\]|\[not symbolized|\[truncated(\]|:)|\+0x[0-9a-f]+(;|$)|(^|;)0x[0-9a-f]+(;|$)/
	       if (!bad) ok += n }
	     END { printf "%.1f\n", all ? 100 * ok / all : 0 }' "$1"
}

# The CPU (s) GNU time measured, user and system.
cpu_s() { awk -F': ' '/(User|System) time \(seconds\)/ { t += $2 } END { print t + 0 }' "$1"; }

# One recording by lxtrace binary $1: "start stop named whole rss cpu_us_per_record".
one_lxtrace() {
	local lx=$1 out=$TMP/lx.trace t0 tready tstop tend pid lxpid records
	rm -f "$out"
	t0=$(now_ms)
	/usr/bin/time -v -o "$TMP/lx.time" "$lx" record -F "$F" -o "$out" \
		--ready-fd 3 3>"$TMP/ready" 2>"$TMP/lx.log" &
	pid=$!
	read -r -t 120 _ <"$TMP/ready" || die "lxtrace did not start: $(cat "$TMP/lx.log")"
	tready=$(now_ms)
	# Stopped as a person does, D s after it said it records: -d counts from before the
	# ready line, which a busy start takes seconds to reach, and its end is not seen here.
	sleep "$D"
	tstop=$(now_ms)
	lxpid=$(pgrep -P $pid -x lxtrace || echo $pid)
	kill -INT "$lxpid"
	# A stop that never ends is a result, not a bench that hangs (main e90a861 did, twice,
	# spinning after its summary under this load beside kernel tests).
	for _ in $(seq 1200); do
		kill -0 "$lxpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$lxpid" 2>/dev/null && { kill -KILL "$lxpid"; wait $pid
		die "$lx did not exit 120 s after its SIGINT: $(tail -n 2 "$TMP/lx.log")"; }
	wait $pid || die "lxtrace failed: $(tail -n 3 "$TMP/lx.log")"
	tend=$(now_ms)
	"$lx" pprof "$out" --cpu --folded -o "$TMP/lx.folded" 2>/dev/null ||
		die "lxtrace pprof failed"
	records=$(sed -n 's/.*: [0-9.]* s, \([0-9]*\) records.*/\1/p' "$TMP/lx.log" | head -n 1)
	echo "$((tready - t0)) $((tend - tstop)) $(named_share "$TMP/lx.folded")" \
		"$(named_share "$TMP/lx.folded" whole) $(($(peak_kb "$TMP/lx.time") / 1024))" \
		"$(awk -v c="$(cpu_s "$TMP/lx.time")" -v r="${records:-0}" \
			'BEGIN { printf "%.1f", r ? c * 1e6 / r : 0 }')"
}

one_perf() {
	local t0 tend
	t0=$(now_ms)
	/usr/bin/time -v -o "$TMP/perf.time" perf record -q -a -g -F "$F" -o "$TMP/perf.data" \
		-- sleep "$D" 2>"$TMP/perf.log" || die "perf record failed: $(tail -n 3 "$TMP/perf.log")"
	tend=$(now_ms)
	# Folded as lxtrace's: the callchain's frames leaf first, each sample one line of weight 1.
	# perf 6.1 prints nothing for -F sym alone: each frame is "ADDRESS SYMBOL", the symbol
	# "[unknown]" where it has none.
	perf script -i "$TMP/perf.data" -F ip,sym 2>/dev/null | awk '
		/^$/ { if (n) { line = ""; for (i = n; i >= 1; i--) line = line (line == "" ? "" : ";") fr[i]; print line " 1" } n = 0; next }
		{ sub(/^[ \t]*[0-9a-f]+ /, ""); fr[++n] = $0 }' >"$TMP/perf.folded"
	echo "$((tend - t0 - D * 1000)) $(named_share "$TMP/perf.folded")" \
		"$(($(peak_kb "$TMP/perf.time") / 1024))"
}

# median (min..max) of the numbers on stdin
stats() {
	sort -n | awk '{v[NR]=$1} END {if (!NR) {print "-"; exit}
		m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%g (%g..%g)\n", m, v[1], v[NR]}'
}

# Each build's figures go to files named by its tag: new (LXTRACE) and old (--old).
run_lx() {
	local tag=$1 lx=$2 s e n w r c
	read -r s e n w r c < <(one_lxtrace "$lx")
	for f in s:"$s" e:"$e" n:"$n" w:"$w" r:"$r" c:"$c"; do
		echo "${f#*:}" >>"$TMP/$tag.${f%%:*}"
	done
	echo "run $i: lxtrace ($tag) start $s ms, stop $e ms, named $n% (whole $w%), $r MiB," \
		"$c us CPU a record" >&2
}

row() {
	echo "| $1 | $(stats <"$TMP/$2.s") | $(stats <"$TMP/$2.e") | $(stats <"$TMP/$2.n") |" \
		"$(stats <"$TMP/$2.w") | $(stats <"$TMP/$2.r") | $(stats <"$TMP/$2.c") |"
}

for f in ps pn pr; do : >"$TMP/$f"; done
for i in $(seq "$RUNS"); do
	[ -z "$OLD" ] || run_lx old "$OLD"
	run_lx new "$LXTRACE"
	read -r s n r < <(one_perf)
	echo "$s" >>"$TMP/ps"; echo "$n" >>"$TMP/pn"; echo "$r" >>"$TMP/pr"
	echo "run $i: perf start+stop $s ms, named $n%, $r MiB" >&2
done
echo "## Under load (scripts/load.sh), whole machine, -F $F, $D s: median (min..max) of $RUNS"
echo "| tool | start, ms | stop, ms | samples named, % | whole, % | peak RSS, MiB | CPU a record, us |"
echo "|---|---|---|---|---|---|---|"
[ -z "$OLD" ] || row "lxtrace (old: $OLD)" old
row lxtrace new
echo "| perf record -a -g | start + stop: $(stats <"$TMP/ps") | | $(stats <"$TMP/pn") | | $(stats <"$TMP/pr") | |"
