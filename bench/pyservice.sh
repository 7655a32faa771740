#!/usr/bin/env bash
# pyservice.sh - first sight under load, lxtrace builds side by side: the share of whole stacks
# (no "[truncated" mark) in the first second of CPU of a Python service of 200 threads attached
# with -p before it starts them (its libraries loaded after the attach), beside CPU hogs
# beyond the cores and an exec churn; and the share of the stacks where the interpreter runs
# that name their thread's Python function. Each run is one run of the integration test
# python/service_of_200_threads_is_whole_and_named_from_its_first_second (tests/integration/
# python.c, tests/workloads/pyservice.py) with LXTRACE set to a build; the builds alternate.
#
# Usage: bench/pyservice.sh [--runs N] LXTRACE...     (root; N: 5)
# Prints one line a run: the build, the first second's length (longer when the load let the
# service make fewer than 200 stacks), its stacks whole, its stacks in the interpreter named,
# the summary's stacks of threads not seen yet (native) and of threads whose state BPF found
# itself (builds before it: -); then the builds' totals.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TESTS=$ROOT/build/tests/integration-tests
RUNS=5

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "pyservice.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: pyservice.sh [--runs N] LXTRACE..." >&2; exit 2; }
[ -x "$TESTS" ] || { echo "pyservice.sh: $TESTS: build it (make)" >&2; exit 1; }

LOGS=$(mktemp -d /tmp/pyservice-bench.XXXXXX)
echo "the tests' logs: $LOGS"
declare -A n whole py named unseen found
for b in "$@"; do n[$b]=0; whole[$b]=0; py[$b]=0; named[$b]=0; unseen[$b]=0; found[$b]=0; done
for run in $(seq "$RUNS"); do
	for b in "$@"; do
		# "pyservice: N stacks in its first second (S s), W whole; ... name their function
		# (first second: P, M); ..."
		log=$LOGS/run$run-$(echo "$b" | tr / _).log
		LXTRACE=$b "$TESTS" --jobs 1 --verbose \
			--filter 'python/service_of_200_threads_is_whole_and_named_from_its_first_second' \
			>"$log" 2>&1 || true
		line=$(grep -o 'pyservice: [0-9]* stacks.*first second: [0-9]*, [0-9]*)' "$log" || true)
		read -r sn ss sw sp sm < <(echo "$line" | sed -E 's/pyservice: ([0-9]+) stacks in its first second \(([0-9.]+) s\), ([0-9]+) whole.*first second: ([0-9]+), ([0-9]+)\)/\1 \2 \3 \4 \5/') || true
		if [ -z "${sm:-}" ]; then
			echo "run $run $b: no figures (the test did not get that far: $log)"
			continue
		fi
		# The summary's "native frames only: U stacks of threads not seen yet" and "(F of
		# threads not read yet, their state found by BPF".
		su=$(grep -o 'native frames only: [0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
		sf=$(grep -o '[0-9]* of threads not read yet, their state found by BPF' "$log" |
			grep -o '^[0-9]*' || echo -)
		printf 'run %s %s: first second (%s s): %s of %s whole (%.1f%%), %s of %s in the interpreter named (%.1f%%); %s stacks of threads not seen yet, %s found by BPF\n' \
			"$run" "$b" "$ss" "$sw" "$sn" "$(echo "100 * $sw / $sn" | bc -l)" "$sm" "$sp" \
			"$(echo "100 * $sm / ($sp + ($sp == 0))" | bc -l)" "$su" "$sf"
		unseen[$b]=$((unseen[$b] + su)); [ "$sf" = - ] || found[$b]=$((found[$b] + sf))
		n[$b]=$((n[$b] + sn)); whole[$b]=$((whole[$b] + sw))
		py[$b]=$((py[$b] + sp)); named[$b]=$((named[$b] + sm))
		unset sm
	done
done
for b in "$@"; do
	[ "${n[$b]}" -gt 0 ] || continue
	printf '%s: %s of %s whole (%.1f%%), %s of %s named (%.1f%%); %s stacks of threads not seen yet, %s found by BPF\n' "$b" "${whole[$b]}" \
		"${n[$b]}" "$(echo "100 * ${whole[$b]} / ${n[$b]}" | bc -l)" "${named[$b]}" "${py[$b]}" \
		"$(echo "100 * ${named[$b]} / (${py[$b]} + (${py[$b]} == 0))" | bc -l)" "${unseen[$b]}" \
		"${found[$b]}"
done
