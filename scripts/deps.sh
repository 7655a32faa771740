#!/usr/bin/env bash
# Installs every Debian 12 package lxtrace needs to build, test and benchmark.
# Go 1.19 and Go 1.23 are the real trace viewers the tests run; 1.23 lives in bookworm-backports.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: must run as root (apt-get install)" >&2
	exit 1
fi

backports=/etc/apt/sources.list.d/lxtrace-backports.list
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo 'deb http://deb.debian.org/debian bookworm-backports main' >"$backports"
fi

apt-get update -q
apt-get install -y -q --no-install-recommends \
	make gcc g++ clang llvm pkg-config \
	libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev \
	libcriterion-dev systemtap-sdt-dev \
	golang-go linux-perf trace-cmd python3 procps
apt-get install -y -q --no-install-recommends -t bookworm-backports golang-1.23-go
