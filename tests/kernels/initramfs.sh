#!/usr/bin/env bash
# initramfs.sh - the guest's whole root file system, for the kernel stage (make kernel-test):
# busybox, lxtrace and the scenario's workloads with the shared libraries they load, the
# scenario and the init that runs it.
#
#   tests/kernels/initramfs.sh OUT.cpio.gz LXTRACE WORKLOADS_DIR
#
# Binaries keep the host's paths for their libraries (ldd's), so the guest runs exactly the
# programs the host built; the workloads go to /usr/bin, where the guest's traces name them.
set -euo pipefail
out=${1:?usage: initramfs.sh OUT.cpio.gz LXTRACE WORKLOADS_DIR}
lxtrace=${2:?usage: initramfs.sh OUT.cpio.gz LXTRACE WORKLOADS_DIR}
workloads=${3:?usage: initramfs.sh OUT.cpio.gz LXTRACE WORKLOADS_DIR}
here=$(dirname "${BASH_SOURCE[0]}")
# What tests/kernels/scenario.sh runs.
WORKLOADS="pingpong sleeper hotspin triggered syslen"

die() {
	echo "kernels: initramfs: $*" >&2
	exit 1
}

busybox=$(command -v busybox) || die "no busybox (package busybox-static)"
command -v cpio >/dev/null || die "no cpio (package cpio)"
[ -x "$lxtrace" ] || die "$lxtrace: not an executable"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,usr/bin,proc,sys,dev,tmp,etc}

# PROGRAM to DEST in the guest, with every library ldd finds for it.
add() {
	install -D -m 0755 "$1" "$root$2"
	# A static program has none: ldd and grep fail, and that is no error.
	{ ldd "$1" 2>/dev/null || true; } | { grep -o '/[^ ]*' || true; } | while read -r lib; do
		[ -e "$root$lib" ] || install -D -m 0755 "$lib" "$root$lib"
	done
}

add "$busybox" /bin/busybox
for applet in $("$busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
add "$lxtrace" /usr/bin/lxtrace
for w in $WORKLOADS; do
	[ -x "$workloads/$w" ] || die "$workloads/$w: not built (make $(basename "$workloads")/$w)"
	add "$workloads/$w" "/usr/bin/$w"
done
install -m 0755 "$here/init" "$root/init"
install -m 0644 "$here/scenario.sh" "$root/scenario.sh"
echo 'root:x:0:0:root:/tmp:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
