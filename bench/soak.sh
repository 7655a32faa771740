#!/usr/bin/env bash
# soak.sh - does the recorder's memory stay flat while processes come and go for a long time?
# Records the whole machine (default options: user stacks, 99 Hz samples) while a shell forks
# and execs short commands without pause; samples the recorder's RSS every 10 s. With
# --command, records the churning shell alone (lxtrace record -- bash ...), so that what else
# runs on a shared machine stays out of the figures.
#
# Prints one line per sample (seconds, RSS in MiB, processes forked so far), then start RSS
# (first sample), end RSS (last sample), the least-squares slope in MiB per minute over the
# samples after the first minute (warm-up: tables and caches fill, pids wrap), forks per second
# and the trace's size. Goal: slope ~ 0. Not a timed test: run it by hand, alone (flock).
#
# With --flight-recorder among the record options, no trace is written while it runs: at the
# end a SIGUSR1 asks for the window, whose file both Go parsers must take (the tracker forgot
# what it could on the way), and the summary's window line says what the tracker held.
#
# Usage: bench/soak.sh [--minutes N] [--command] [-- RECORD-OPTIONS...]   (default 10 minutes)
# Run as root; needs build/lxtrace (make).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LXTRACE=${LXTRACE:-$ROOT/build/lxtrace}
MINUTES=10
PERIOD=10
COMMAND=

while [ $# -gt 0 ]; do
	case $1 in
	--minutes) MINUTES=$2; shift ;;
	--command) COMMAND=1 ;;
	--) shift; break ;;
	-h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "soak.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"
[ -x "$LXTRACE" ] || die "build first (make)"

TMP=$(mktemp -d /tmp/lxtrace-soak.XXXXXX)
# lxtrace writes a line here once it records (--ready-fd 3 3>FIFO; docs/record.md).
mkfifo "$TMP/ready"
REC= CHURN=
cleanup() {
	[ -n "$CHURN" ] && kill "$CHURN" 2>/dev/null || true
	[ -n "$REC" ] && kill -INT "$REC" 2>/dev/null && wait "$REC" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

: >"$TMP/err"
# The churn: a fork and an exec each time, of two programs in turn (two names, as a build's
# compilers and shells would be), counted in a file read at each sample.
printf '%s\n' 'n=0' 'while :; do' '	/bin/true' '	/bin/sh -c :' '	n=$((n + 2))' \
	"	[ \$((n % 200)) = 0 ] && echo \$n >$TMP/forks" 'done' >"$TMP/churn.sh"
if [ -n "$COMMAND" ]; then
	"$LXTRACE" record -v -o "$TMP/soak.trace" --ready-fd 3 "$@" -- bash "$TMP/churn.sh" \
		3>"$TMP/ready" 2>"$TMP/err" &
else
	"$LXTRACE" record -v -o "$TMP/soak.trace" --ready-fd 3 "$@" 3>"$TMP/ready" 2>"$TMP/err" &
fi
REC=$!
read -r -t 30 _ <"$TMP/ready" || die "the recorder did not start: $(cat "$TMP/err")"
if [ -z "$COMMAND" ]; then
	bash "$TMP/churn.sh" &
	CHURN=$!
fi

printf '%8s %10s %10s\n' seconds rss_MiB forks
end=$((SECONDS + MINUTES * 60))
t0=$SECONDS
while :; do
	rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$REC/status")
	printf '%8d %10s %10s\n' $((SECONDS - t0)) "$rss" "$(cat "$TMP/forks" 2>/dev/null || echo 0)" |
		tee -a "$TMP/samples"
	[ $SECONDS -ge $end ] && break
	sleep "$PERIOD"
done
forks=$(cat "$TMP/forks" 2>/dev/null || echo 0)
FLIGHT=
if [[ " $* " == *" --flight-recorder"* ]]; then
	FLIGHT=$TMP/soak-001.trace
	kill -USR1 "$REC"
	for _ in $(seq 600); do grep -q "soak-001.trace: .* into the recording" "$TMP/err" && break; sleep 0.1; done
	grep -h "soak-001.trace" "$TMP/err" | sed 's/^ */  /'
fi
if [ -n "$COMMAND" ]; then
	# lxtrace passes the signal on to the command, whose end ends the recording (and lxtrace
	# exits with the command's status, 143).
	kill -TERM "$REC"
	wait "$REC" || true
	grep -q "records lost" "$TMP/err" || die "the recorder failed: $(tail -3 "$TMP/err")"
else
	kill "$CHURN"; wait "$CHURN" 2>/dev/null || true; CHURN=
	kill -INT "$REC"; wait "$REC" || die "the recorder failed: $(tail -3 "$TMP/err")"
fi
REC=

if [ -n "$FLIGHT" ]; then
	for cmd in "go tool trace -d" "/usr/lib/go-1.23/bin/go tool trace -d=1"; do
		$cmd "$FLIGHT" >/dev/null 2>"$TMP/parse" ||
			die "$cmd refused the flight file: $(head -2 "$TMP/parse")"
	done
	echo "  the flight file: both Go parsers take it"
fi
awk -v forks="$forks" -v secs=$((MINUTES * 60)) \
	-v size="$(stat -c %s "${FLIGHT:-$TMP/soak.trace}" 2>/dev/null || echo 0)" '
	NR == 1 { start = $2 }
	{ end = $2 }
	$1 >= 60 { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
	END {
		slope = n > 1 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) * 60 : 0
		printf "start %.1f MiB, end %.1f MiB, slope %.2f MiB/min (after the first minute), " \
		       "%d forks (%.0f/s), trace %.0f MiB\n", start, end, slope, forks, forks / secs, size / 1048576
	}' "$TMP/samples"
grep -E "records lost|threads:|call stacks|unwind rows:|definitions:|window:|repairs|queued:" "$TMP/err" | sed 's/^ */  /'
