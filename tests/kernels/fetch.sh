#!/usr/bin/env bash
# fetch.sh - one of Debian's own kernels, by suite, for the kernel stage (make kernel-test).
#
#   tests/kernels/fetch.sh SUITE CACHE_DIR      (root)
#
# Prints one line "RELEASE VERSION VMLINUZ": the kernel's release (uname -r), its Debian
# package version and the path of its image under CACHE_DIR. The kernel is named by its suite's
# meta-package, linux-image-cloud-amd64/SUITE (or SUITE-security's, when newer and this machine
# gets it), whose Depends names the real image: a suite follows Debian's kernel updates without
# a version written here. The cloud flavour has the
# 8250 serial port, BTF and BPF built in, so the image alone boots and records: no module,
# no initramfs of Debian's.
#
# The packages come from the archive this machine already uses for Debian (scripts/apt-sources.sh:
# a mirror, a proxy, a snapshot; no host name is written here), through a private apt
# configuration under CACHE_DIR: the system's sources, lists, cache and lock stay untouched.
# Lists are read again after KERNELS_LISTS_MAX_AGE minutes (default 360), .debs and images kept.
# Each failure is one line on stderr naming the suite and the step, and exit 1.
set -euo pipefail

suite=${1:?usage: fetch.sh SUITE CACHE_DIR}
cache=${2:?usage: fetch.sh SUITE CACHE_DIR}
mkdir -p "$cache"
cache=$(realpath "$cache")	# apt takes a relative Dir:: setting as under /etc/apt
# The suites the stage runs by default share one configuration, so one update serves
# them all; a suite asked for beyond them is added.
SUITES="bullseye bookworm bookworm-backports trixie-backports"

die() {
	echo "kernels: $suite: $*" >&2
	exit 1
}

. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/apt-sources.sh"

apt=$cache/apt
mkdir -p "$apt/sources" "$apt/preference-parts" "$apt/lists/partial" "$apt/cache/archives/partial" \
	"$cache/debs"
: >"$apt/preferences"
: >"$apt/status"

main=$(debian_source bookworm) ||
	die "no apt source serves Debian bookworm main (in $APT_DIR): the kernels' archive is unknown"
security=$(debian_source bookworm-security) || security=
case " $SUITES " in *" ${suite%-security} "*) ;; *) SUITES="$SUITES ${suite%-security}" ;; esac
# A security suite asked for is served where bookworm-security is.
security_suites=bookworm-security
case $suite in
*-security) [ "$suite" = bookworm-security ] || security_suites="$security_suites $suite" ;;
esac

# Debian's archive keyring holds the keys of every release it is signed for, trixie's
# included; a source's own Signed-By may name a keyring of bookworm's keys only.
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring missing (package debian-archive-keyring)"
{
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$(printf '%s' "$main" | cut -f1)" "$SUITES" "$keyring"
	if [ -n "$security" ]; then
		printf '\nTypes: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
			"$(printf '%s' "$security" | cut -f1)" "$security_suites" "$keyring"
	fi
} >"$apt/kernels.sources.new"

# Everything apt reads or writes is ours: sources, lists, cache, no preferences, an empty dpkg
# status (nothing is installed here), no lock; no directory named *.d, which the Makefile
# takes for dependency files. Root downloads as root: the _apt user cannot write into a build
# directory.
APT_OPTS=(-q -o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/sources"
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o "Dir::Etc::Preferences=$apt/preferences" -o "Dir::Etc::PreferencesParts=$apt/preference-parts"
	-o "Dir::State::status=$apt/status" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
	-o "Acquire::Languages=none")

stamp=$apt/lists/.updated
if ! cmp -s "$apt/kernels.sources.new" "$apt/sources/kernels.sources" ||
	[ -z "$(find "$stamp" -mmin -"${KERNELS_LISTS_MAX_AGE:-360}" 2>/dev/null)" ]; then
	mv "$apt/kernels.sources.new" "$apt/sources/kernels.sources"
	apt-get "${APT_OPTS[@]}" update >"$apt/update.log" 2>&1 ||
		die "apt-get update failed: $(apt_error "$apt/update.log")"
	touch "$stamp"
else
	rm -f "$apt/kernels.sources.new"
fi

# The first error of apt's log FILE, else its last line.
apt_error() {
	grep -m1 -E '^(E|Err):' "$1" || tail -n 1 "$1"
}

# The lists' record of package PKG (a name/suite or name=version); empty when unknown.
record() {
	apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" 2>/dev/null || true
}

# Field FIELD of the record on stdin.
field() {
	awk -v f="$1:" '$1 == f { sub(/^[^:]*: */, ""); print; exit }'
}

# The dependency whose name starts with PREFIX in the record on stdin, as "NAME=VERSION" (its
# "(= VERSION)").
depend() {
	field Depends | tr ',|' '\n\n' |
		awk -v p="$1" '{ gsub(/^ +| +$/, "") } index($1, p) == 1 {
			v = $0; sub(/.*\(= */, "", v); sub(/\).*/, "", v)
			print $1 "=" v; exit }'
}

meta=linux-image-cloud-amd64/$suite
meta_record=$(record "$meta")
version=$(field Version <<<"$meta_record")
# Where this machine gets the suite's security updates (bookworm-security), the kernel a system
# of that suite runs is the newer of the two.
security_record=$(record "$meta-security")
security_version=$(field Version <<<"$security_record")
if [ -n "$security_version" ] &&
	dpkg --compare-versions "$security_version" gt "${version:-0}"; then
	meta_record=$security_record
	version=$security_version
fi
[ -n "$version" ] || die "no $meta in the lists (is $suite a suite of Debian's archive?)"
image=$(depend linux-image- <<<"$meta_record")
[ -n "$image" ] || die "$meta $version depends on no linux-image- package"

# The member of DEB that is the kernel image: boot/vmlinuz-RELEASE, or
# usr/lib/modules/RELEASE/vmlinuz in the packages that moved it there.
vmlinuz_member() {
	dpkg-deb --fsys-tarfile "$1" | tar -t |
		awk '!f && /^\.\/(boot\/vmlinuz-[^\/]+|(usr\/)?lib\/modules\/[^\/]+\/vmlinuz)$/ { print; f = 1 }'
}

# Downloads PKG=VERSION into the cache unless there; prints the .deb's path.
download() {
	local deb
	deb=$cache/debs/$(printf '%s' "$1" | sed 's/=/_/; s/:/%3a/g')_amd64.deb
	if [ ! -s "$deb" ]; then
		(cd "$cache/debs" && apt-get "${APT_OPTS[@]}" download "$1" >"$cache/debs/download.log" 2>&1) ||
			die "apt-get download $1 failed: $(apt_error "$cache/debs/download.log")"
		[ -s "$deb" ] || deb=$(ls -t "$cache/debs/${1%%=*}"_*.deb | head -n 1)
	fi
	printf '%s\n' "$deb"
}

# An image resolved before is not looked for again in its packages.
known=$cache/resolved/$image
if [ -s "$known" ] && [ -s "$(cut -d' ' -f3 "$known")" ]; then
	cat "$known"
	exit 0
fi

deb=$(download "$image")
member=$(vmlinuz_member "$deb")
if [ -z "$member" ]; then
	# Debian 13's image package is split: the kernel itself is in its linux-binary- package.
	binary=$(record "$image" | depend linux-binary-)
	[ -n "$binary" ] || die "${image%%=*} holds no vmlinuz and depends on no linux-binary- package"
	deb=$(download "$binary")
	member=$(vmlinuz_member "$deb")
	[ -n "$member" ] || die "neither ${image%%=*} nor ${binary%%=*} holds a vmlinuz"
fi
case $member in
*/vmlinuz) release=$(basename "$(dirname "$member")") ;;
*) release=${member##*/vmlinuz-} ;;
esac
out=$cache/vmlinuz-$release
if [ ! -s "$out" ]; then
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$member" >"$out.tmp" ||
		die "cannot extract $member from $deb"
	mv "$out.tmp" "$out"
fi
mkdir -p "$cache/resolved"
printf '%s %s %s\n' "$release" "$version" "$out" | tee "$known"
