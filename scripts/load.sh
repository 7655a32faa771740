#!/usr/bin/env bash
# load.sh - a busy machine, as people have one when they reach for a tracer: runs COMMAND beside
# it and takes it down when COMMAND ends (make test-load, bench/load.sh; docs/testing.md, "The
# load stage").
#
#   scripts/load.sh [--hogs N] [--quiet] -- COMMAND [ARGS...]      (root: the page cache)
#
# The load: N CPU hogs (default two per CPU, so every CPU has a queue), an exec churn of the
# machine's coreutils programs one after the other (distinct binaries, each a new process with
# its libraries to map), direct-IO reads of a 256 MiB file (the disk busy, not the page cache),
# and the page cache dropped every 5 s (binaries read from the disk again). Each part runs in a
# session of its own, ended with all it started; the file is removed. Exits with COMMAND's
# status.
set -uo pipefail

hogs=$((2 * $(nproc)))
quiet=
while [ $# -gt 0 ]; do
	case $1 in
	--hogs) hogs=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--) shift; break ;;
	*) echo "usage: load.sh [--hogs N] [--quiet] -- COMMAND [ARGS...]" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: load.sh [--hogs N] [--quiet] -- COMMAND [ARGS...]" >&2; exit 2; }

# On the disk, not a tmpfs: O_DIRECT reads must reach the device.
dir=$(mktemp -d /var/tmp/lxtrace-load.XXXXXX) || exit 1
sessions=()

stop_load() {
	for s in "${sessions[@]}"; do
		kill -TERM -- "-$s" 2>/dev/null
	done
	for s in "${sessions[@]}"; do
		# The session leader's group is gone once every member has exited.
		for _ in $(seq 50); do
			kill -0 -- "-$s" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$s" 2>/dev/null
	done
	rm -rf "$dir"
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start NAME SCRIPT: SCRIPT in a session of its own (its pid is its process group).
start() {
	setsid bash -c "$2" >/dev/null 2>&1 </dev/null &
	sessions+=($!)
	[ -n "$quiet" ] || echo "load: $1 (session $!)" >&2
}

# Random bytes, so the file has real blocks to read (a sparse file's holes read no disk).
head -c 256M /dev/urandom >"$dir/big" || exit 1
sync "$dir/big"

for _ in $(seq "$hogs"); do
	start hog 'while :; do :; done'
done
# Every program of coreutils: each answers --version and does nothing else.
start "exec churn" 'progs=$(dpkg -L coreutils | grep "^/usr/bin/." | sort)
	while :; do for p in $progs; do "$p" --version >/dev/null 2>&1; done; done'
start "direct-IO reads" "while :; do dd if='$dir/big' of=/dev/null bs=1M iflag=direct 2>/dev/null; done"
start "page cache drops" 'while :; do sync; echo 3 >/proc/sys/vm/drop_caches; sleep 5; done'
[ -n "$quiet" ] || echo "load: $hogs hogs on $(nproc) CPUs, exec churn, direct-IO reads, cache drops; running $*" >&2

"$@"
