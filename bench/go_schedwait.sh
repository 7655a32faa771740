#!/usr/bin/env bash
# go_schedwait.sh - Go 1.23's /sched profile against its goroutine table, on a trace written by
# Go's own runtime/trace (bench/go_schedwait/main.go: two goroutines on one P with known
# waits): the profile skips the state transitions without a stack (GoStart has none in the
# format), so it counts a goroutine's runs as waits. Prints both totals; the same over-count
# in lxtrace's go1.23 files is the viewer's, not the file's (docs/format.md §18.6.1).
#
# Usage: bench/go_schedwait.sh [--go PATH]   (default /usr/lib/go-1.23/bin/go)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=/usr/lib/go-1.23/bin/go
while [ $# -gt 0 ]; do
	case $1 in
	--go) GO=$2; shift ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "go_schedwait.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$GO" ] || { echo "go_schedwait.sh: no Go toolchain at $GO (make deps)" >&2; exit 1; }

work=$(mktemp -d /tmp/lxtrace-go-schedwait-XXXXXX)
viewer=
cleanup() {
	[ -z "$viewer" ] || kill "$viewer" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$ROOT/bench/go_schedwait" && GOCACHE=$work/cache "$GO" build -o "$work/prog" .)
"$work/prog" "$work/trace"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$GO" tool trace -http="127.0.0.1:$port" "$work/trace" >"$work/viewer.log" 2>&1 &
viewer=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/goroutines" -o "$work/goroutines.html" && break
	sleep 0.2
done
[ -s "$work/goroutines.html" ] || { echo "go_schedwait.sh: the viewer did not serve" >&2; exit 1; }
curl -sf "http://127.0.0.1:$port/sched?raw=1" -o "$work/sched.pb"
table=0
for name in main.main main.main.func1; do
	curl -sf "http://127.0.0.1:$port/goroutine?name=$name" -o "$work/group.html"
	# The group page's "Sched wait time" column: the value cells are a row's last ones (a
	# bar of cells comes before them), as many as the header's after "Total".
	wait=$(python3 - "$work/group.html" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
rows = [[re.sub(r'<[^>]*>', '', c).strip() for c in re.findall(r'<t[hd][^>]*>(.*?)</t[hd]>', r, re.S)]
        for r in re.findall(r'<tr>(.*?)</tr>', html, re.S)]
head = next(r for r in rows if 'Sched wait time' in r)
back = len(head) - head.index('Sched wait time')
units = {'ns': 1e-6, 'µs': 1e-3, 'ms': 1.0, 's': 1e3}
total = 0.0
for r in rows[rows.index(head) + 1:]:
    m = re.match(r'([0-9.]+)(ns|µs|ms|s)$', r[-back]) if len(r) >= back else None
    if not m:
        break
    total += float(m.group(1)) * units[m.group(2)]
print(total)
PY
)
	table=$(awk -v a="$table" -v b="$wait" 'BEGIN { printf "%.3f", a + b }')
done
profile=$("$GO" tool pprof -top "$work/sched.pb" 2>/dev/null |
	sed -n 's/.* of \([0-9.]*\)ms total.*/\1/p')
echo "go 1.23 viewer on Go's own trace: /sched profile ${profile} ms; goroutine table's sched wait ${table} ms"
