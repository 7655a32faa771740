#!/usr/bin/env bash
# boot.sh - boots one kernel in QEMU with the stage's initramfs and brings the guest's output
# directory back (the kernel stage, make kernel-test, calls it for each kernel).
#
#   tests/kernels/boot.sh NAME VMLINUZ INITRD DIR TIMEOUT_S
#
# DIR gets console.log (the guest's console: the scenario's "lxk:" lines and the kernel's
# messages), out/ (the scenario's directory, tests/kernels/scenario.sh) and qemu.log. The
# console's "lxk:" lines are printed as they come. Exit 0 when the results came back whole,
# else 1 with one line naming NAME and what went wrong: boot, guest panic, timeout, results.
#
# TCG, not KVM: on the machines CI runs on /dev/kvm exists but boots no guest. A TCG boot of a
# Debian cloud kernel takes 2-3 s to the init; KERNELS_ACCEL=kvm where KVM works.
set -uo pipefail
name=$1 kernel=$2 initrd=$3 dir=$4 limit=$5

die() {
	echo "kernels: $name: $*" >&2
	exit 1
}

command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64 (package qemu-system-x86)"

# One boot: the console into DIR/console.log, printed as it comes (a hang shows where it
# stopped); sets rc (QEMU's status, 124 on the timeout) and secs.
boot() {
	local printer start append
	rm -rf "$dir/out" "$dir/console.log" "$dir/results.b64"
	mkdir -p "$dir"
	: >"$dir/console.log"
	# $! is tail's pid, whose end ends the filter. A line can begin with the terminal resets
	# the kernel writes.
	tail -n +1 -F "$dir/console.log" 2>/dev/null \
		> >(grep --line-buffered -o 'lxk:.*' | sed -u "s/^lxk:/  [$name]/") &
	printer=$!
	start=$(date +%s.%N)
	# panic=-1 turns a panic into a reboot, -no-reboot turns that into QEMU's exit. QEMU 7.2's
	# TCG gets two things wrong now and then, measured on Debian's 6.12, the kernel that showed
	# it: cmpxchg16b (SLUB's per-CPU freelist; double faults with a corrupt EFLAGS right after
	# it: 5 boots in 20 crashed), hence no CX16 and the kernel's own emulation of it; and, with
	# a thread per vCPU, code patched while the other vCPU runs it (2 boots in 170 failed, the
	# one whose log was kept an int3 of the kernel's code patching taken as an Oops), hence one
	# thread for both vCPUs. With both, 120 boots in 120 came up, and the stage took 116 s
	# against 114 s. The kernel hands KERNELS_STEP_TIMEOUT=N, not a parameter of its own, to
	# init's environment, so the scenario's limit is the host's.
	append="console=ttyS0 panic=-1 quiet"
	[ -z "${KERNELS_STEP_TIMEOUT:-}" ] || append="$append KERNELS_STEP_TIMEOUT=$KERNELS_STEP_TIMEOUT"
	timeout -k 5 "$limit" qemu-system-x86_64 -accel "${KERNELS_ACCEL:-tcg,thread=single}" \
		-cpu qemu64,-cx16 -m 1024 -smp 2 -nographic -no-reboot -display none -monitor none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "$append" \
		-serial "file:$dir/console.log" -serial "file:$dir/results.b64" \
		</dev/null >"$dir/qemu.log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	sleep 0.3	# the printer's last lines
	kill "$printer" 2>/dev/null
	wait "$printer" 2>/dev/null
	tr -d '\r' <"$dir/console.log" >"$dir/console.txt" && mv "$dir/console.txt" "$dir/console.log"
}

boot
# A crash before the guest's init ran is the emulator's (above), not lxtrace's: booted once
# more, and said so. A crash once lxtrace ran is never retried.
early=$(grep -m1 -E 'Kernel panic|BUG:|Oops:' "$dir/console.log")
if [ -n "$early" ] && ! grep -q 'lxk: kernel' "$dir/console.log"; then
	echo "  [$name] the guest crashed while booting, before its init: booting again (${early#\[*\] })"
	echo "${early#\[*\] }" >"$dir/crashed-booting"
	boot
fi
echo "$secs" >"$dir/seconds"

last=$(grep -v '^\s*$' "$dir/console.log" | tail -n 1)
panic=$(grep -m1 -E 'Kernel panic|BUG:|Oops:' "$dir/console.log")
[ -z "$panic" ] || die "guest panic after $secs s: $panic"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] ||
	die "timeout: no poweroff in ${limit} s; the console's last line: $last"
grep -q 'lxk: kernel' "$dir/console.log" ||
	die "boot: the guest never ran its init (QEMU status $rc): $(tail -n 1 "$dir/qemu.log")" \
		"| console: $last"
[ "$rc" -eq 0 ] || die "QEMU exited with status $rc: $(tail -n 1 "$dir/qemu.log")"
tail -n 1 "$dir/results.b64" | grep -q '^LXK-END$' ||
	die "results: the guest's output did not come back whole ($(wc -c <"$dir/results.b64") bytes)"
sed '$d' "$dir/results.b64" | base64 -d | tar -xz -C "$dir" ||
	die "results: the guest's output does not unpack"
rm -f "$dir/results.b64"
