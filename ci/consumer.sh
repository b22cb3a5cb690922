#!/bin/bash
# The consumer path: what a reviewer, a distribution or a test bot does with
# the series and nothing else of this project.  A new worktree of the
# pristine tree, `git am` of the patches that patches/series names, then the
# kunit.py command line of the cover letter (patches/cover-letter.txt, the
# block starting "$ ./tools/testing/kunit/kunit.py run"), verbatim, plus a
# build directory and ccache.  It passes when kunit.py passes, and, once the
# matrix's x86_64 default row has run (ci/kunit.sh), when both ran the same
# cases: the project's fragments add options, never cases.
# Writes $BUILD/results/consumer.{json,log,counts}.
. "$(dirname "$0")/lib.sh"

git -C "$TREE" rev-parse -q --verify pristine >/dev/null || die "no tree at $TREE: run 'make tree' first"

# The command line, from the cover letter's text: the lines of the block,
# joined at their trailing backslashes.
cmdline=$(awk '/^ *\$ \.\/tools\/testing\/kunit\/kunit\.py run/ { on = 1 }
	on { line = $0; sub(/^ *\$? */, "", line); cont = sub(/ *\\$/, "", line)
	     printf "%s ", line; if (!cont) exit }' "$TOP/patches/cover-letter.txt")
[ -n "$cmdline" ] || die "patches/cover-letter.txt has no '\$ ./tools/testing/kunit/kunit.py run' block"
cmd=()
eval "cmd=($cmdline)"
if [ "${cmd[0]:-}" != ./tools/testing/kunit/kunit.py ] || [ "${cmd[1]:-}" != run ]; then
	die "cannot read the cover letter's command line: $cmdline"
fi

WT=$BUILD/consumer/linux
OUT=$BUILD/consumer/build
res=$BUILD/results/consumer
mkdir -p "$BUILD/consumer" "$BUILD/results" "$CCACHE_DIR"
rm -f "$res".json "$res".log "$res".counts
git -C "$TREE" worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"
git -C "$TREE" worktree prune
git -C "$TREE" worktree add -q --detach "$WT" pristine
mapfile -t patches < <(series_patches)
log "consumer path: git am of ${#patches[@]} patches onto a pristine worktree ($WT)"
git -C "$WT" -c user.name="Folio Owner Project" -c user.email=devel@folio-owner.invalid \
	am -q "${patches[@]}" || die "git am of the series failed in $WT"
# Nothing but the series: the worktree must be clean after git am.
[ -z "$(git -C "$WT" status --porcelain --ignored=no)" ] || die "$WT is not clean after git am"

args=("${cmd[@]:1}" --build_dir="$OUT" --jobs="$(nproc)" --timeout=600 --json="$res.json"
      "--make_options=CC=ccache gcc" "--make_options=HOSTCC=ccache gcc")
log "consumer path: ${cmd[*]}"
start=$(now)
rc=0
(cd "$WT" && python3 "${cmd[0]}" "${args[@]}") || rc=$?
cp "$OUT/test.log" "$res.log" 2>/dev/null || : > "$res.log"
python3 "$TOP/ci/kunit_results.py" counts "$res.json" > "$res.counts" 2>/dev/null || echo "0 0 0" > "$res.counts"
read -r passed failed skipped < "$res.counts"
log "consumer path: $passed passed, $failed failed, $skipped skipped in $(( $(now) - start )) s"
[ "$rc" -eq 0 ] || die "the cover letter's kunit.py command failed on the git-am-only tree (log: $res.log)"
[ "$passed" -gt 0 ] || die "the cover letter's kunit.py command ran no case"
if grep -nE 'WARNING:|BUG:|Bad page|Kernel panic|Oops' "$res.log" >&2; then
	die "the kernel reported a problem (above; full log: $res.log)"
fi

matrix=$BUILD/results/x86_64-default.json
stamp=$(git -C "$TREE" rev-parse --absolute-git-dir)/folio-owner-applied
if [ -f "$matrix" ] && [ "$matrix" -nt "$stamp" ]; then
	# The matrix leaves out the cases marked slow (ci/kunit.sh without
	# SLOW=1); the kernel names them in its output ("# CASE.speed: slow").
	sed -n 's/^ *# \([A-Za-z0-9_]*\)\.speed: slow$/\1/p' "$res.log" | sort -u > "$res.slow"
	python3 "$TOP/ci/kunit_results.py" status "$matrix" | cut -d' ' -f1 | sort > "$res.matrix-cases"
	python3 "$TOP/ci/kunit_results.py" status "$res.json" | cut -d' ' -f1 | sort > "$res.cases"
	missing=$(comm -23 "$res.matrix-cases" "$res.cases")
	extra=$(comm -13 "$res.matrix-cases" "$res.cases" |
		awk -F. -v slow="$res.slow" 'BEGIN { while ((getline c < slow) > 0) s[c] } !($2 in s)')
	[ -z "$missing" ] || die "cases the matrix's x86_64 default row ran and the consumer path did not:
$missing"
	[ -z "$extra" ] || die "cases the consumer path ran and the matrix's x86_64 default row did not (not marked slow):
$extra"
	# A case the matrix runs must not be skipped here: the cover letter's
	# command would then leave out what the matrix checks.
	skipped_here=$(join <(python3 "$TOP/ci/kunit_results.py" status "$matrix" | sort) \
			    <(python3 "$TOP/ci/kunit_results.py" status "$res.json" | sort) |
		       awk '$2 != "SKIP" && $3 == "SKIP" { print $1 }')
	[ -z "$skipped_here" ] || die "cases the matrix's x86_64 default row ran and the consumer path skipped:
$skipped_here"
	log "consumer path: every case of the matrix's x86_64 default row ($(wc -l < "$res.matrix-cases")), and $(wc -l < "$res.slow") slow one(s) the matrix leaves out"
else
	warn "no $matrix of the current series to compare the cases with (run ci/kunit.sh x86_64 first)"
fi
