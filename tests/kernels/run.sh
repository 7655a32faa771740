#!/usr/bin/env bash
# run.sh - the kernel stage (make kernel-test): lxtrace records the same scenario on each of
# Debian's kernels, booted in QEMU, and on the host's own kernel; the files come back and
# BUILD_DIR/tests/kernel-tests asserts them, once per kernel (docs/testing.md).
#
#   tests/kernels/run.sh BUILD_DIR [KERNEL...]      (root)
#
# KERNEL is a Debian suite, whose cloud kernel is fetched (tests/kernels/fetch.sh), or "host":
# the scenario run natively, the only way to the host's kernel (this machine has no image of it
# to boot). Default: bullseye bookworm bookworm-backports trixie-backports host. The guests run
# LXTRACE and the workloads of LXTRACE_WORKLOADS (default: BUILD_DIR's), so another build's
# binary can be tried as it is. Everything goes under BUILD_DIR/kernels/: the downloads (kept),
# the initramfs, and each kernel's results (NAME/). Ends with one line per kernel and exit 1
# when a kernel failed a step or an assertion. KERNELS_TIMEOUT bounds one guest or the host's
# run (default 900 s; the slowest guest, 6.12's, took 159 s on 2026-12-03, 494 s on 2026-12-07
# with --check loading the programs, -p and --cgroup recorded and its typed programs refused),
# KERNELS_STEP_TIMEOUT one recording in it (tests/kernels/scenario.sh).
set -uo pipefail
build=${1:?usage: run.sh BUILD_DIR [KERNEL...]}
shift
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(bullseye bookworm bookworm-backports trixie-backports host)
here=$(dirname "${BASH_SOURCE[0]}")
lxtrace=$(realpath "${LXTRACE:-$build/lxtrace}")
workloads=$(realpath "${LXTRACE_WORKLOADS:-$build/tests/workloads}")
tests=$build/tests/kernel-tests
work=$build/kernels
limit=${KERNELS_TIMEOUT:-900}

if [ "$(id -u)" -ne 0 ]; then
	echo "kernel-test: skipped: it loads BPF programs and downloads with apt: run it as root"
	exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
	echo "kernel-test: skipped: the guests are Debian's amd64 kernels, this is $(uname -m)"
	exit 0
fi

now() {
	date +%s.%N
}
since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# The steps' outcomes of a results directory, one word each: "pingpong:ok(12.3s)", then the
# first failed step's line of the scenario's log.
steps() {
	awk '{ printf "%s%s:%s(%ss)", sep, $1, $2 == "0" ? "ok" : $2 == "skip" ? "skip" : "rc" $2, $3
	       sep = " " }' "$1/out/steps" 2>/dev/null
	grep -m1 -o 'lxk: [a-z]* FAILED.*' "$1/out/log" 2>/dev/null | sed 's/^lxk: /; first failure: /'
}

stage=$(now)
mkdir -p "$work"
summary=()
failed=0
echo "kernel-test: lxtrace $lxtrace, workloads $workloads"
initrd=$work/initramfs.cpio.gz
if ! bash "$here/initramfs.sh" "$initrd" "$lxtrace" "$workloads"; then
	echo "kernel-test: FAILED: no initramfs"
	exit 1
fi

for k in "${kernels[@]}"; do
	t0=$(now)
	dir=$work/$k
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ "$k" = host ]; then
		name="host $(uname -r)"
		echo "== $name: natively"
		LXTRACE=$lxtrace WORKLOADS=$workloads timeout -k 10 "$limit" sh "$here/scenario.sh" "$dir/out" |
			sed -u "s/^lxk:/  [host]/"
		boot="native"
	else
		echo "== $k: fetching Debian's linux-image-cloud-amd64/$k"
		if ! read -r release version image \
			< <(bash "$here/fetch.sh" "$k" "$work/cache" 2>"$dir/error"); then
			cat "$dir/error" >&2
			summary+=("$k: FAILED: $(head -n 1 "$dir/error")")
			failed=1
			continue
		fi
		name="$k $release"
		echo "== $name ($version): booting, $(since "$t0") s to fetch"
		if ! bash "$here/boot.sh" "$k" "$image" "$initrd" "$dir" "$limit" 2>"$dir/error"; then
			cat "$dir/error" >&2
			summary+=("$name: FAILED: $(head -n 1 "$dir/error"); $(steps "$dir")")
			failed=1
			continue
		fi
		init=$(grep -o -m1 'up at [0-9.]* s' "$dir/console.log" | cut -d' ' -f3)
		boot="init at $init s, guest $(cat "$dir/seconds") s"
		[ ! -s "$dir/crashed-booting" ] ||
			boot="$boot (booted twice: the first crashed: $(cat "$dir/crashed-booting"))"
	fi
	echo "== $name: assertions"
	report=$dir/tests.log
	LXTRACE_KERNEL_RESULTS=$dir LXTRACE_KERNEL_NAME=$name \
		bash "$here/../../scripts/run-tests.sh" "$tests" --short-filename --verbose 2>&1 | tee "$report"
	verdict=$(grep -o 'Tested: [0-9]* | Passing: [0-9]* | Failing: [0-9]* | Crashing: [0-9]*' \
		"$report" | tail -n 1)
	bad=$(grep -o '^\[\(FAIL\|CRASH\)\] kernel::[a-z_0-9]*' "$report" | sed 's/.*:://' | sort -u |
		tr '\n' ' ')
	if [ -n "$bad" ] || [ -z "$verdict" ]; then
		failed=1
		summary+=("$name: FAILED ${bad:-(no test result)}; $boot; $(steps "$dir"); $(since "$t0") s")
	else
		summary+=("$name: ok ($verdict); $boot; $(steps "$dir"); $(since "$t0") s")
	fi
done

echo "---- kernel-test: $(since "$stage") s in all ----"
printf '%s\n' "${summary[@]}"
exit $failed
