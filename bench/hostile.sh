#!/usr/bin/env bash
# hostile.sh - what a local user's perf map costs a system-wide recording: one `lxtrace record
# -d 3` per case while a process of an unprivileged uid spins in JIT code
# (tests/workloads/jitspin), so every sample of it is looked up in its /tmp/perf-PID.map.
#
# Cases: fifo (a named pipe), zero (a symlink to /dev/zero), secret (a symlink to a root 0600
# file whose lines have a perf map's shape), sparse (a symlink to a 1 GiB sparse file), ownsparse
# (the user's own 1 GiB sparse file), big (a valid map of 1,150,000 lines, 111 MB, that the
# process writes itself), none (no map). Per case: wall time of the recorder (-d 3: ideally
# 3.x s), its peak RSS, records lost, whether the secret's text is in the trace, the time the
# summary says symbolizing took, and why it refused the map, if it says so. A recorder still
# running after 40 s gets SIGINT (and SIGKILL 20 s later).
#
# Usage: bench/hostile.sh [CASE...]   (default: all). Root; needs `make`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
JITSPIN=$ROOT/build/tests/workloads/jitspin
USER_ID=${HOSTILE_UID:-61234}
CASES=${*:-none fifo zero secret sparse ownsparse big}
SECRET=LXSECRET_$$_$RANDOM

die() { echo "hostile.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] && [ -x "$JITSPIN" ] || die "build first (make)"

TMP=$(mktemp -d /tmp/lxtrace-hostile.XXXXXX)
chmod 755 "$TMP"
ATTACKER=
cleanup() {
	[ -n "$ATTACKER" ] && kill -9 "$ATTACKER" 2>/dev/null || true
	rm -f "/tmp/perf-$ATTACKER.map"
	rm -rf "$TMP"
}
trap cleanup EXIT

# The root-only file, in perf-map shape, covering every address; the sparse file.
for i in $(seq 100); do echo "0 7fffffffffff ${SECRET}_$i"; done >"$TMP/secret"
chmod 600 "$TMP/secret"
truncate -s 1G "$TMP/sparse"

printf '%-10s %8s %10s %8s %7s  %s\n' case wall_s peak_MiB lost secret "summary: symbolizing, the map"
for c in $CASES; do
	# The attacker makes its perf map as itself, then runs the JIT code under the same pid.
	case $c in
	none) make_map=: ;;
	fifo) make_map='mkfifo "$M"' ;;
	zero) make_map='ln -s /dev/zero "$M"' ;;
	secret) make_map="ln -s $TMP/secret \"\$M\"" ;;
	sparse) make_map="ln -s $TMP/sparse \"\$M\"" ;;
	ownsparse) make_map='truncate -s 1G "$M"' ;;
	big) make_map=: ;;
	*) die "unknown case $c" ;;
	esac
	lines=
	[ "$c" = big ] && lines=1150000
	setpriv --reuid="$USER_ID" --regid="$USER_ID" --clear-groups \
		sh -c "M=/tmp/perf-\$\$.map; rm -f \"\$M\" 2>/dev/null; $make_map && exec $JITSPIN 15000 $lines" \
		>/dev/null &
	ATTACKER=$!
	sleep 1.5	# jitspin writes a big map in about a second
	start=$(date +%s.%N)
	/usr/bin/time -f '%M' -o "$TMP/rss" timeout -s INT -k 20 40 \
		"$LXTRACE" record -d 3 -o "$TMP/trace" 2>"$TMP/err" || true
	end=$(date +%s.%N)
	kill -9 "$ATTACKER" 2>/dev/null || true
	wait "$ATTACKER" 2>/dev/null || true
	rm -f "/tmp/perf-$ATTACKER.map"
	refused=$(sed -n "s|.*/tmp/perf-$ATTACKER.map: |refused: |p" "$TMP/err")
	ATTACKER=
	lost=$(awk '/records lost:/ { print $3 }' "$TMP/err")
	leak=no
	grep -q "$SECRET" "$TMP/trace" 2>/dev/null && leak=YES
	printf '%-10s %8.1f %10.0f %8s %7s  %s\n' "$c" "$(echo "$end - $start" | bc)" \
		"$(( $(tail -1 "$TMP/rss") / 1024 ))" "${lost:-?}" "$leak" \
		"$(sed -n 's/.*\(symbolizing took [0-9.]* s\).*/\1/p' "$TMP/err") ${refused:+($refused)}"
	rm -f "$TMP/trace"
done
