#!/bin/bash
# The consumer path: what a reviewer, a distribution or a test bot does with
# the series and nothing else of this project.  A new worktree of the
# pristine tree, `git am` of the patches that patches/series names, then the
# kunit.py command line of the cover letter, verbatim, plus a build
# directory and ccache.  The cover letter (patches/cover-letter.txt) gives
# the x86_64 command as a block starting "$ ./tools/testing/kunit/kunit.py
# run", the lines that replace its arch-specific lines for the other
# arches ("  arm64:  --arch=arm64 ..."), and the option of the second
# variant; this script reads all three from there.
# It passes when kunit.py passes with no kernel warning and, once the
# matrix's row of the same ARCH and VARIANT has run on the current series
# (ci/kunit.sh), when both ran the same cases (the cover letter's command
# also runs the cases marked slow, which the matrix leaves out) and none
# the matrix ran was skipped here: the project's fragments add options,
# never cases.
# Usage: ci/consumer.sh [ARCH [VARIANT]]    (default: x86_64 default)
# DRY_RUN=1 prints the command line read from the cover letter and stops.
# Writes $BUILD/results/consumer-ARCH-VARIANT.{json,log,counts}.
. "$(dirname "$0")/lib.sh"

arch=${1:-x86_64}
variant=${2:-default}
case $variant in
default|no_page_mapcount) ;;
*) die "the cover letter gives the default and the no_page_mapcount variants, not '$variant'" ;;
esac
git -C "$TREE" rev-parse -q --verify pristine >/dev/null || die "no tree at $TREE: run 'make tree' first"
letter=$TOP/patches/cover-letter.txt

# lines_of REGEX: the cover letter's line matching REGEX and the lines that
# continue it (trailing backslash), joined, the REGEX part removed.
lines_of() {
	awk -v re="$1" '!on && $0 ~ re { on = 1; sub(re, "") }
		on { line = $0; sub(/^ */, "", line); cont = sub(/ *\\$/, "", line)
		     printf "%s ", line; if (!cont) exit }' "$letter"
}
cmd=() arch_args=()
eval "cmd=($(lines_of '^ *\$ '))"
if [ "${cmd[0]:-}" != ./tools/testing/kunit/kunit.py ] || [ "${cmd[1]:-}" != run ]; then
	die "cannot read the cover letter's command line (a block starting '\$ ./tools/testing/kunit/kunit.py run')"
fi
if [ "$arch" != x86_64 ]; then
	eval "arch_args=($(lines_of "^  $arch: "))"
	[ "${arch_args[0]:-}" = "--arch=$arch" ] ||
		die "the cover letter has no '  $arch:  --arch=$arch ...' line"
	# The common options are those before the x86_64 command's --arch=.
	common=()
	for a in "${cmd[@]}"; do
		[ "$a" = --arch=x86_64 ] && break
		common+=("$a")
	done
	cmd=("${common[@]}" "${arch_args[@]}")
fi
if [ "$variant" = no_page_mapcount ]; then
	grep -q -- '--kconfig_add CONFIG_NO_PAGE_MAPCOUNT=y for the second variant' "$letter" ||
		die "the cover letter does not say how to build the second variant"
	cmd+=(--kconfig_add CONFIG_NO_PAGE_MAPCOUNT=y)
fi

if [ "${DRY_RUN:-0}" = 1 ]; then	# print the command line and stop
	printf '%q ' "${cmd[@]}"
	echo
	exit 0
fi

WT=$BUILD/consumer/linux
OUT=$BUILD/consumer/$arch-$variant
res=$BUILD/results/consumer-$arch-$variant
mkdir -p "$BUILD/consumer" "$BUILD/results" "$CCACHE_DIR"
rm -f "$res".json "$res".log "$res".counts "$res".slow "$res".cases "$res".matrix-cases
git -C "$TREE" worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"
git -C "$TREE" worktree prune
git -C "$TREE" worktree add -q --detach "$WT" pristine
mapfile -t patches < <(series_patches)
log "consumer path: git am of ${#patches[@]} patches onto a pristine worktree ($WT)"
git -C "$WT" -c user.name="Folio Owner Project" -c user.email=devel@folio-owner.invalid \
	am -q "${patches[@]}" || die "git am of the series failed in $WT"
# Nothing but the series: the worktree must be clean after git am.
[ -z "$(git -C "$WT" status --porcelain --ignored=no)" ] || die "$WT is not clean after git am"

cross=$(cross_compile "$arch")
args=("${cmd[@]:1}" --build_dir="$OUT" --jobs="$(nproc)" --timeout=600 --json="$res.json"
      "--make_options=CC=ccache ${cross}gcc" "--make_options=HOSTCC=ccache gcc")
log "consumer path $arch/$variant: ${cmd[*]}"
start=$(now)
rm -f "$OUT/test.log"
rc=0
(cd "$WT" && python3 "${cmd[0]}" "${args[@]}") || rc=$?
cp "$OUT/test.log" "$res.log" 2>/dev/null || : > "$res.log"
python3 "$TOP/ci/kunit_results.py" counts "$res.json" > "$res.counts" 2>/dev/null || echo "0 0 0" > "$res.counts"
read -r passed failed skipped < "$res.counts"
log "consumer path $arch/$variant: $passed passed, $failed failed, $skipped skipped in $(( $(now) - start )) s"
[ "$rc" -eq 0 ] || die "the cover letter's kunit.py command failed on the git-am-only tree (log: $res.log)"
[ "$passed" -gt 0 ] || die "the cover letter's kunit.py command ran no case"
if grep -nE 'WARNING:|BUG:|Bad page|Kernel panic|Oops' "$res.log" >&2; then
	die "the kernel reported a problem (above; full log: $res.log)"
fi

matrix=$BUILD/results/$arch-$variant.json
stamp=$(git -C "$TREE" rev-parse --absolute-git-dir)/folio-owner-applied
if [ -f "$matrix" ] && [ "$matrix" -nt "$stamp" ] && [ ! -f "${matrix%.json}.filtered" ]; then
	# The matrix leaves out the cases marked slow (ci/kunit.sh without
	# SLOW=1); the kernel names them in its output ("# CASE.speed: slow").
	sed -n 's/^ *# \([A-Za-z0-9_]*\)\.speed: slow$/\1/p' "$res.log" | sort -u > "$res.slow"
	python3 "$TOP/ci/kunit_results.py" status "$matrix" | sort > "$res.matrix-cases"
	python3 "$TOP/ci/kunit_results.py" status "$res.json" | sort > "$res.cases"
	missing=$(join -v1 "$res.matrix-cases" "$res.cases" | cut -d' ' -f1)
	extra=$(join -v2 "$res.matrix-cases" "$res.cases" | cut -d' ' -f1 |
		awk -F. -v slow="$res.slow" 'BEGIN { while ((getline c < slow) > 0) s[c] } !($2 in s)')
	# A case the matrix runs must not be skipped here: the cover letter's
	# command would then leave out what the matrix checks.
	skipped_here=$(join "$res.matrix-cases" "$res.cases" | awk '$2 != "SKIP" && $3 == "SKIP" { print $1 }')
	[ -z "$missing" ] || die "cases the matrix's $arch/$variant row ran and the consumer path did not:
$missing"
	[ -z "$extra" ] || die "cases the consumer path ran and the matrix's $arch/$variant row did not (not marked slow):
$extra"
	[ -z "$skipped_here" ] || die "cases the matrix's $arch/$variant row ran and the consumer path skipped:
$skipped_here"
	log "consumer path $arch/$variant: every case of the matrix's row ($(wc -l < "$res.matrix-cases")), none skipped that it ran, and $(wc -l < "$res.slow") slow one(s) the matrix leaves out"
else
	warn "no $matrix of a full run on the current series to compare the cases with (run ci/kunit.sh $arch $variant first)"
fi
