#!/bin/bash
# Mutation check: apply each ci/mutants/*.patch to the tree (a deliberate
# bug in the kernel code or the fixture), run the KUnit suites, and require
# that every case named in its "Expect-fail:" lines fails.  The tree is
# restored after each mutant.  "Arch:" and "Variant:" lines pick the kernel
# (default x86_64, default).  Prints "mutants: N passed, N failed".
# MUTANTS="0008 0009" runs only the mutants whose names start so.
# A mutant with a "Slow:" line (its reason) is left out of the run unless
# MUTANTS names it or MUTANTS_SLOW=1.
. "$(dirname "$0")/lib.sh"

"$TOP/ci/tree.sh"
restore() {
	git -C "$TREE" checkout -q -- .
	"$TOP/ci/tree.sh" >/dev/null 2>&1
}
trap restore EXIT

passed=0 failed=0
for m in "$TOP"/ci/mutants/*.patch; do
	[ -e "$m" ] || continue
	name=$(basename "$m" .patch)
	if [ -n "${MUTANTS:-}" ]; then
		sel=0
		for p in $MUTANTS; do
			case $name in "$p"*) sel=1 ;; esac
		done
		[ $sel = 1 ] || continue
	fi
	slow=$(sed -n 's/^Slow: *//p' "$m" | head -1)
	if [ -n "$slow" ] && [ -z "${MUTANTS:-}" ] && [ "${MUTANTS_SLOW:-0}" != 1 ]; then
		echo "  skip  $name: slow ($slow); MUTANTS_SLOW=1 runs it"
		continue
	fi
	arch=$(sed -n 's/^Arch: *//p' "$m" | head -1)
	variant=$(sed -n 's/^Variant: *//p' "$m" | head -1)
	variant=${variant:-default}
	mapfile -t expect < <(sed -n 's/^Expect-fail: *//p' "$m")
	[ ${#expect[@]} -gt 0 ] || die "$name has no Expect-fail: line"
	log "mutant $name ($arch, $variant)"
	if ! (cd "$TREE" && patch -p1 -s --no-backup-if-mismatch < "$m"); then
		echo "  FAIL  $name: does not apply to the tree"
		failed=$((failed + 1))
		restore
		continue
	fi
	SKIP_TREE=1 RERUN_MISSING=0 RESULT_NAME="mutant-$name" "$TOP/ci/kunit.sh" "${arch:-x86_64}" "$variant" >/dev/null 2>&1 || true
	res=$BUILD/results/mutant-$name.json
	got=$(python3 "$TOP/ci/kunit_results.py" failed "$res" 2>/dev/null || true)
	survived=()
	for e in "${expect[@]}"; do
		grep -qxF "$e" <<<"$got" || survived+=("$e")
	done
	if [ ! -s "$res" ]; then
		echo "  FAIL  $name: the mutated kernel did not build or run (see $BUILD/results/mutant-$name.log)"
		failed=$((failed + 1))
	elif [ ${#survived[@]} -eq 0 ]; then
		echo "  ok    $name: killed by ${expect[*]}"
		# How fast the random traces found it: their first failure.
		first=$(grep -m1 -E '^seed 0x[0-9a-f]+, .*, step [0-9]+ ' "$BUILD/results/mutant-$name.log" 2>/dev/null || true)
		[ -z "$first" ] || echo "        first failing random trace: $first"
		passed=$((passed + 1))
	else
		echo "  FAIL  $name: survived in ${survived[*]}"
		failed=$((failed + 1))
	fi
	restore
done
echo "mutants: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
