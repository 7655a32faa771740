#!/usr/bin/env bash
# Runs a Criterion test binary (the command line given). When tests fail, their assertions are
# printed again at the end: a failing test's own output (stacks, recorder logs) and the tests
# after it push them out of the last lines that a CI log shows.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "---- what failed (repeated from above) ----"
	awk '/Assertion Failed|Unexpected signal|Timed out/ { p = 1 }
	     /^\[(FAIL|CRASH)\]/ { print; p = 0; next }
	     /^\[----\] .*(Assertion Failed|Unexpected signal|Timed out)/ { print; next }
	     p && /^\[----\]/ { print; next }
	     { p = 0 }' "$log" | tail -n 80
fi
exit "$rc"
