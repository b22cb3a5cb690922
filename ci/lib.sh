# shellcheck shell=bash
# Variables set here are used by the scripts that source this file:
# shellcheck disable=SC2034
# Common helpers for the ci/ scripts: sourced, not run.
# Every script takes its settings from the environment (the Makefile passes
# them): TOP (checkout), BUILD (build directory outside the checkout), TREE
# (the kernel tree inside BUILD), CCACHE_DIR.

set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$(cd "$TOP/.." && pwd)/folio-owner-build}
TREE=${TREE:-$BUILD/linux}
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/folio-owner-ccache}
# Hash paths relative to BUILD, not the cwd: a checkout (and its BUILD)
# elsewhere, such as CI's fresh clone, reuses the same cache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
SOURCE_TARBALL=${SOURCE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
SOURCE_PACKAGE=linux-source-6.12

# Where the KUnit tests from kunit/ are installed inside the tree.
KUNIT_TREE_DIR=mm/tests

# The two tiers of the test (ci/matrix.sh).  The gate (make test, what
# .ci/run runs) must finish within 45 minutes on a new 2-core machine with
# an empty ccache: a 64-bit and a 32-bit arch in both variants, and the
# mutants marked "Tier: gate".  The full tier (make test-full) runs every
# arch, every variant of kunitconfigs/variant/, the selftests and every
# mutant.
ALL_ARCHES="x86_64 arm64 i386 arm"
GATE_ARCHES="x86_64 i386"
GATE_VARIANTS="default no_page_mapcount"

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# The patches named in patches/series, in order, as paths.
series_patches() {
	local line
	[ -f "$TOP/patches/series" ] || die "patches/series is missing"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(echo "$line" | xargs)
		[ -n "$line" ] || continue
		[ -f "$TOP/patches/$line" ] || die "patches/series names $line, which is not in patches/"
		echo "$TOP/patches/$line"
	done < "$TOP/patches/series"
}

# A digest of the series (names and contents, in order).
series_digest() {
	local p
	{ series_patches | while read -r p; do basename "$p"; cat "$p"; done; } |
		sha256sum | cut -d' ' -f1
}

# Seconds since the epoch, for timings.
now() { date +%s; }

# How patches are exported: ci/series.sh writes them, ci/check-series.sh
# re-exports and compares byte for byte, so both must use exactly these.
FORMAT_PATCH=(format-patch -q --zero-commit --no-signature --full-index)

# Stock 6.12 for side-by-side runs (make bench, make selftests): the
# tree's 'pristine' commit exported to $BUILD/linux-stock, once per commit.
STOCK=$BUILD/linux-stock
export_stock() {
	local pristine
	pristine=$(git -C "$TREE" rev-parse pristine) || die "the tree $TREE has no 'pristine' tag: run make tree"
	[ "$(cat "$STOCK/.pristine" 2>/dev/null)" = "$pristine" ] && return
	log "exporting the pristine 6.12 tree (commit 'pristine' of $TREE) to $STOCK"
	rm -rf "$STOCK"
	mkdir -p "$STOCK"
	git -C "$TREE" archive pristine | tar -x -C "$STOCK" || die "exporting the pristine tree failed"
	echo "$pristine" > "$STOCK/.pristine"
}
