#!/usr/bin/env bash
# Installs every Debian 12 package lxtrace needs to build, test, benchmark and view traces.
# Go 1.19 and Go 1.23 are the real trace viewers the tests run; 1.23 lives in bookworm-backports.
# Their profile pages draw graphs with graphviz's dot (without it they answer 500); chromium
# shows their timelines headless in the viewer tests and bench/view.sh.
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

# Every enabled source of apt's configuration but ours, one per URI and suite:
#   TYPE <tab> URI <tab> SUITE <tab> SIGNED-BY (lines joined by \001, or empty) <tab> COMPONENTS
apt_sources() {
	local files=()
	[ -f "$APT_DIR/sources.list" ] && files+=("$APT_DIR/sources.list")
	for f in "$APT_DIR"/sources.list.d/*.list "$APT_DIR"/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$OURS" ] && [ "$f" != "$OURS_OLD" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || return 0
	awk '
	function flush(   nt, nu, ns, i, j, k, t, u, s) {
		if (!(enabled == "" || tolower(enabled) == "yes") || types == "") {
			reset(); return
		}
		nt = split(types, t, /[ \t]+/); nu = split(uris, u, /[ \t]+/); ns = split(suites, s, /[ \t]+/)
		for (i = 1; i <= nt; i++) for (j = 1; j <= nu; j++) for (k = 1; k <= ns; k++)
			if (t[i] != "" && u[j] != "" && s[k] != "")
				printf "%s\t%s\t%s\t%s\t%s\n", t[i], u[j], s[k], signed, comps
		reset()
	}
	function reset() { types = uris = suites = signed = enabled = comps = key = "" }
	FNR == 1 { flush(); deb822 = FILENAME ~ /\.sources$/ }
	# One-line format: TYPE [OPTIONS] URI SUITE [COMPONENT...]
	!deb822 {
		sub(/#.*/, "")
		if ($1 != "deb" && $1 != "deb-src") next
		line = $0; opts = ""
		if (match(line, /\[[^]]*\]/)) {
			opts = substr(line, RSTART + 1, RLENGTH - 2)
			line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
		}
		n = split(line, w, /[ \t]+/)
		for (i = 1; i <= n && w[i] == ""; i++) ;
		type = w[i]; uri = w[i + 1]; suite = w[i + 2]
		comps = ""
		for (j = i + 3; j <= n; j++)
			comps = comps (comps == "" ? "" : " ") w[j]
		signed = ""
		m = split(opts, o, /[ \t]+/)
		for (i = 1; i <= m; i++)
			if (tolower(o[i]) ~ /^signed-by=/)
				signed = substr(o[i], 11)
		if (uri != "" && suite != "")
			printf "%s\t%s\t%s\t%s\t%s\n", type, uri, suite, signed, comps
		next
	}
	# deb822: stanzas of "Key: value" fields, continued on lines that start with a blank.
	/^[ \t]*$/ { flush(); next }
	/^#/ { next }
	/^[ \t]/ {
		if (key == "signed-by") { v = $0; sub(/^[ \t]+/, "", v); signed = signed "\001" v }
		next
	}
	{
		key = tolower($0); sub(/:.*/, "", key)
		v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
		if (key == "types") types = v
		else if (key == "uris") uris = v
		else if (key == "suites") suites = v
		else if (key == "signed-by") signed = v
		else if (key == "components") comps = v
		else if (key == "enabled") enabled = v
	}
	END { flush() }
	' "${files[@]}"
}

# Whether apt's last update found Debian's own archive at URI for suite bookworm: the Release
# file it keeps says "Origin: Debian". Unknown (false) before any update.
is_debian() {
	local name
	name=$(printf '%s' "$1" | sed 's|^[a-z+]*://||; s|/*$||; s|/|_|g; s|:|%3a|g')
	grep -qs '^Origin: Debian$' "/var/lib/apt/lists/${name}_dists_bookworm_InRelease" \
		"/var/lib/apt/lists/${name}_dists_bookworm_Release"
}

# The deb822 stanza of bookworm-backports, from the source that serves Debian's bookworm;
# nothing when another source already has bookworm-backports. Fails when no source serves
# bookworm. A third-party archive can name a suite bookworm too (with component main even), so
# among the candidates the one apt knows as Debian's wins, then one whose path ends in /debian.
backports_stanza() {
	local sources candidates pick uri signed
	sources=$(apt_sources)
	if printf '%s\n' "$sources" | awk -F '\t' '$1 == "deb" && $3 == "bookworm-backports" { f = 1 } END { exit !f }'; then
		return 0
	fi
	candidates=$(printf '%s\n' "$sources" | awk -F '\t' '$1 == "deb" && $3 == "bookworm" && (" " $5 " ") ~ / main /')
	while IFS= read -r line; do
		[ -n "$line" ] && is_debian "$(printf '%s' "$line" | cut -f2)" && { pick=$line; break; }
	done <<<"$candidates"
	[ -n "${pick:-}" ] || pick=$(printf '%s\n' "$candidates" | awk -F '\t' '$2 ~ /\/debian\/?$/ { print; exit }')
	[ -n "${pick:-}" ] || pick=$(printf '%s\n' "$candidates" | head -n 1)
	uri=$(printf '%s' "$pick" | cut -f2)
	signed=$(printf '%s' "$pick" | cut -f4)
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
	libcriterion-dev systemtap-sdt-dev \
	golang-go linux-perf trace-cmd python3 procps gdb bpftrace \
	graphviz chromium curl
apt-get install -y -q --no-install-recommends -t bookworm-backports golang-1.23-go
