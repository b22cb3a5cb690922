#!/bin/bash
# Mutation check: apply each ci/mutants/*.patch to the tree (a deliberate
# bug in the kernel code or the fixture), run the KUnit suites, and require
# that every case named in its "Expect-fail:" lines fails.  The tree is
# restored after each mutant.  "Arch:" and "Variant:" lines pick the kernel
# (default x86_64, default).  Prints "mutants: N passed, N failed".
# MUTANTS="0008 0009" runs only the mutants whose names start so.
# A mutant with a "Slow:" line (its reason) is left out of the run unless
# MUTANTS names it or MUTANTS_SLOW=1.  MUTANTS_TIER=gate runs only the
# mutants with a "Tier: gate" line (make test); a mutant whose named cases
# are all in one suite runs that suite alone.  A mutant with a "Check:
# SCRIPT" line instead of "Expect-fail:" lines (Kconfig, which no KUnit
# case sees) is killed when ci/SCRIPT fails on the mutated tree.
. "$(dirname "$0")/lib.sh"

"$TOP/ci/tree.sh"
restore() {
	git -C "$TREE" checkout -q -- .
	"$TOP/ci/tree.sh" >/dev/null 2>&1
}
trap restore EXIT

# run_mutant NAME ARCH VARIANT [SUITE]: build the mutated tree and run its
# suites (only SUITE if given); results in $BUILD/results/mutant-NAME.*
run_mutant() {
	SKIP_TREE=1 RERUN_MISSING=0 RESULT_NAME="mutant-$1" \
		KUNIT_ARGS="${4:-}" \
		"$TOP/ci/kunit.sh" "$2" "$3" >/dev/null 2>&1 || true
}

# classify JSON CASE...: add each CASE to killed (it failed), survived
# (passed or skipped) or missing (not in the results; missing is reset).
classify() {
	local json=$1 c st
	shift
	st=$(python3 "$TOP/ci/kunit_results.py" status "$json" 2>/dev/null || true)
	missing=()
	for c in "$@"; do
		case $(awk -v c="$c" '$1 == c { print $2 }' <<<"$st") in
		FAIL) killed+=("$c") ;;
		PASS|SKIP) survived+=("$c") ;;
		*) missing+=("$c") ;;
		esac
	done
}

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
	if [ "${MUTANTS_TIER:-}" = gate ] && [ -z "${MUTANTS:-}" ] &&
	   ! grep -q '^Tier: *gate' "$m"; then
		continue
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
	check=$(sed -n 's/^Check: *//p' "$m" | head -1)
	[ ${#expect[@]} -gt 0 ] || [ -n "$check" ] || die "$name has no Expect-fail: or Check: line"
	log "mutant $name (${arch:-x86_64}, $variant)"
	if ! (cd "$TREE" && patch -p1 -s --no-backup-if-mismatch < "$m"); then
		echo "  FAIL  $name: does not apply to the tree"
		failed=$((failed + 1))
		restore
		continue
	fi
	# A mutant of something no KUnit case sees (Kconfig) names a ci/ check
	# that must fail on the mutated tree instead.
	if [ -n "$check" ]; then
		if "$TOP/$check" > "$BUILD/results/mutant-$name.log" 2>&1; then
			echo "  FAIL  $name: survived: $check passed on the mutated tree"
			failed=$((failed + 1))
		else
			echo "  ok    $name: killed by $check"
			grep -E '^  FAIL' "$BUILD/results/mutant-$name.log" | head -3 | sed 's/^/        /'
			passed=$((passed + 1))
		fi
		restore
		continue
	fi
	suites=$(printf '%s\n' "${expect[@]}" | sed 's/\..*//' | sort -u)
	only=""
	[ "$(wc -l <<<"$suites")" -eq 1 ] && only=$suites
	run_mutant "$name" "${arch:-x86_64}" "$variant" "$only"
	res=$BUILD/results/mutant-$name
	if [ ! -s "$res.json" ]; then
		echo "  FAIL  $name: the mutated kernel did not build or run (see $res.log)"
		failed=$((failed + 1))
		restore
		continue
	fi
	killed=() survived=()
	classify "$res.json" "${expect[@]}"
	# A named case missing from the results did not run or was not
	# parsed (a crash, a hang, or kunit.py losing a line): run its
	# suites alone on the same kernel once, and judge from that run.
	if [ ${#missing[@]} -gt 0 ]; then
		echo "        not in the results: ${missing[*]}; running their suites alone"
		tail -5 "$res.log" | sed 's/^/        | /'
		suites=$(printf '%s\n' "${missing[@]}" | sed 's/\..*//' | sort -u)
		for s in $suites; do
			run_mutant "$name.rerun-$s" "${arch:-x86_64}" "$variant" "$s"
			rres=$BUILD/results/mutant-$name.rerun-$s.json
			[ -s "$rres" ] && classify "$rres" "${missing[@]}"
		done
	fi
	if [ ${#survived[@]} -eq 0 ] && [ ${#missing[@]} -eq 0 ]; then
		echo "  ok    $name: killed by ${expect[*]}"
		# How fast the random traces found it: their first failure.
		first=$(grep -m1 -E '^seed 0x[0-9a-f]+, .*, step [0-9]+ ' "$res.log" 2>/dev/null || true)
		[ -z "$first" ] || echo "        first failing random trace: $first"
		passed=$((passed + 1))
	else
		for c in "${survived[@]}"; do
			echo "  FAIL  $name: survived (passed or skipped) in $c:"
			grep -E "^ *(not )?ok [0-9]+ ${c#*.}\b|# ${c#*.}: pass:" "$res.log" |
				head -5 | sed 's/^/        | /'
		done
		[ ${#missing[@]} -eq 0 ] || echo "  FAIL  $name: never ran, even alone: ${missing[*]} (see $res.log)"
		failed=$((failed + 1))
	fi
	restore
done
echo "mutants: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
