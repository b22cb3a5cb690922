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

# The two tiers of the test (ci/matrix.sh).  The gate (make test, what
# .ci/run runs) must finish within 45 minutes on a new 2-core machine with
# an empty ccache: a 64-bit and a 32-bit arch in both variants, and the
# mutants marked "Tier: gate".  The full tier (make test-full) runs every
# arch, every variant of kunitconfigs/variant/, the selftests and every
# mutant.
ALL_ARCHES="x86_64 arm64 i386 arm"
GATE_ARCHES="x86_64 i386"
GATE_VARIANTS="default no_page_mapcount"
# The consumer path (ci/consumer.sh: git am of patches/ alone and the cover
# letter's kunit.py command) as ARCH/VARIANT rows: one build each.
GATE_CONSUMER_ROWS="x86_64/default"
FULL_CONSUMER_ROWS="x86_64/default x86_64/no_page_mapcount arm64/default i386/default arm/default"

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

# write_cover_letter TREE DIR: write DIR/0000-cover-letter.patch, the cover
# letter of the series TREE holds on top of 'pristine', as git format-patch
# --cover-letter writes it, filled in by ci/cover_letter.py from
# patches/cover-letter.txt, the patches and bench/results/bench.md.  Its
# date is the last patch's, so that it re-exports byte for byte.
COVER_LETTER=0000-cover-letter.patch
write_cover_letter() {
	local tree=$1 dir=$2 tmp date p patches=()
	tmp=$(mktemp -d)
	git -C "$tree" "${FORMAT_PATCH[@]}" --cover-letter -o "$tmp" pristine..HEAD
	date=$(git -C "$tree" log -1 --format=%aD HEAD)
	sed -i "0,/^Date: /s/^Date: .*/Date: $date/" "$tmp/$COVER_LETTER"
	for p in "$tmp"/*.patch; do
		[ "$p" = "$tmp/$COVER_LETTER" ] || patches+=("$p")
	done
	python3 "$TOP/ci/cover_letter.py" "$tmp/$COVER_LETTER" "$TOP/patches/cover-letter.txt" \
		"$TOP/bench/results/bench.md" "${patches[@]}" ||
		{ rm -rf "$tmp"; die "writing the cover letter failed"; }
	mv "$tmp/$COVER_LETTER" "$dir/$COVER_LETTER"
	rm -rf "$tmp"
}

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

# --- The kunit.py options of the project's kernels, composed here only ---
# (ci/kunit.sh, ci/selftests_kernels.sh, ci/bench.sh and, through
# ci/kunit.sh, the mutants and the CI workflow use these.)

# cross_compile ARCH: the cross compiler prefix (empty: the host's gcc).
cross_compile() {
	case $1 in
	x86_64|i386) echo ;;
	arm64)       echo aarch64-linux-gnu- ;;
	arm)         echo arm-linux-gnueabihf- ;;
	*)           die "unknown ARCH '$1' (x86_64, arm64, i386 or arm)" ;;
	esac
}

# kunit_tree_configs: the .kunitconfig files that the series adds beside
# its suites (mm/tests/, fs/proc/tests/, kernel/tests/), as paths in $TREE,
# for the commit $TREE has checked out.  They hold what the suites need;
# kunitconfigs/ holds only what the project adds on top.
kunit_tree_configs() {
	git -C "$TREE" diff --name-only --diff-filter=A pristine HEAD -- '*/.kunitconfig' |
		sed "s|^|$TREE/|"
}

# kunit_config_files ARCH VARIANT: the Kconfig fragments of the matrix's
# kernel, in order: the tree's .kunitconfig files (kunit_tree_configs), then
# the project's own: common, the arch's, every kunitconfigs/extra/ fragment
# whose "# Arches:" line names ARCH, the variant's.
kunit_config_files() {
	local arch=$1 variant=$2 cfg=$TOP/kunitconfigs f only
	[ -f "$cfg/arch/$arch.config" ] || die "no kunitconfigs/arch/$arch.config"
	[ -f "$cfg/variant/$variant.config" ] ||
		die "unknown VARIANT '$variant' (have: $(cd "$cfg/variant" && ls | sed 's/\.config$//' | xargs))"
	kunit_tree_configs
	echo "$cfg/common.config"
	echo "$cfg/arch/$arch.config"
	for f in "$cfg"/extra/*.config; do
		[ -e "$f" ] || continue
		only=$(sed -n 's/^# Arches: *//p' "$f" | head -1)
		case " $only " in *" $arch "*) echo "$f" ;; esac
	done
	echo "$cfg/variant/$variant.config"
}

# kunit_build_args ARCH: how kunit.py builds for ARCH (one per line).
kunit_build_args() {
	local cross
	cross=$(cross_compile "$1")
	echo "--arch=$1"
	echo "--jobs=$(nproc)"
	echo "--make_options=CC=ccache ${cross}gcc"
	echo "--make_options=HOSTCC=ccache gcc"
	[ -z "$cross" ] || echo "--cross_compile=$cross"
}

# kunit_run_args ARCH: what QEMU and the kernel get (one per line).
#  -smp 4: the folio_owner_concurrency suite runs kthreads on several CPUs
#   (SMP=y itself, which bit_spin_lock() needs to take a lock at all,
#   comes from the suites' .kunitconfig files).
#  tsc=unstable (x86): under TCG the TSC's refined calibration finishes a
#   second or more into the boot, while the suites run, and its two
#   messages ("tsc: Refined TSC clocksource calibration", "clocksource:
#   Switched to clocksource tsc") landed inside the KTAP output, where
#   kunit.py took them for missing subtests.  Without the TSC the kernel
#   settles on its clocksource before the suites start.
kunit_run_args() {
	echo "--qemu_args=-smp 4 -m 1024"
	case $1 in x86_64|i386) echo "--kernel_args=tsc=unstable" ;; esac
}

