#!/usr/bin/env bash
# mmaps.sh - what a process's changes of its code mappings cost it under lxtrace: N executable
# mmaps of a file (tests/workloads/mapchurn: N maps, N/2 unmaps, N/2 maps at the freed
# addresses, N/2 unmaps), untraced and under `lxtrace record -- mapchurn N 0`, side by side.
# The workload times its changes itself (stat churn_us), so lxtrace's start and end are not in
# the figure.
#
# Method (docs/bench.md): alternate untraced and traced runs (A B B A ...), medians with
# min..max, and the traced cost per change ((traced - untraced) / (2.5 N)).
#
# Usage: bench/mmaps.sh [--pairs N] [--counts "4000 20000"] [--old LXTRACE]
# --old: another build of lxtrace (before a change), whose runs alternate with this one's.
# Run as root; needs build/lxtrace and build/tests/workloads/mapchurn (make).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
MAPCHURN=$ROOT/build/tests/workloads/mapchurn
PAIRS=5
COUNTS="4000 20000"
OLD=

while [ $# -gt 0 ]; do
	case $1 in
	--pairs) PAIRS=$2; shift ;;
	--counts) COUNTS=$2; shift ;;
	--old) OLD=$2; shift ;;
	-h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mmaps.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "mmaps.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] && [ -x "$MAPCHURN" ] || die "build first (make)"
[ -z "$OLD" ] || [ -x "$OLD" ] || die "--old: '$OLD' is not an executable"

TMP=$(mktemp -d /tmp/lxtrace-mmaps.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One run: the workload's own time for its changes, in ms.
run() {
	local mode=$1 n=$2 out
	case $mode in
	untraced) out=$("$MAPCHURN" "$n" 0) ;;
	lxtrace) out=$("$LXTRACE" record -o "$TMP/t.trace" -- "$MAPCHURN" "$n" 0 2>/dev/null) ;;
	old) out=$("$OLD" record -o "$TMP/t.trace" -- "$MAPCHURN" "$n" 0 2>/dev/null) ;;
	esac
	awk '$1 == "stat" && $2 == "churn_us" { printf "%.1f\n", $3 / 1000 }' <<<"$out"
}

MODES="untraced lxtrace"
[ -z "$OLD" ] || MODES="$MODES old"
for n in $COUNTS; do
	for ((p = 0; p < PAIRS; p++)); do
		# A B B A: neither side always runs first.
		order=$MODES
		((p % 2)) && order=$(tr ' ' '\n' <<<"$MODES" | tac | tr '\n' ' ')
		for m in $order; do
			printf "%s %s\n" "$m" "$(run "$m" "$n")" >>"$TMP/$n.tsv"
		done
	done
	base=$(awk '$1 == "untraced" { print $2 }' "$TMP/$n.tsv" | median)
	for m in $MODES; do
		vals=$(awk -v m="$m" '$1 == m { print $2 }' "$TMP/$n.tsv")
		med=$(median <<<"$vals")
		printf "%6d mmaps  %-9s %9.1f ms (%s..%s)" "$n" "$m" "$med" \
			"$(sort -n <<<"$vals" | head -1)" "$(sort -n <<<"$vals" | tail -1)"
		if [ "$m" != untraced ]; then
			awk -v t="$med" -v b="$base" -v n="$n" 'BEGIN { printf "  %.2fx, %.2f us per change",
				(b > 0 ? t / b : 0), (t - b) * 1000 / (2.5 * n) }'
		fi
		echo
	done
done
