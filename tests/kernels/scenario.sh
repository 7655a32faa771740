#!/bin/sh
# scenario.sh - the recordings the kernel stage makes on each kernel (make kernel-test): in
# a guest under busybox (tests/kernels/init), or natively for the host's kernel. What each step
# must show is asserted on the host afterwards.
#
#   LXTRACE=PROGRAM WORKLOADS=DIR sh tests/kernels/scenario.sh OUT_DIR     (root)
#
# OUT_DIR gets each step's trace, its stdout as NAME.out (a workload's report: lxtrace record
# -- COMMAND passes the command's stdout through) and its stderr as NAME.err (lxtrace's summary,
# or its error), and one line per step in OUT_DIR/steps: "NAME RC SECONDS", RC "skip" when this
# lxtrace lacks the step's option. The "lxk:" lines it prints, one per step with its status and
# first error line, are kept in OUT_DIR/log. A step that fails to load its BPF programs is run
# again with -v into NAME.verbose.err, so the verifier's complaint comes back too. Each step is
# stopped after its time (SIGINT, then SIGKILL), leaving the others theirs; recordings are
# short because a TCG guest runs 10-30 times slower than the host.
set -u
out=$1
L=${LXTRACE:-lxtrace}
W=${WORKLOADS:-.}
# 240 s: a step on 6.12 loads programs for 40-50 s under TCG (its verifier is the slowest, and
# it loads the typed programs, then the compat ones it falls back to: docs/testing.md), and
# its syscalls step took 112 s on an idle host.
LIMIT=${KERNELS_STEP_TIMEOUT:-240}

# The flight step, run by step as `sh scenario.sh OUT_DIR --flight` to have its time limit: a
# flight recorder over a command, SIGUSR1 sent once it records, the command's own
# lxtrace_trigger() 1.5 s after it starts. SIGINT from the limit goes on to lxtrace.
flight() {
	rm -f "$out/flight.ready"
	mkfifo "$out/flight.ready"
	"$L" record --flight-recorder=5 --min-gap 0.1 -o "$out/flight.trace" --ready-fd 3 \
		-- "$W/triggered" 1500 1 100 3>"$out/flight.ready" &
	rec=$!
	trap 'kill -INT $rec 2>/dev/null' INT TERM
	# Its line once it records; end of file when it could not start (docs/record.md).
	read -r _ <"$out/flight.ready"
	rm -f "$out/flight.ready"
	kill -USR1 $rec 2>/dev/null
	wait $rec
	rc=$?
	# A wait cut short by the trap's signal: lxtrace is still stopping.
	[ $rc -le 128 ] || { wait $rec; rc=$?; }
	return $rc
}

# A process started before the recording and held until it records, then let go: the sleeper
# of `lxtrace record -p` (--pid) and of --cgroup (--cgroup, in a cgroup of its own), each
# sleep with its stack. The sleeper's shell waits on a FIFO, then becomes the sleeper (exec:
# the same pid). -p stops when it exits; a cgroup recording is stopped with SIGINT after it.
held() {
	mode=$1
	rm -f "$out/$mode.ready" "$out/$mode.go"
	mkfifo "$out/$mode.ready" "$out/$mode.go"
	if [ "$mode" = cgroup ]; then
		# cgroup2 is at /sys/fs/cgroup in the guest, elsewhere on a host with both versions.
		root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
		[ -n "$root" ] || { echo "lxtrace kernel stage: no cgroup2 mounted" >&2; return 1; }
		cg=$root/lxtrace-kernel-stage-$$
		mkdir "$cg" || return 1
		sh -c 'echo $$ >"$1/cgroup.procs" && read -r _ <"$2" && exec "$3" 5 >"$4"' sh "$cg" \
			"$out/$mode.go" "$W/sleeper" "$out/$mode-sleeper.out" &
		wl=$!
		set -- --cgroup "$cg"
	else
		sh -c 'read -r _ <"$1" && exec "$2" 5 >"$3"' sh "$out/$mode.go" "$W/sleeper" \
			"$out/$mode-sleeper.out" &
		wl=$!
		set -- -p "$wl"
	fi
	"$L" record "$@" -o "$out/$mode.trace" --ready-fd 3 3>"$out/$mode.ready" &
	rec=$!
	trap 'kill -INT $rec 2>/dev/null; kill $wl 2>/dev/null' INT TERM
	read -r _ <"$out/$mode.ready"
	echo go >"$out/$mode.go"
	wait $wl
	[ "$mode" = cgroup ] && kill -INT $rec 2>/dev/null
	wait $rec
	rc=$?
	[ $rc -le 128 ] || { wait $rec; rc=$?; }
	rm -f "$out/$mode.ready" "$out/$mode.go"
	[ -z "${cg:-}" ] || rmdir "$cg"
	return $rc
}

case "${2:-}" in
--flight)
	flight
	exit
	;;
--pid | --cgroup)
	held "${2#--}"
	exit
	;;
esac

mkdir -p "$out"
: >"$out/steps"
: >"$out/log"

say() {
	echo "lxk: $*" | tee -a "$out/log"
}

now() {
	cut -d' ' -f1 /proc/uptime
}

# The first line of NAME.err worth a console line: lxtrace's own error, else the last line.
# From a verbose rerun, libbpf's first complaint and the verifier's: the line after the last
# instruction it checked (the log ends in statistics, on newer kernels after advice).
why() {
	first=$(grep -m1 '^lxtrace' "$out/$1.err" || tail -n 1 "$out/$1.err")
	[ -s "$out/$1.verbose.err" ] || { echo "$first"; return; }
	lib=$(grep -m1 -E "libbpf: .*(failed|not found|[Ee]rror|invalid|unknown|unsupported)" \
		"$out/$1.verbose.err")
	ver=$(awk '/BEGIN PROG LOAD LOG/ { inlog = 1; next }
		/END PROG LOAD LOG/ { if (msg != "") { print msg; exit } inlog = 0 }
		inlog && /^[0-9]+: \(/ { grab = 1; next }
		inlog && grab { msg = $0; grab = 0 }' "$out/$1.verbose.err")
	echo "$first | $lib${ver:+ | verifier: $ver}"
}

# step NAME COMMAND...: runs it with the limit, logs its status and time.
step() {
	name=$1
	shift
	t0=$(now)
	timeout -s INT -k 10 "$LIMIT" "$@" >"$out/$name.out" 2>"$out/$name.err"
	rc=$?
	t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	# busybox's timeout passes the status on, and a recording stopped by its SIGINT can exit
	# 0: the time tells whether the limit ended it, and the step is 124 then, as coreutils says.
	late=
	if awk -v t="$t" -v l="$LIMIT" 'BEGIN { exit !(t >= l) }'; then
		late="timed out after $LIMIT s"
		rc=124
	fi
	echo "$name $rc $t" >>"$out/steps"
	if [ "$rc" -eq 0 ]; then
		say "$name ok ${t} s"
		return
	fi
	if [ "$2" = record ] && grep -q -e '-v shows' "$out/$name.err"; then
		# "$1 $2" is "lxtrace record": -v goes after them.
		l=$1 cmd=$2
		shift 2
		timeout -s INT -k 10 "$LIMIT" "$l" "$cmd" -v "$@" >/dev/null 2>"$out/$name.verbose.err"
	fi
	msg=$(why "$name")
	say "$name FAILED (status $rc, ${t} s)${late:+: $late}${msg:+: $msg}"
}

skip() {
	echo "$1 skip 0" >>"$out/steps"
	say "$1 skipped: $2"
}

say "scenario on $(uname -r), lxtrace $L"
uname -r >"$out/kernel"
# The kernel's feature table, where this lxtrace can print it.
if "$L" record --help 2>&1 | grep -q -e '--check'; then
	step check "$L" record --check
else
	skip check "this lxtrace has no record --check"
fi
# A known ping-pong: the workload reads the kernel's switch counts of each thread before it
# ends (kvcsw-/knvcsw-ROLE), for the trace's to equal them.
step pingpong "$L" record -o "$out/pingpong.trace" -- "$W/pingpong" 2000
# A command target that sleeps a known number of times.
step sleeper "$L" record -o "$out/sleeper.trace" -- "$W/sleeper" 20
# Samples with stacks of both kinds: a spin whose call chain is known, then sleeps whose
# blocking events carry kernel frames under the user frames.
step samples "$L" record -F 999 --stacks=both -o "$out/samples.trace" -- \
	sh -c "'$W/hotspin' chain 1500 >'$out/samples-hotspin.out' &&
		'$W/sleeper' 5 >'$out/samples-sleeper.out'"
# The flight recorder's triggers: SIGUSR1, and the program's lxtrace_trigger() where the kernel
# lets lxtrace attach a command's probes; a file each (flight-001.trace, ...).
step flight sh "$0" "$out" --flight
# The two targets a command does not cover: a running process (-p) and a cgroup.
step pid sh "$0" "$out" --pid
step cgroup sh "$0" "$out" --cgroup
# Every syscall's entry and return (the sys_enter and sys_exit programs, loaded only here, the
# latter only in the go1.23 format): a thread's reads; -v for the summary's records by kind.
step syscalls "$L" record -v --format=go1.23 --syscalls=all -o "$out/syscalls.trace" -- \
	"$W/syslen" 20 256
# The whole machine, cheapest mode and default mode.
step cheap "$L" record -d 2 -F 0 --stacks=none -o "$out/cheap.trace"
step default "$L" record -d 2 -o "$out/default.trace"
say "scenario done"
