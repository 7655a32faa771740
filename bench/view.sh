#!/usr/bin/env bash
# view.sh - what it costs to look at a big recording: 30 s of `perf bench sched messaging`
# recorded system-wide, then, for Go 1.19's and Go 1.23's `go tool trace`, the time until the
# viewer answers (it parses and splits the whole trace first), the time to serve the timeline's
# JSON (its first range when the viewer splits it) and the JSON's size, and, with Debian's
# chromium, the time and the memory the browser needs to show that timeline
# (bench/view_render.py). The same for a window of the recording cut out with `lxtrace cut`,
# when the lxtrace being measured has that command.
#
# Usage: bench/view.sh [--seconds N] [--window SECONDS] [--trace FILE] [--format FORMAT]
#                      [--no-browser] [--keep DIR]
#   --seconds N      length of the recording (default 30)
#   --format FORMAT  record in go1.19 (default) or go1.23 (then Go 1.23's viewer only, no window)
#   --window S       length of the cut window, taken from the middle (default 3; 0: none)
#   --trace FILE     measure FILE instead of recording one
#   --no-browser     viewers only
#   --keep DIR       keep the traces, the viewers' logs and screenshots in DIR
# Run as root (recording needs it); needs build/lxtrace, perf, curl, python3, both Go
# toolchains, and chromium for the browser columns (make deps). Not a test: figures on a
# shared 2-vCPU VM are noisy (docs/bench.md).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
RENDER=$ROOT/bench/view_render.py
SECONDS_REC=30
WINDOW=3
TRACE=
FORMAT=go1.19
BROWSER=1
KEEP=

while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECONDS_REC=$2; shift ;;
	--window) WINDOW=$2; shift ;;
	--trace) TRACE=$2; shift ;;
	--format) FORMAT=$2; shift ;;
	--no-browser) BROWSER=0 ;;
	--keep) KEEP=$2; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "view.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "view.sh: $*" >&2; exit 1; }
for t in curl python3; do
	command -v $t >/dev/null || die "$t not found (make deps)"
done
declare -A GOROOTS=([1.19]=/usr/lib/go-1.19 [1.23]=/usr/lib/go-1.23)
for v in 1.19 1.23; do
	[ -x "${GOROOTS[$v]}/pkg/tool/linux_amd64/trace" ] || die "Go $v's trace tool not found (make deps)"
done
if [ "$BROWSER" = 1 ] && ! command -v chromium >/dev/null; then
	echo "view.sh: chromium not found: no browser columns (make deps)" >&2
	BROWSER=0
fi
if [ -z "$TRACE" ]; then
	[ "$(id -u)" = 0 ] || die "must run as root to record (or give --trace FILE)"
	command -v perf >/dev/null || die "perf not found (make deps)"
	[ -x "$LXTRACE" ] || die "$LXTRACE not built (make)"
fi

TMP=$(mktemp -d /tmp/lxtrace-view.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
PIDS=()

# Whatever happens, no recorder, workload or viewer of ours outlives the script.
cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP" && cp -r "$TMP"/. "$KEEP/" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

now() { date +%s.%N; }
secs() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }

# 30 s of messaging (400 tasks on 2 CPUs, blocking socket reads and writes) recorded with
# lxtrace's defaults: the busy machine the goal is about.
record() {
	local out=$TMP/messaging.trace
	"$LXTRACE" record --format="$FORMAT" -d "$SECONDS_REC" -o "$out" --ready-fd 3 3>"$TMP/ready" \
		2>"$TMP/record.log" &
	PIDS+=($!)
	local rec=$!
	read -r -t 30 _ <"$TMP/ready" || die "lxtrace record did not start: $(cat "$TMP/record.log")"
	timeout "$((SECONDS_REC - 1))" bash -c \
		'while :; do perf bench sched messaging -l 100000 >/dev/null 2>&1; done' || true
	wait "$rec" || die "lxtrace record failed: $(cat "$TMP/record.log")"
	grep -E ' s, [0-9]+ records|records lost:' "$TMP/record.log" | sed 's/^ */  /' >&2
	TRACE=$out
}

# A window of the recording from its middle, as a trace of its own.
cut_window() {
	local from to out=$TMP/window.trace
	"$LXTRACE" cut --help >/dev/null 2>&1 || { echo "view.sh: $LXTRACE has no cut command: no window" >&2; return 1; }
	from=$(python3 -c "print(max(0, $SECONDS_REC / 2 - $WINDOW / 2))")
	to=$(python3 -c "print($from + $WINDOW)")
	"$LXTRACE" cut "$1" --from "$from" --to "$to" -o "$out" >&2 || die "lxtrace cut failed"
	echo "$out"
}

# Measures file $1 in viewer $2 (1.19 or 1.23); prints one table row.
measure() {
	local file=$1 ver=$2 port t0 t1 t2 page link ranges json size log shown=- mem=- result
	port=$(free_port)
	log=$TMP/viewer-$ver-$(basename "$file").log
	t0=$(now)
	GOROOT=${GOROOTS[$ver]} BROWSER=true "${GOROOTS[$ver]}/pkg/tool/linux_amd64/trace" \
		-http=127.0.0.1:$port "$file" >"$log" 2>&1 &
	PIDS+=($!)
	local viewer=$!
	until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
		kill -0 "$viewer" 2>/dev/null || die "Go $ver viewer exited: $(tail -1 "$log")"
		sleep 0.05
	done
	t1=$(now)
	page=$(curl -s "http://127.0.0.1:$port/")
	# The first timeline link of the main page: the whole trace, or its first range.
	if [ "$ver" = 1.19 ]; then
		link=$(grep -o 'href="/trace[^"]*"' <<<"$page" | head -1)
		ranges=$(grep -c 'href="/trace?start=' <<<"$page" || true)
	else
		link=$(grep -o 'href="/trace?view=proc[^"]*"' <<<"$page" | head -1)
		ranges=$(grep -c 'href="/trace?view=proc&amp;start=' <<<"$page" || true)
	fi
	link=${link#href=\"}
	link=${link%\"}
	link=${link//&amp;/\&}
	json=/jsontrace${link#/trace}
	size=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$port$json")
	t2=$(now)
	if [ "$BROWSER" = 1 ]; then
		result=$(python3 "$RENDER" "http://127.0.0.1:$port$link" --png "$TMP/$(basename "$file")-$ver.png" || true)
		shown=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$result")
		mem=$(sed -n 's/.*mem_mib=\([0-9]*\).*/\1/p' <<<"$result")
		grep -q 'state=shown' <<<"$result" || shown="$shown ($(sed -n 's/state=\([^ ]*\).*/\1/p' <<<"$result"))"
	fi
	kill "$viewer" 2>/dev/null || true
	wait "$viewer" 2>/dev/null || true
	printf '| %s | %s | %s | %s | %s | %s | %.1f | %s | %s |\n' "$(basename "$file")" \
		"$(($(stat -c %s "$file") / 1000)) kB" "$ver" "${ranges:-0}" "$(secs "$t0" "$t1")" \
		"$(secs "$t1" "$t2")" "$(python3 -c "print($size / 1e6)")" "$shown" "$mem"
}

[ -n "$TRACE" ] || record
FILES=("$TRACE")
VIEWERS="1.19 1.23"
# Go 1.19 cannot read the go1.23 format, nor lxtrace cut (yet).
if [ "$(head -c 13 "$TRACE")" != "go 1.19 trace" ]; then
	VIEWERS=1.23
	WINDOW=0
fi
if [ "$WINDOW" != 0 ] && window=$(cut_window "$TRACE"); then
	FILES+=("$window")
fi

echo "| file | size | viewer | ranges | viewer ready s | JSON served s | JSON MB | browser s | browser MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in "${FILES[@]}"; do
	for v in $VIEWERS; do
		measure "$f" "$v"
	done
done
