#!/bin/bash
# Mainline for comparison: fetch Debian's linux-source-7.3 (upstream's MM
# owner tracking, natively) with apt into a private state directory under
# $BUILD (its own sources list naming MAINLINE_SUITE on the Debian mirror
# the machine's apt sources use; the system's apt configuration is not
# touched), extract it to $BUILD/mainline/linux, and compare every item the
# series changes with mainline's (ci/mainline_diff.py).
# Usage: ci/mainline.sh [fetch]    fetch: only fetch and extract
# Settings: MAINLINE_PACKAGE (linux-source-7.3), MAINLINE_SUITE
# (trixie-backports).
. "$(dirname "$0")/lib.sh"

PKG=${MAINLINE_PACKAGE:-linux-source-7.3}
SUITE=${MAINLINE_SUITE:-trixie-backports}
M=$BUILD/mainline
APT=$M/apt
MTREE=$M/linux

# The Debian mirror of the machine's own apt sources (deb822 or one-line).
mirror() {
	local f u
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		u=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /security/) { print $i; exit } else break } }' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
	die "no Debian mirror found in the machine's apt sources (/etc/apt/sources.list*)"
}

fetch() {
	local deb url opts
	[ -f "$MTREE/.extracted" ] && [ "$(cat "$MTREE/.extracted")" = "$PKG" ] && return
	command -v apt-get >/dev/null || die "apt-get is needed to fetch $PKG"
	url=$(mirror)
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/debs"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $url $SUITE main" > "$APT/sources.list"
	opts=(-o Dir::Etc::SourceList="$APT/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	      -o Dir::State::Lists="$APT/lists" -o Dir::State::status=/var/lib/dpkg/status
	      -o Dir::Cache="$APT/cache" -o APT::Sandbox::User=root)
	log "fetching $PKG from $SUITE on the machine's Debian mirror (private apt state in $APT)"
	apt-get -q "${opts[@]}" update >"$APT/update.log" 2>&1 ||
		die "apt-get update of $SUITE failed (see $APT/update.log)"
	rm -f "$APT/debs/"*.deb
	(cd "$APT/debs" && apt-get -q "${opts[@]}" download "$PKG") >"$APT/download.log" 2>&1 ||
		die "$PKG is not in $SUITE, or the download failed (see $APT/download.log)"
	deb=$(ls "$APT/debs/"*.deb)
	log "extracting $(basename "$deb") into $MTREE"
	rm -rf "$M/deb" "$MTREE"
	mkdir -p "$M/deb" "$MTREE"
	dpkg-deb -x "$deb" "$M/deb" || die "dpkg-deb -x $deb failed"
	tar -xaf "$M"/deb/usr/src/linux-source-*.tar.* -C "$MTREE" --strip-components=1 ||
		die "extracting the source tarball of $PKG failed"
	rm -rf "$M/deb"
	echo "$PKG" > "$MTREE/.extracted"
	log "mainline: Linux $(make -s -C "$MTREE" kernelversion 2>/dev/null) in $MTREE"
}

fetch
[ "${1:-}" = fetch ] && exit 0
"$TOP/ci/tree.sh"
python3 "$TOP/ci/mainline_diff.py" "$TREE" pristine "$MTREE" "$BUILD/results/mainline-diff"
