# apt-sources.sh - where this machine gets Debian from, read from apt's own configuration, for
# the scripts that need Debian's archive without naming a host: scripts/deps.sh (its
# bookworm-backports source) and tests/kernels/fetch.sh (Debian's kernel packages). Sourced by
# bash; APT_DIR (default /etc/apt) is the configuration read. A mirror, a proxy or a snapshot
# all work: whatever serves Debian's bookworm here serves the other suites of its archive.

APT_DIR=${APT_DIR:-/etc/apt}

# Every enabled source of apt's configuration but the files given, one per URI and suite:
#   TYPE <tab> URI <tab> SUITE <tab> SIGNED-BY (lines joined by \001, or empty) <tab> COMPONENTS
# Both formats: one-line .list and deb822 .sources.
apt_sources() {
	local files=() f skip
	[ -f "$APT_DIR/sources.list" ] && files+=("$APT_DIR/sources.list")
	for f in "$APT_DIR"/sources.list.d/*.list "$APT_DIR"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		for skip in "$@"; do [ "$f" = "$skip" ] && continue 2; done
		files+=("$f")
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

# Whether apt's last update found Debian's own archive at URI for SUITE: the Release file it
# keeps says "Origin: Debian". Unknown (false) before any update.
is_debian() {
	local name
	name=$(printf '%s' "$1" | sed 's|^[a-z+]*://||; s|/*$||; s|/|_|g; s|:|%3a|g')
	grep -qs '^Origin: Debian$' "/var/lib/apt/lists/${name}_dists_$2_InRelease" \
		"/var/lib/apt/lists/${name}_dists_$2_Release"
}

# The source of Debian's SUITE (main), as "URI <tab> SIGNED-BY" (the apt_sources fields);
# nothing, and status 1, when no source serves it. Files given are left out. A third-party
# archive can name a suite bookworm too (with component main even), so among the candidates
# the one apt knows as Debian's wins, then one whose path ends in /debian, then the first.
debian_source() {
	local suite=$1 candidates line pick=
	shift
	candidates=$(apt_sources "$@" |
		awk -F '\t' -v s="$suite" '$1 == "deb" && $3 == s && (" " $5 " ") ~ / main /')
	while IFS= read -r line; do
		[ -n "$line" ] && is_debian "$(printf '%s' "$line" | cut -f2)" "$suite" && { pick=$line; break; }
	done <<<"$candidates"
	[ -n "$pick" ] || pick=$(printf '%s\n' "$candidates" | awk -F '\t' '$2 ~ /\/debian\/?$/ { print; exit }')
	[ -n "$pick" ] || pick=$(printf '%s\n' "$candidates" | head -n 1)
	[ -n "$pick" ] || return 1
	printf '%s\n' "$pick" | cut -f2,4
}
