#!/usr/bin/env bash
# Installs every Debian 12 package lxtrace needs to build, test, benchmark and view traces.
# libc6-dbg is libc's DWARF, which the symbolizer's tests compare with gdb's frames.
# fuse3 and libfuse3-dev: tests/workloads/stallfs, the FUSE filesystem that stops answering.
# Go 1.19 and Go 1.23 are the real trace viewers the tests run; 1.23 lives in bookworm-backports.
# Their profile pages draw graphs with graphviz's dot (without it they answer 500); chromium
# shows their timelines headless in the viewer tests and bench/view.sh. qemu-system-x86,
# busybox-static and cpio boot Debian's own kernels for make kernel-test (tests/kernels/).
# openjdk-17-jdk-headless: a JVM whose JIT code tests/integration/jit.c names from its perf map.
# nginx-light: an idle nginx, whose stacks at the start tests/integration/unwind.c compares with gdb.
#
# bookworm-backports comes from wherever this machine already gets Debian bookworm (a mirror,
# a proxy, a snapshot): its URI and Signed-By are read from apt's own sources, in either format
# (one-line .list, deb822 .sources). No host name is written here.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: must run as root (apt-get install)" >&2
	exit 1
fi

APT_DIR=${APT_DIR:-/etc/apt}
# The file this script owns; an older version of it wrote the one-line .list beside it.
OURS=$APT_DIR/sources.list.d/lxtrace-backports.sources
OURS_OLD=$APT_DIR/sources.list.d/lxtrace-backports.list

# apt_sources, debian_source: the machine's apt sources, read in either format.
. "$(dirname "${BASH_SOURCE[0]}")/apt-sources.sh"

# The deb822 stanza of bookworm-backports, from the source that serves Debian's bookworm;
# nothing when another source already has bookworm-backports. Fails when no source serves
# bookworm (debian_source says how a third-party archive named bookworm is told apart).
backports_stanza() {
	local pick uri signed
	if apt_sources "$OURS" "$OURS_OLD" |
		awk -F '\t' '$1 == "deb" && $3 == "bookworm-backports" { f = 1 } END { exit !f }'; then
		return 0
	fi
	pick=$(debian_source bookworm "$OURS" "$OURS_OLD") || true
	uri=$(printf '%s' "$pick" | cut -f1)
	signed=$(printf '%s' "$pick" | cut -f2)
	if [ -z "$uri" ]; then
		echo "deps: no apt source serves Debian bookworm main (in $APT_DIR/sources.list or" \
			"$APT_DIR/sources.list.d/): add one, or bookworm-backports yourself" >&2
		return 1
	fi
	printf '# Written by lxtrace scripts/deps.sh from the source of Debian bookworm: Go 1.23.\n'
	printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\n' "$uri"
	if [ -n "$signed" ]; then
		# Inline keys keep their lines, continued as deb822 wants.
		printf 'Signed-By: %s\n' "$(printf '%s' "$signed" | sed 's/\x01/\n /g')" | sed '1s/ $//'
	fi
}

if [ "${1:-}" = "--print-backports" ]; then
	backports_stanza
	exit
fi

stanza=$(backports_stanza)
if [ -n "$stanza" ]; then
	if [ ! -f "$OURS" ] || [ "$(cat "$OURS")" != "$stanza" ]; then
		printf '%s\n' "$stanza" >"$OURS"
	fi
	rm -f "$OURS_OLD"
fi

apt-get update -q
apt-get install -y -q --no-install-recommends \
	make gcc g++ clang llvm pkg-config \
	libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev \
	libcriterion-dev systemtap-sdt-dev fuse3 libfuse3-dev \
	golang-go linux-perf trace-cmd strace python3 procps gdb libc6-dbg bpftrace time \
	graphviz chromium curl openjdk-17-jdk-headless nginx-light \
	qemu-system-x86 busybox-static cpio
apt-get install -y -q --no-install-recommends -t bookworm-backports golang-1.23-go
